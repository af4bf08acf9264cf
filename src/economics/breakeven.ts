/**
 * When constraining decoding pays: docs/economics.md, equation 1.
 *
 *   E[T_free]       = L_gen · t_decode + p_err · T_repair
 *   T_constrained   = L_gen · (t_decode + t_mask)
 *   p_break         = L_gen · t_mask / T_repair
 *
 * Constraining pays when the observed malformation rate exceeds p_break.
 */
import { ToolgateError } from "../core/errors.js";
import { aboutOneIn, roundOneIn } from "./one-in.js";

export interface BreakevenInput {
  /** L_gen: output tokens of one call (a mean is fine, so need not be an integer); > 0. */
  tokens: number;
  /** t_mask: masking overhead per generated token, milliseconds; > 0. */
  mask_ms: number;
  /** T_repair: latency of one repair turn (re-sent context + regenerated call), milliseconds; > 0. */
  repair_ms: number;
  /** p_err: measured rate at which unconstrained calls fail to parse or validate, in [0, 1]. */
  observed_rate?: number;
  /**
   * t_decode: decode time per token, milliseconds (≥ 0). It cancels out of p_break; when
   * omitted (0) the two latencies are the overhead each side adds on top of L_gen · t_decode.
   */
  decode_ms?: number;
}

/** "constrain": p_err > p_break; "dont_constrain": p_err < p_break, or p_break > 1 (whatever the rate); "either":
 * equal; "measure": no rate given. */
export type BreakevenDecision = "constrain" | "dont_constrain" | "either" | "measure";

export interface BreakevenResult {
  tokens: number;
  mask_ms: number;
  repair_ms: number;
  decode_ms: number;
  /** L_gen · t_mask, milliseconds. */
  mask_cost_ms: number;
  /** L_gen · t_mask / T_repair as computed; ≥ 1 (shown as "≥ 100 %") means `constraining_never_pays`. */
  p_break: number;
  /** p_break ≥ 1: a repair turn costs no more than masking one call, so no malformation rate makes constraining pay. */
  constraining_never_pays: boolean;
  /** round(1 / p_break), the exact "1 in N"; null when p_break ≥ 1 makes it meaningless. */
  one_in: number | null;
  /**
   * The N of the summary's "about one time in N": 1 / p_break rounded down to a round number
   * (`one-in.ts`: 45 → 40, the worked example's "about one time in forty"); null when 1 / p_break < 2.
   */
  about_one_in: number | null;
  observed_rate: number | null;
  /** E[T_free] with one repair allowed; null without an observed rate. */
  expected_free_ms: number | null;
  constrained_ms: number;
  decision: BreakevenDecision;
  /** One sentence a person reads. */
  summary: string;
}

function positive(name: string, flag: string, value: number): void {
  if (typeof value !== "number" || !Number.isFinite(value) || value <= 0) {
    throw new ToolgateError(
      "invalid_input",
      `${name} must be a number greater than 0; received ${String(value)}. Pass ${flag} with a positive value, e.g. ${flag === "--tokens" ? "80" : flag === "--mask-ms" ? "0.5" : "1800"}.`,
    );
  }
}

/** Checks a rate is in [0, 1]; `label` names the option for the message. */
export function checkRate(label: string, value: number): void {
  if (typeof value !== "number" || !Number.isFinite(value) || value < 0 || value > 1) {
    throw new ToolgateError(
      "invalid_input",
      `${label} must be a rate in [0, 1]; received ${String(value)}. Write 2.5 % as 0.025.`,
    );
  }
}

/** Formats a rate as a percentage with one decimal (0.0222 → "2.2 %"). */
export function percent(rate: number): string {
  return `${(rate * 100).toFixed(1)} %`;
}

/** "about one time in N", N = round(1/p) (null when p is 0). */
export function oneIn(p: number): number | null {
  return p > 0 ? Math.round(1 / p) : null;
}

/**
 * Equation 1 of docs/economics.md. Throws ToolgateError("invalid_input") for zero or negative times
 * or tokens, and for a rate outside [0, 1].
 */
export function breakeven(input: BreakevenInput): BreakevenResult {
  positive("tokens (L_gen)", "--tokens", input.tokens);
  positive("mask_ms (t_mask)", "--mask-ms", input.mask_ms);
  positive("repair_ms (T_repair)", "--repair-ms", input.repair_ms);
  const decode = input.decode_ms ?? 0;
  if (typeof decode !== "number" || !Number.isFinite(decode) || decode < 0) {
    throw new ToolgateError("invalid_input", `decode_ms (t_decode) must be a number ≥ 0; received ${String(decode)}`);
  }
  if (input.observed_rate !== undefined) checkRate("observed_rate (p_err)", input.observed_rate);

  const mask_cost_ms = input.tokens * input.mask_ms;
  const p_break = mask_cost_ms / input.repair_ms;
  const one_in = p_break < 1 ? oneIn(p_break) : null;
  // T_repair / (L · t_mask) is 1 / p_break without the rounding of a division followed by another.
  const ratio = input.repair_ms / mask_cost_ms;
  const about = aboutOneIn(ratio);
  const constrained_ms = input.tokens * (decode + input.mask_ms);
  const rate = input.observed_rate ?? null;
  const expected_free_ms = rate === null ? null : input.tokens * decode + rate * input.repair_ms;
  // Above 100 % no rate can exceed p_break, so there is nothing left to measure.
  const decision: BreakevenDecision =
    p_break > 1
      ? "dont_constrain"
      : rate === null
        ? "measure"
        : rate > p_break
          ? "constrain"
          : rate < p_break
            ? "dont_constrain"
            : "either";

  const threshold =
    p_break >= 1
      ? `p_break = ${fmtMs(mask_cost_ms)} / ${fmtMs(input.repair_ms)} ≥ 100 %: masking costs more than a repair turn, so constraining never pays on latency`
      : `p_break = ${fmtMs(mask_cost_ms)} / ${fmtMs(input.repair_ms)} ≈ ${percent(p_break)}: constraining pays when calls fail to parse more often than ${about ?? `${percent(p_break)} of the time`}`;
  const verdict =
    decision === "measure"
      ? "measure the tool's own malformation rate (--observed-rate) to decide"
      : decision === "constrain"
        ? `observed ${percent(rate!)} > ${percent(p_break)}: constrain decoding`
        : decision === "dont_constrain"
          ? p_break >= 1
            ? `${rate === null ? "no rate is needed" : `observed ${percent(rate)}`}: do not constrain; repair turns are cheaper`
            : `observed ${percent(rate!)} < ${percent(p_break)}: do not constrain; repair turns are cheaper`
          : `observed rate equals p_break: both cost the same`;
  return {
    tokens: input.tokens,
    mask_ms: input.mask_ms,
    repair_ms: input.repair_ms,
    decode_ms: decode,
    mask_cost_ms,
    p_break,
    constraining_never_pays: p_break >= 1,
    one_in,
    about_one_in: roundOneIn(ratio),
    observed_rate: rate,
    expected_free_ms,
    constrained_ms,
    decision,
    summary: `${threshold}; ${verdict}.`,
  };
}

/** Milliseconds without float noise: 40 → "40 ms", 1800 → "1,800 ms", 0.25 → "0.25 ms". */
export function fmtMs(ms: number): string {
  const rounded = Math.round(ms * 1000) / 1000;
  return `${rounded.toLocaleString("en-US", { maximumFractionDigits: 3 })} ms`;
}
