import { describe, expect, it } from "vitest";
import { exampleForPattern } from "../../src/schema/pattern-example.js";

describe("exampleForPattern", () => {
  it.each([
    ["^([0-9a-f]{64})?$", "0".repeat(64)],
    ["^[A-Z]{2}-\\d{4}$", "AA-0000"],
    ["^m_[A-Za-z0-9_-]{16}$", `m_${"A".repeat(16)}`],
    ["^(?:foo|bar)+$", "foo"],
    ["^a{2,}b?\\.txt$", "aab.txt"],
  ])("%s → %s (and it matches)", (pattern, example) => {
    expect(exampleForPattern(pattern)).toBe(example);
    expect(new RegExp(pattern, "u").test(example)).toBe(true);
  });

  it.each(["^(?!x).*$", "[^a]+", "^$", "^\\bword$", "^(a", "a{x}"])(
    "gives none for %s rather than a wrong one",
    (pattern) => {
      expect(exampleForPattern(pattern)).toBeUndefined();
    },
  );

  it("gives none rather than a huge one: a quantifier of a billion builds nothing", () => {
    expect(exampleForPattern("^a{999999999}$")).toBeUndefined();
    expect(exampleForPattern("^(ab{200}){200}$")).toBeUndefined();
    expect(exampleForPattern("^[a-z]{256}$")).toBe("a".repeat(256));
  });
});
