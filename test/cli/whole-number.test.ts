import { describe, expect, it } from "vitest";
import { wholeNumber } from "../../src/cli/whole-number.js";

describe("whole-number flags", () => {
  it("take decimal digits (blanks around allowed) from the floor up", () => {
    expect(wholeNumber("0", 0)).toBe(0);
    expect(wholeNumber(" 64 ", 1)).toBe(64);
    expect(wholeNumber("9007199254740991", 1)).toBe(Number.MAX_SAFE_INTEGER);
  });
  it("refuse what is below the floor, not digits, or past a safe integer", () => {
    for (const text of ["", " ", "-1", "1.5", "1e3", "0x10", "+5", "1_000", "9007199254740992", "lots"])
      expect(wholeNumber(text, 0), JSON.stringify(text)).toBeNull();
    expect(wholeNumber("199", 200)).toBeNull();
  });
});
