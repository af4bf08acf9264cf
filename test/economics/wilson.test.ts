import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { wilsonInterval, Z95 } from "../../src/economics/wilson.js";

/**
 * An independent reference: the Wilson interval is the set of p for which the score test
 * |p̂ − p| ≤ z·sqrt(p(1 − p)/n) does not reject; find its two ends by bisection.
 */
function byBisection(x: number, n: number, z = Z95): [number, number] {
  const phat = x / n;
  const inside = (p: number) => Math.abs(phat - p) <= z * Math.sqrt((p * (1 - p)) / n);
  const edge = (from: number, to: number) => {
    // `from` is inside (or the boundary 0/1), `to` is outside.
    let a = from;
    let b = to;
    for (let i = 0; i < 200; i++) {
      const m = (a + b) / 2;
      if (inside(m)) a = m;
      else b = m;
    }
    return (a + b) / 2;
  };
  const low = x === 0 ? 0 : edge(phat, 0);
  const high = x === n ? 1 : edge(phat, 1);
  return [low, high];
}

describe("wilsonInterval", () => {
  it("matches published values (Newcombe 1998, method 3)", () => {
    const r = wilsonInterval(81, 263);
    expect([r.low.toFixed(4), r.high.toFixed(4)]).toEqual(["0.2553", "0.3662"]);
    const zero = wilsonInterval(0, 10);
    expect([zero.low, zero.high.toFixed(4)]).toEqual([0, "0.2775"]);
    const half = wilsonInterval(5, 10);
    expect([half.low.toFixed(4), half.high.toFixed(4)]).toEqual(["0.2366", "0.7634"]);
    const all = wilsonInterval(10, 10);
    expect([all.low.toFixed(4), all.high]).toEqual(["0.7225", 1]);
  });

  it("agrees with the score test solved by bisection for any sample", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 5000 }).chain((n) => fc.tuple(fc.integer({ min: 0, max: n }), fc.constant(n))),
        ([x, n]) => {
          const r = wilsonInterval(x, n);
          const [lo, hi] = byBisection(x, n);
          expect(r.low).toBeCloseTo(lo, 9);
          expect(r.high).toBeCloseTo(hi, 9);
          expect(r.low).toBeLessThanOrEqual(r.p);
          expect(r.high).toBeGreaterThanOrEqual(r.p);
        },
      ),
    );
  });

  it("knows nothing from no trials, and rejects impossible counts", () => {
    expect(wilsonInterval(0, 0)).toEqual({ p: 0, low: 0, high: 1 });
    expect(() => wilsonInterval(11, 10)).toThrowErrorMatchingInlineSnapshot(
      `[ToolgateError: successes must be an integer in [0, trials=10]; received 11]`,
    );
    expect(() => wilsonInterval(1, -3)).toThrowErrorMatchingInlineSnapshot(
      `[ToolgateError: trials must be a non-negative integer; received -3]`,
    );
    expect(() => wilsonInterval(1.5, 3)).toThrow(/successes/);
  });
});
