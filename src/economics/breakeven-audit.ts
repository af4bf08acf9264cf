/**
 * Equation 1 (docs/economics.md) from measured traffic: per tool, estimate p_err, L_gen and T_repair
 * from the audit trail, put a Wilson 95 % interval on p_err, and recommend constraining only
 * when the whole interval lies on one side of p_break.
 *
 * What counts as "failed to parse or validate" (docs/economics.md: the rate at which unconstrained
 * calls fail): a call whose outcome is `invalid_arguments` — the arguments were
 * not a JSON object or broke the tool's schema, exactly what a grammar-constrained decoder
 * prevents. `unknown_tool` is counted separately (a grammar over the catalog's names would
 * prevent it too, but it belongs to no tool). `check_failed`, `denied` and the rest are
 * not counted: the call parsed and validated, and no grammar would have stopped it.
 */
import { breakeven, fmtMs, type BreakevenResult } from "./breakeven.js";
import { readAudit, type AuditCall } from "./audit-calls.js";
import type { BrokenLine } from "../runtime/audit-reader.js";
import { wilsonInterval, type Interval } from "./wilson.js";
import { ToolgateError } from "../core/errors.js";

/** Outcome codes counted as a malformed call. */
export const MALFORMED_OUTCOMES: readonly string[] = ["invalid_arguments"];

/** The mask overhead of docs/economics.md's worked example, used when none is given. */
export const DEFAULT_MASK_MS = 0.5;

export type Recommendation = "constrain" | "dont_constrain" | "not_enough_data";

export interface ToolBreakeven {
  tool: string;
  calls: number;
  failed: number;
  /** p_err with its Wilson 95 % interval. */
  p_err: Interval;
  /** Mean argument_tokens over the tool's calls. */
  l_gen: number;
  /** Mean time from a failed call to the next call of the same trajectory, ms; null when unmeasured. */
  t_repair_ms: number | null;
  /** How many failed calls had a next call to time the repair against. */
  repairs_timed: number;
  /** Where T_repair came from: this tool's repairs, the whole trail's mean repair, the repair_ms option, or nowhere. */
  t_repair_source: "measured" | "trail" | "option" | null;
  /**
   * L_gen · t_mask / T_repair when it is a rate below 100 %; null when unmeasured or when it is
   * ≥ 1 (see `constraining_never_pays`), so no consumer reads a rate above 100 %.
   */
  p_break: number | null;
  /** L_gen · t_mask / T_repair as computed, unbounded (4.26 means masking one call costs 4.26 repair turns); null when
   * unmeasured. */
  p_break_raw: number | null;
  /** p_break ≥ 100 %: a repair turn costs no more than masking one call, so constraining never pays (equation 1). */
  constraining_never_pays: boolean;
  recommendation: Recommendation;
  /** Why the recommendation, or the warning when the sample is too small to decide. */
  reason: string;
  breakeven: BreakevenResult | null;
}

export interface AuditBreakevenOptions {
  /** t_mask per token, ms (default 0.5, as in docs/economics.md). */
  mask_ms?: number;
  /** T_repair to use when no repair in the whole trail could be timed, ms. */
  repair_ms?: number;
}

export interface AuditBreakeven {
  mask_ms: number;
  tools: ToolBreakeven[];
  records: number;
  broken: BrokenLine[];
  unknown_tool_calls: number;
  malformed_outcomes: readonly string[];
}

const mean = (xs: number[]): number => (xs.length === 0 ? 0 : xs.reduce((a, b) => a + b, 0) / xs.length);

/** For each failed call, the ms until the next call of the same trajectory (by ts, then turn, then line). */
function repairTimes(calls: AuditCall[]): Map<AuditCall, number> {
  const byTrajectory = new Map<string, AuditCall[]>();
  for (const c of calls) {
    const list = byTrajectory.get(c.trajectory_id) ?? [];
    list.push(c);
    byTrajectory.set(c.trajectory_id, list);
  }
  const times = new Map<AuditCall, number>();
  for (const list of byTrajectory.values()) {
    list.sort((a, b) => a.at - b.at || a.turn - b.turn || a.line - b.line);
    list.forEach((c, i) => {
      const next = list[i + 1];
      if (next && MALFORMED_OUTCOMES.includes(c.outcome)) times.set(c, next.at - c.at);
    });
  }
  return times;
}

/** Largest sample `callsToDecide` looks at; beyond it the rate is too close to p_break to matter. */
const MAX_SAMPLE = 10_000_000;

/**
 * How many calls, failing at the observed rate, would put the whole Wilson interval on one
 * side of p_break; null when the rate equals p_break or more than MAX_SAMPLE would be needed.
 */
export function callsToDecide(rate: number, p_break: number): number | null {
  const decided = (n: number) => {
    const iv = wilsonInterval(Math.round(rate * n), n);
    return iv.low > p_break || iv.high < p_break;
  };
  let hi = 1;
  while (!decided(hi)) {
    hi *= 2;
    if (hi > MAX_SAMPLE) return null;
  }
  let lo = Math.max(1, hi / 2);
  // Rounding makes `decided` not quite monotone in n; the search finds a sample size that decides.
  while (lo < hi) {
    const mid = Math.floor((lo + hi) / 2);
    if (decided(mid)) hi = mid;
    else lo = mid + 1;
  }
  return hi;
}

