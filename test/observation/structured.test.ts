import { describe, expect, it } from "vitest";
import { boundJson } from "../../src/observation/structured.js";

describe("boundJson: a structured result cut to a size, still valid JSON of the same shape", () => {
  it("leaves a value that fits alone, and cuts the longest parts in turn until the compact JSON fits", () => {
    expect(boundJson({ a: "short" }, 100)).toEqual({
      value: { a: "short" },
      cuts: { strings: 0, arrays: 0, characters: 0 },
    });
    const bounded = boundJson({ a: "a".repeat(5_000), b: "b".repeat(3_000), n: [1, 2, 3] }, 2_000)!;
    const value = bounded.value as { a: string; b: string; n: number[] };
    expect(JSON.stringify(value).length).toBeLessThanOrEqual(2_000);
    expect(value.n).toEqual([1, 2, 3]);
    // Both strings keep a head; each marker counts from the original length.
    expect(Number(/\[(\d+) characters cut\]$/.exec(value.a)![1]) + value.a.indexOf("…")).toBe(5_000);
    expect(Number(/\[(\d+) characters cut\]$/.exec(value.b)![1]) + value.b.indexOf("…")).toBe(3_000);
    expect(bounded.cuts).toMatchObject({ strings: 2, arrays: 0 });
  });

  it("answers null when no cut of strings and arrays fits (many keys, short values)", () => {
    const keys = Object.fromEntries(Array.from({ length: 500 }, (_, i) => [`key_${i}`, i]));
    expect(boundJson(keys, 1_000)).toBeNull();
  });
});
