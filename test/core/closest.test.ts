/** The one "did you mean" rule (core/closest.ts), as every suggestion of toolgate uses it. */
import { describe, expect, it } from "vitest";
import { closest, suggester } from "../../src/core/closest.js";

const fields = ["customer_id", "status", "since", "limit"];

describe("closest", () => {
  it("suggests a name one typo away, and the same name written in another case or with other separators", () => {
    expect(closest("limt", fields)).toBe("limit");
    expect(closest("customerId", fields)).toBe("customer_id");
    expect(closest("CUSTOMER-ID", fields)).toBe("customer_id");
    expect(closest("sicne", fields)).toBe("since");
  });

  it("allows one edit per three characters sent, at least one", () => {
    expect(closest("statsu", fields)).toBe("status"); // a transposition: one edit of six characters
    expect(closest("stxtxs", fields)).toBe("status"); // two edits of six
    expect(closest("stxxxs", fields)).toBeUndefined(); // three edits of six
    expect(closest("lim", fields)).toBeUndefined(); // two edits of three: a part of a name is not a typo of it
  });

  it("answers nothing for a name too long to be a typo, or with no candidates", () => {
    expect(closest("x".repeat(201), ["x".repeat(201)])).toBeUndefined();
    expect(closest("limit", [])).toBeUndefined();
  });

  it("the first of equally close candidates wins", () => {
    expect(closest("redi", ["redis", "rediss"])).toBe("redis");
    expect(closest("cat", ["bat", "car"])).toBe("bat");
  });

  it("a suggester over fixed candidates answers as closest does", () => {
    const suggest = suggester(fields);
    for (const name of ["limt", "customerId", "stxxxs", "lim", "since"])
      expect(suggest(name)).toBe(closest(name, fields));
  });
});
