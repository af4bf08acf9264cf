/**
 * Settling a record by hand (docs/idempotency.md, "Settling a record in doubt"): the operator looked
 * at the environment and says whether the effect of an IN_DOUBT call happened.
 */
import type { JsonValue } from "../core/json.js";
import { SettleRecordError } from "./errors.js";
import { DEFAULT_TTL_MS, newOwnerToken } from "./record.js";
import type { IdempotencyRecord, Store } from "./store.js";
import { RecordTransitions, storableResult } from "./transitions.js";

export type ManualOutcome = { outcome: "applied"; result: JsonValue } | { outcome: "not_applied" };

export interface SettleRecordOptions {
  /** Clock, epoch ms. Default `Date.now`. */
  now?: () => number;
  /** TTL of the COMPLETED record an `applied` settlement writes, ms; null keeps it. Default 24 h. */
  ttl_ms?: number | null;
}

/** What the record became: COMPLETED with the given result, or released (the next call runs). */
export type SettleRecordResult = { settled: "completed"; record: IdempotencyRecord } | { settled: "released"; key: string };

/**
 * Settles an IN_DOUBT record (or an IN_FLIGHT one whose lease has passed, which reads as IN_DOUBT).
 * Refuses unseen, COMPLETED and live IN_FLIGHT records with a `SettleRecordError` saying why.
 */
export async function settleRecord(store: Store, key: string, input: ManualOutcome, options: SettleRecordOptions = {}): Promise<SettleRecordResult> {
  const now = options.now ?? Date.now;
  const ttl = options.ttl_ms === undefined ? DEFAULT_TTL_MS : options.ttl_ms;
  const records = new RecordTransitions(store, key);
  let result: JsonValue = null;
  if (input.outcome === "applied") {
    const stored = storableResult(input.result);
    if (!stored.ok) throw new SettleRecordError("result_not_json", `the result to store for ${key} is not JSON: ${stored.reason}`);
    result = stored.result;
  } else if (input.outcome !== "not_applied") {
    throw new SettleRecordError("invalid_outcome", `outcome must be "applied" or "not_applied"; received ${JSON.stringify((input as { outcome?: unknown }).outcome)}`);
  }

  let record = await records.get(now());
  if (!record) throw new SettleRecordError("record_not_found", `no record for key ${key}: it was never claimed, was released, or was COMPLETED and passed its TTL`);
  if (record.state === "COMPLETED") {
    throw new SettleRecordError("record_completed", `record ${key} is already COMPLETED (at ${new Date(record.updated_at).toISOString()}); there is nothing to settle`);
  }
  if (record.state === "IN_FLIGHT") {
    const t = now();
    if (record.lease_until > t) {
      throw new SettleRecordError(
        "record_in_flight",
        `record ${key} is IN_FLIGHT until ${new Date(record.lease_until).toISOString()} (${Math.ceil(record.lease_until - t)} ms); its executor may still finish; settle it after the lease passes`,
      );
    }
    record = await records.expireLease(record, t);
    if (!record) throw changed(key);
  }

  const operator = newOwnerToken();
  const mine = await records.takeOver(record, operator, now());
  if (!mine) throw changed(key);
  if (input.outcome === "not_applied") {
    if (!(await records.release(operator, "IN_DOUBT", "unknown"))) throw changed(key);
    return { settled: "released", key };
  }
  const t = now();
  const done = await records.complete(mine, result, ttl === null ? null : t + ttl, t);
  if (!done) throw changed(key);
  return { settled: "completed", record: done };
}

const changed = (key: string) => new SettleRecordError("record_changed", `record ${key} changed while it was being settled (another party settled it); run \`toolgate records show ${key}\` and retry`);
