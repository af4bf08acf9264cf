/**
 * Settling an IN_DOUBT record with the tool's probe (docs/idempotency.md): the probe
 * inspects the environment and says whether the effect happened.
 * The prober first takes the record over (a fenced owner change), so two probers or a late
 * executor can never both settle it.
 */
import type { ProbeOutcome } from "../core/tool.js";
import { settleHint, type SettleOutcome } from "./outcome.js";
import type { SettleContext } from "./settle.js";
import type { IdempotencyRecord } from "./store.js";
import { storableResult } from "./transitions.js";

export async function reconcile(
  ctx: SettleContext,
  probe: () => ProbeOutcome | Promise<ProbeOutcome>,
  record: IdempotencyRecord,
  runAgain: () => Promise<SettleOutcome>,
): Promise<SettleOutcome> {
  const { records, owner } = ctx;
  const mine = await records.takeOver(record, owner, ctx.now());
  if (!mine) return moved(ctx, runAgain);

  let outcome: ProbeOutcome;
  try {
    outcome = await probe();
  } catch (error) {
    const reason = `the probe threw: ${(error as Error)?.message ?? String(error)}; the record stays IN_DOUBT; ${settleHint(ctx.key)}`;
    return { status: "in_doubt", cause: "probe_failed", reason, record: mine, error };
  }

  switch (outcome?.outcome) {
    case "applied": {
      const stored = storableResult(outcome.result);
      if (!stored.ok) {
        const reason = `the probe found the effect applied but its result is not JSON (${stored.reason}); the record stays IN_DOUBT; ${settleHint(ctx.key)}`;
        return { status: "in_doubt", cause: "probe_failed", reason, record: mine, probe: outcome };
      }
      const now = ctx.now();
      const done = await records.complete(mine, stored.result, ctx.ttl_ms === null ? null : now + ctx.ttl_ms, now);
      if (!done) return moved(ctx, runAgain);
      return { status: "replay", result: stored.result, record: done, settled_by: "probe" };
    }
    case "not_applied":
      // Nothing happened: free the key, then this very call claims and runs it.
      if (!(await records.release(owner, "IN_DOUBT", "unknown"))) return moved(ctx, runAgain);
      return runAgain();
    case "unknown": {
      const detail = outcome.detail ? ` (${outcome.detail})` : "";
      const reason = `the probe could not tell whether the effect happened${detail}; the record stays IN_DOUBT; ${settleHint(ctx.key)}`;
      return { status: "in_doubt", cause: "probe_unknown", reason, record: mine, probe: outcome };
    }
    default: {
      const got = JSON.stringify((outcome as { outcome?: unknown } | undefined)?.outcome) ?? "nothing";
      const reason = `the probe returned outcome ${got}; expected "applied" (with result), "not_applied" or "unknown"; the record stays IN_DOUBT`;
      return { status: "in_doubt", cause: "probe_failed", reason, record: mine };
    }
  }
}

/**
 * Someone else moved the record while we probed: answer from what it is now. Released (another
 * probe found the effect not applied) → this call claims and runs; COMPLETED → replay;
 * IN_FLIGHT → refused like any repeat; still IN_DOUBT → another party is settling it.
 */
async function moved(ctx: SettleContext, runAgain: () => Promise<SettleOutcome>): Promise<SettleOutcome> {
  const now = ctx.now();
  const current = await ctx.records.get(now, "unknown");
  if (current === null) return runAgain();
  if (current.state === "COMPLETED") return { status: "replay", result: current.result, record: current, settled_by: "stored" };
  if (current.state === "IN_FLIGHT" && current.lease_until > now) {
    return { status: "in_flight", retry_after_ms: Math.max(1, Math.ceil(current.lease_until - now)), record: current };
  }
  return {
    status: "in_doubt",
    cause: "probe_busy",
    reason: `another party is settling this IN_DOUBT call (the record changed owner while this call probed); retry shortly`,
    record: current,
  };
}
