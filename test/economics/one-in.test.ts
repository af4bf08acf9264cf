import { describe, expect, it } from "vitest";
import { aboutOneIn, numberWords, roundOneIn } from "../../src/economics/one-in.js";
import { breakeven } from "../../src/economics/breakeven.js";

describe("about one time in N (a rate as a person says it)", () => {
  it("says the worked example as docs/economics.md does: 1,800 / 40 = 45 → 'about one time in forty'", () => {
    expect(aboutOneIn(1800 / 40)).toBe("about one time in forty");
  });

  it("rounds 1/p down to a round number, so a rate above one in N is always above p", () => {
    const cases: [number, number][] = [
      [2, 2],
      [2.9, 2],
      [7.5, 7],
      [9.99, 9],
      [10, 10],
      [11.9, 10],
      [12, 12],
      [14, 12],
      [15, 15],
      [19, 15],
      [20, 20],
      [24, 20],
      [25, 25],
      [29.9, 25],
      [30, 30],
      [39, 30],
      [45, 40],
      [50, 50],
      [99, 90],
      [100, 100],
      [130, 120],
      [199, 150],
      [250, 250],
      [1234, 1200],
      [999_999, 900_000],
      [1_000_000, 1_000_000],
    ];
    for (const [ratio, n] of cases) {
      expect([ratio, roundOneIn(ratio)]).toEqual([ratio, n]);
      expect(roundOneIn(ratio)!).toBeLessThanOrEqual(ratio);
    }
  });

  it("does not fall to the round number below when floating point lands a hair under it", () => {
    expect(roundOneIn(1 / (1 / 50))).toBe(50);
    expect(roundOneIn(1 / 0.04)).toBe(25);
    expect(roundOneIn(0.3 / 0.1)).toBe(3);
  });

  it("has no phrase below one in two, nor for a ratio that is not finite", () => {
    expect([roundOneIn(1.99), roundOneIn(1), roundOneIn(0.5), roundOneIn(Infinity), roundOneIn(Number.NaN)]).toEqual([
      null,
      null,
      null,
      null,
      null,
    ]);
    expect(aboutOneIn(1.5)).toBeNull();
  });

  it("spells N out below 100 and writes digits from 100", () => {
    expect([2, 9, 10, 12, 15, 20, 25, 40, 90, 99].map(numberWords)).toEqual([
      "two",
      "nine",
      "ten",
      "twelve",
      "fifteen",
      "twenty",
      "twenty-five",
      "forty",
      "ninety",
      "ninety-nine",
    ]);
    expect([100, 1200, 1_000_000].map(numberWords)).toEqual(["100", "1,200", "1,000,000"]);
  });

  it("breakeven's summary uses the phrase, and the percentage when p_break is above 50 %", () => {
    expect(breakeven({ tokens: 100, mask_ms: 1, repair_ms: 2500 }).summary).toContain(
      "more often than about one time in twenty-five;",
    );
    const high = breakeven({ tokens: 100, mask_ms: 1, repair_ms: 150 });
    expect([high.one_in, high.about_one_in]).toEqual([2, null]);
    expect(high.summary).toContain("more often than 66.7 % of the time;");
  });
});
