import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { gbnfAccepts, parseGbnf } from "../../support/gbnf-check.js";
import { integerRange } from "../../../src/export/gbnf/integer.js";

const grammar = (lo: number, hi: number) => parseGbnf(`root ::= ${integerRange(lo, hi)}`);

describe("integerRange", () => {
  it("writes the coding catalog's bounds as digit ranges", () => {
    expect(integerRange(1, 500)).toMatchInlineSnapshot(
      `"([1-9] | [1-9] [0-9] | ("1" [0-9] [0-9] | [2-4] [0-9]{2} | "5" "00"))"`,
    );
    expect(integerRange(1000, 300000)).toMatchInlineSnapshot(
      `"([1-9] [0-9]{3} | [1-9] [0-9]{4} | ("1" [0-9] [0-9]{4} | "2" [0-9]{5} | "3" "00000"))"`,
    );
    expect(integerRange(0, Infinity)).toMatchInlineSnapshot(`"([0-9] | [1-9] [0-9]{1,})"`);
    expect(integerRange(5, 4)).toBeNull();
  });

  it("admits exactly the integers in range, in canonical form, for any range", () => {
    const end = fc.oneof(fc.integer({ min: -100_000, max: 100_000 }), fc.integer({ min: -99, max: 99 }));
    fc.assert(
      fc.property(
        fc.tuple(end, end).map(([a, b]) => [Math.min(a, b), Math.max(a, b)] as const),
        fc.boolean(),
        fc.boolean(),
        fc.array(fc.integer({ min: -200_000, max: 200_000 }), { maxLength: 20 }),
        ([a, b], openLow, openHigh, probes) => {
          const lo = openLow ? -Infinity : a;
          const hi = openHigh ? Infinity : b;
          const g = grammar(lo, hi);
          for (const x of [...probes, a, b, a - 1, b + 1, 0])
            expect(gbnfAccepts(g, String(x))).toBe(x >= lo && x <= hi);
          for (const s of ["-0", "01", "+1", "1.0", ""]) expect(gbnfAccepts(g, s)).toBe(false);
        },
      ),
      { numRuns: 150 },
    );
  });
});