function decide(
  p_err: Interval,
  p_break: number,
  failed: number,
  calls: number,
): { recommendation: Recommendation; reason: string } {
  const iv = `p_err ${(p_err.p * 100).toFixed(1)} % (95 % CI ${(p_err.low * 100).toFixed(1)}–${(p_err.high * 100).toFixed(1)} %, ${failed}/${calls})`;
  const pb = `p_break ${(p_break * 100).toFixed(1)} %`;
  if (p_err.low > p_break) return { recommendation: "constrain", reason: `${iv} lies above ${pb}: constrain decoding` };
  if (p_err.high < p_break)
    return { recommendation: "dont_constrain", reason: `${iv} lies below ${pb}: do not constrain` };
  const needed = callsToDecide(p_err.p, p_break);
  const more =
    needed === null
      ? "the observed rate is too close to p_break for any practical sample to decide"
      : `at this rate about ${needed.toLocaleString("en-US")} calls would decide`;
  return {
    recommendation: "not_enough_data",
    reason: `warning: sample too small to decide — ${iv} straddles ${pb}; ${more}`,
  };
}

/** Per-tool break-even from parsed audit calls. */
export function breakevenFromCalls(
  calls: AuditCall[],
  options: AuditBreakevenOptions = {},
): Omit<AuditBreakeven, "records" | "broken"> {
  const mask_ms = options.mask_ms ?? DEFAULT_MASK_MS;
  if (!(typeof mask_ms === "number" && Number.isFinite(mask_ms) && mask_ms > 0)) {
    throw new ToolgateError(
      "invalid_input",
      `mask_ms (t_mask) must be a number greater than 0; received ${String(mask_ms)}. Pass --mask-ms, e.g. 0.5.`,
    );
  }
  if (options.repair_ms !== undefined && !(Number.isFinite(options.repair_ms) && options.repair_ms > 0)) {
    throw new ToolgateError(
      "invalid_input",
      `repair_ms (T_repair) must be a number greater than 0; received ${String(options.repair_ms)}`,
    );
  }
  const repairs = repairTimes(calls);
  const allTimed = [...repairs.values()].filter((t) => t > 0);
  const trailRepair = allTimed.length > 0 ? mean(allTimed) : null;
  const byTool = new Map<string, AuditCall[]>();
  let unknown_tool_calls = 0;
  for (const c of calls) {
    if (c.outcome === "unknown_tool") {
      unknown_tool_calls++;
      continue;
    }
    const list = byTool.get(c.tool) ?? [];
    list.push(c);
    byTool.set(c.tool, list);
  }
  const tools: ToolBreakeven[] = [];
  for (const [tool, list] of [...byTool].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    const failedCalls = list.filter((c) => MALFORMED_OUTCOMES.includes(c.outcome));
    const timed = failedCalls.map((c) => repairs.get(c)).filter((t): t is number => t !== undefined);
    const p_err = wilsonInterval(failedCalls.length, list.length);
    const l_gen = mean(list.map((c) => c.argument_tokens));
    const measured = timed.length > 0 ? mean(timed) : null;
    // A tool that never failed has no repair to time: fall back to the whole trail's mean repair, then to the option.
    const [t_repair, source] =
      measured !== null && measured > 0
        ? ([measured, "measured"] as const)
        : trailRepair !== null
          ? ([trailRepair, "trail"] as const)
          : options.repair_ms !== undefined
            ? ([options.repair_ms, "option"] as const)
            : ([null, null] as const);
    const base = {
      tool,
      calls: list.length,
      failed: failedCalls.length,
      p_err,
      l_gen,
      t_repair_ms: t_repair,
      repairs_timed: timed.length,
      t_repair_source: source,
    } as const;
    if (t_repair === null || l_gen <= 0) {
      const why =
        l_gen <= 0
          ? "argument_tokens are all 0, so L_gen is unknown"
          : "no failed call in the trail was followed by another call of its trajectory, so T_repair is unmeasured; pass --repair-ms to assume one";
      tools.push({
        ...base,
        p_break: null,
        p_break_raw: null,
        constraining_never_pays: false,
        recommendation: "not_enough_data",
        reason: `warning: ${why}`,
        breakeven: null,
      });
      continue;
    }
    const be = breakeven({ tokens: l_gen, mask_ms, repair_ms: t_repair, observed_rate: p_err.p });
    if (be.p_break >= 1) {
      // No rate can exceed p_break, so no sample size changes the answer (e.g. scripted clients replying within ms).
      const reason = `p_break ≥ 100 %: a repair turn (T_repair ${fmtMs(t_repair)}) costs less than masking one call (L_gen · t_mask = ${fmtMs(be.mask_cost_ms)}); don't constrain`;
      tools.push({
        ...base,
        p_break: null,
        p_break_raw: be.p_break,
        constraining_never_pays: true,
        recommendation: "dont_constrain",
        reason,
        breakeven: be,
      });
      continue;
    }
    tools.push({
      ...base,
      p_break: be.p_break,
      p_break_raw: be.p_break,
      constraining_never_pays: false,
      ...decide(p_err, be.p_break, failedCalls.length, list.length),
      breakeven: be,
    });
  }
  return { mask_ms, tools, unknown_tool_calls, malformed_outcomes: MALFORMED_OUTCOMES };
}

/** Per-tool break-even from the text of an audit file (JSON Lines of AuditRecord). */
export function breakevenFromAudit(text: string, options: AuditBreakevenOptions = {}): AuditBreakeven {
  const read = readAudit(text);
  if (read.calls.length === 0) {
    const first = read.broken[0];
    throw new ToolgateError(
      "invalid_input",
      `the audit trail holds no usable record (${read.broken.length} broken line(s)${first ? `; line ${first.line}: ${first.reason}` : ""}). Expected one AuditRecord JSON object per line, as the gateway writes to its audit trail.`,
    );
  }
  return { ...breakevenFromCalls(read.calls, options), records: read.calls.length, broken: read.broken };
}
