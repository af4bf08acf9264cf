/** The cursors behind read_more (observation/continuations.ts): bounded, by age and by count. */
import { describe, expect, it } from "vitest";
import { createContinuationCache } from "../../src/observation/continuations.js";

const part = (text: string) => ({ tool: "t", call_id: "c", text });

describe("the continuation cache", () => {
  it("keeps at most max_entries cursors, dropping the least recently made or read", () => {
    const cache = createContinuationCache({ max_entries: 4, now: () => 0 });
    const cursors = ["a", "b", "c", "d"].map((text) => {
      const cursor = cache.reserve();
      cache.put(cursor, part(text));
      return cursor;
    });
    expect(cache.get(cursors[0]!)?.text).toBe("a");
    cache.put(cache.reserve(), part("e"));
    expect(cursors.map((c) => cache.get(c)?.text ?? null)).toEqual(["a", null, "c", "d"]);
  });

  it("forgets a cursor past its age", () => {
    let now = 0;
    const cache = createContinuationCache({ ttl_ms: 1000, now: () => now });
    const cursor = cache.reserve();
    cache.put(cursor, part("rest"));
    now = 999;
    expect(cache.get(cursor)?.text).toBe("rest");
    now = 1000;
    expect(cache.get(cursor)).toBeNull();
  });

  it("refuses a max_entries that is not a whole number of at least 1, naming it", () => {
    for (const bad of [0, -3, 2.5]) {
      expect(() => createContinuationCache({ max_entries: bad })).toThrow(
        `continuations.max_entries must be a whole number of cursors ≥ 1; received ${bad}; e.g. 256`,
      );
    }
  });
});
