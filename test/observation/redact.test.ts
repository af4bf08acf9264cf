import { describe, expect, it } from "vitest";
import { createRedactor, REDACTED } from "../../src/observation/redact.js";

describe("createRedactor", () => {
  it("replaces every occurrence in text, longest secret first", () => {
    const r = createRedactor(["sk-live-abcdef", "sk-live-abcdef-extended"]);
    expect(r.text("a sk-live-abcdef-extended b sk-live-abcdef c")).toBe(`a ${REDACTED} b ${REDACTED} c`);
  });

  it("walks structured values, keys included", () => {
    const r = createRedactor(["hunter22"]);
    expect(r.json({ pw: "hunter22", list: ["x hunter22 y", 3, null], hunter22: true })).toEqual({
      pw: REDACTED,
      list: [`x ${REDACTED} y`, 3, null],
      [REDACTED]: true,
    });
  });

  it("is a no-op without secrets", () => {
    const r = createRedactor([""]);
    expect(r.empty).toBe(true);
    const v = { a: "b" };
    expect(r.json(v)).toBe(v);
  });

  it("refuses a secret too short to redact safely", () => {
    expect(() => createRedactor(["abc"])).toThrowErrorMatchingInlineSnapshot(
      `[ToolgateError: secrets: every secret must be at least 6 characters (received one of 3); a shorter value would redact ordinary text — drop it or configure the full secret]`,
    );
  });
});
