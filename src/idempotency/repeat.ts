/**
 * A claim found an existing record: decide what this repeat gets (docs/idempotency.md,
 * the four states). COMPLETED replays, IN_FLIGHT refuses until its lease passes, a passed lease and
 * IN_DOUBT refuse until a probe or an operator settles the record.
 */
import { settleHint, type SettleOutcome } from "./outcome.js";
import { reconcile } from "./reconcile.js";
import type { SettleContext } from "./settle.js";
import type { IdempotencyRecord } from "./store.js";

/** Claims again; `probed` marks that a probe has released the key on this call's behalf. */
export type Retry = (probed: boolean) => Promise<SettleOutcome>;

export async function resolveRepeat(ctx: SettleContext, record: IdempotencyRecord, probed: boolean, retry: Retry): Promise<SettleOutcome> {
  if (ctx.fingerprint !== null && record.fingerprint !== null && record.fingerprint !== ctx.fingerprint) {
    return { status: "key_reused", expected_fingerprint: record.fingerprint, received_fingerprint: ctx.fingerprint, record };
  }
  switch (record.state) {
    case "COMPLETED":
      return { status: "replay", result: record.result, record, settled_by: "stored" };
    case "IN_FLIGHT": {
      const now = ctx.now();
      if (record.lease_until > now) return { status: "in_flight", retry_after_ms: Math.max(1, Math.ceil(record.lease_until - now)), record };
      const doubted = await ctx.records.expireLease(record, now);
      // Fence failed: the executor completed, or someone else moved the record first. Look again.
      if (!doubted) return retry(probed);
      return inDoubt(ctx, doubted, "lease_expired", probed, retry);
    }
    case "IN_DOUBT":
      return inDoubt(ctx, record, "unsettled", probed, retry);
  }
}

function inDoubt(ctx: SettleContext, record: IdempotencyRecord, cause: "lease_expired" | "unsettled", probed: boolean, retry: Retry): Promise<SettleOutcome> | SettleOutcome {
  // One probe per call: after a probe released the key and another caller claimed it, this call reports rather than probing again.
  if (ctx.probe && !probed) return reconcile(ctx, ctx.probe, record, () => retry(true));
  const why = record.error ?? "the effect of an earlier attempt is unknown";
  return {
    status: "in_doubt",
    cause,
    reason: `the call is IN_DOUBT: ${why}; repeats are refused so the effect cannot happen twice; ${settleHint(ctx.key)}`,
    record,
  };
}
