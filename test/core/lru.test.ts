/** The one bounded cache (core/lru.ts): its bound, what it drops first, and its bad input. */
import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { LruCache, memoize } from "../../src/core/lru.js";

describe("LruCache", () => {
  it("never holds more than its bound", () => {
    const cache = new LruCache<number, number>(8);
    for (let i = 0; i < 100; i++) cache.set(i, i);
    expect(cache.size).toBe(8);
    expect(Array.from({ length: 100 }, (_, i) => cache.has(i)).lastIndexOf(false)).toBe(91);
  });

  it("drops the least recently used entry, not the oldest one", () => {
    const cache = new LruCache<string, number>(4);
    for (const [k, v] of [
      ["a", 1],
      ["b", 2],
      ["c", 3],
      ["d", 4],
    ] as const)
      cache.set(k, v);
    expect(cache.get("a")).toBe(1); // three entries linked since a: past half the bound, so a moves
    cache.set("e", 5);
    expect(["a", "b", "c", "d", "e"].map((k) => cache.get(k) ?? null)).toEqual([1, null, 3, 4, 5]);
  });

  it("setting a known key replaces its value and makes it the most recently used", () => {
    const cache = new LruCache<string, string>(2);
    cache.set("a", "one");
    cache.set("b", "two");
    cache.set("a", "uno");
    cache.set("c", "three");
    expect([cache.get("a"), cache.get("b"), cache.get("c")]).toEqual(["uno", undefined, "three"]);
  });

  it("keeps null as a value, apart from a miss, and deletes", () => {
    const cache = new LruCache<string, string | null>(2);
    cache.set("none", null);
    expect(cache.get("none")).toBeNull();
    expect(cache.get("other")).toBeUndefined();
    expect(cache.delete("none")).toBe(true);
    expect(cache.delete("none")).toBe(false);
    expect(cache.get("none")).toBeUndefined();
    expect(cache.size).toBe(0);
  });

  it("never drops an entry used within the last max / 2 - 1 insertions and moves", () => {
    fc.assert(
      fc.property(
        fc
          .integer({ min: 1, max: 12 })
          .chain((max) =>
            fc.tuple(
              fc.constant(max),
              fc.array(fc.tuple(fc.boolean(), fc.integer({ min: 0, max: 2 * max })), { minLength: 20, maxLength: 300 }),
            ),
          ),
        ([max, ops]) => {
          const cache = new LruCache<number, number>(max);
          const lastUse = new Map<number, number>();
          let links = 0;
          for (const [write, key] of ops) {
            if (write) {
              cache.set(key, key);
              links++;
            } else if (cache.get(key) === undefined) continue;
            else links++; // a hit counts here as a link, the most it can be
            lastUse.set(key, links);
            expect(cache.size).toBeLessThanOrEqual(max);
            for (const [k, used] of lastUse)
              if (links - used < max / 2 - 1) expect(cache.has(k), `key ${k}`).toBe(true);
          }
        },
      ),
      { numRuns: 1000 },
    );
  });

  it("refuses a bound that is not a whole number of at least 1", () => {
    for (const bad of [0, -1, 1.5, Number.NaN])
      expect(() => new LruCache(bad)).toThrow(
        `a cache's size bound must be a whole number ≥ 1; received ${String(bad)}`,
      );
  });
});

describe("memoize", () => {
  it("computes once per key while it is remembered, and does not remember a throw", () => {
    const calls: string[] = [];
    const length = memoize(2, (key: string) => {
      calls.push(key);
      if (key === "bad") throw new Error("no");
      return key.length;
    });
    expect([length("ab"), length("ab"), length("abc")]).toEqual([2, 2, 3]);
    expect(() => length("bad")).toThrow("no");
    expect(() => length("bad")).toThrow("no");
    expect(calls).toEqual(["ab", "abc", "bad", "bad"]);
  });
});
