import { describe, expect, it } from "vitest";
import { breakeven } from "../../src/economics/breakeven.js";

describe("breakeven (equation 1)", () => {
  it("reproduces the worked example: 80 tokens, 0.5 ms, 1,800 ms → 40 ms / 1,800 ms ≈ 2.2 %", () => {
    const r = breakeven({ tokens: 80, mask_ms: 0.5, repair_ms: 1800 });
    expect(r.mask_cost_ms).toBe(40);
    expect(r.p_break).toBe(40 / 1800);
    expect((r.p_break * 100).toFixed(1)).toBe("2.2");
    // 1 / p_break = 45 exactly; the sentence says "about one time in forty" (rounded down to a round number).
    expect(r.one_in).toBe(45);
    expect(r.about_one_in).toBe(40);
    expect(r.decision).toBe("measure");
    expect(r.summary).toMatchInlineSnapshot(
      `"p_break = 40 ms / 1,800 ms ≈ 2.2 %: constraining pays when calls fail to parse more often than about one time in forty; measure the tool's own malformation rate (--observed-rate) to decide."`,
    );
  });

  it("decides from an observed rate on either side of p_break, and computes both latencies", () => {
    const above = breakeven({ tokens: 80, mask_ms: 0.5, repair_ms: 1800, observed_rate: 0.05, decode_ms: 20 });
    expect(above.decision).toBe("constrain");
    expect(above.expected_free_ms).toBe(80 * 20 + 0.05 * 1800);
    expect(above.constrained_ms).toBe(80 * 20.5);
    expect(above.expected_free_ms!).toBeGreaterThan(above.constrained_ms);
    const below = breakeven({ tokens: 80, mask_ms: 0.5, repair_ms: 1800, observed_rate: 0.01, decode_ms: 20 });
    expect(below.decision).toBe("dont_constrain");
    expect(below.expected_free_ms!).toBeLessThan(below.constrained_ms);
    expect(below.summary).toMatchInlineSnapshot(
      `"p_break = 40 ms / 1,800 ms ≈ 2.2 %: constraining pays when calls fail to parse more often than about one time in forty; observed 1.0 % < 2.2 %: do not constrain; repair turns are cheaper."`,
    );
    // At the break-even point both sides cost the same (equation 1 is their equality).
    const tie = breakeven({ tokens: 80, mask_ms: 0.5, repair_ms: 2000, observed_rate: 0.02, decode_ms: 10 });
    expect(tie.decision).toBe("either");
    expect(tie.expected_free_ms).toBeCloseTo(tie.constrained_ms, 9);
  });

  it("says when masking costs more than a repair turn", () => {
    const r = breakeven({ tokens: 4000, mask_ms: 1, repair_ms: 1000, observed_rate: 0.9 });
    expect(r.p_break).toBe(4);
    expect(r.one_in).toBeNull();
    expect(r.about_one_in).toBeNull();
    expect(r.decision).toBe("dont_constrain");
  });

  it("rejects zero or negative times and tokens, and rates outside [0, 1]", () => {
    expect(() => breakeven({ tokens: 0, mask_ms: 0.5, repair_ms: 1800 })).toThrowErrorMatchingInlineSnapshot(
      `[ToolgateError: tokens (L_gen) must be a number greater than 0; received 0. Pass --tokens with a positive value, e.g. 80.]`,
    );
    expect(() => breakeven({ tokens: 80, mask_ms: -0.5, repair_ms: 1800 })).toThrowErrorMatchingInlineSnapshot(
      `[ToolgateError: mask_ms (t_mask) must be a number greater than 0; received -0.5. Pass --mask-ms with a positive value, e.g. 0.5.]`,
    );
    expect(() => breakeven({ tokens: 80, mask_ms: 0.5, repair_ms: 0 })).toThrowErrorMatchingInlineSnapshot(
      `[ToolgateError: repair_ms (T_repair) must be a number greater than 0; received 0. Pass --repair-ms with a positive value, e.g. 1800.]`,
    );
    expect(() => breakeven({ tokens: 80, mask_ms: 0.5, repair_ms: Number.NaN })).toThrow(/repair_ms/);
    expect(() =>
      breakeven({ tokens: 80, mask_ms: 0.5, repair_ms: 1800, observed_rate: 1.5 }),
    ).toThrowErrorMatchingInlineSnapshot(
      `[ToolgateError: observed_rate (p_err) must be a rate in [0, 1]; received 1.5. Write 2.5 % as 0.025.]`,
    );
    expect(() => breakeven({ tokens: 80, mask_ms: 0.5, repair_ms: 1800, observed_rate: -0.1 })).toThrow(/\[0, 1\]/);
    expect(() =>
      breakeven({ tokens: 80, mask_ms: 0.5, repair_ms: 1800, decode_ms: -1 }),
    ).toThrowErrorMatchingInlineSnapshot(`[ToolgateError: decode_ms (t_decode) must be a number ≥ 0; received -1]`);
  });
});
