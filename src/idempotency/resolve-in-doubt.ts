/**
 * Resolving an IN_DOUBT record by hand (behind `toolgate records settle`): the operator looked at
 * the environment and says whether the effect of the call happened.
 */
import type { JsonValue } from "../core/json.js";
import { ResolveInDoubtError } from "./errors.js";
import { DEFAULT_TTL_MS, effectiveState, newOwnerToken, retryAfterMs } from "./record.js";
import type { IdempotencyRecord, Store } from "./store.js";
import { RecordTransitions, storableResult } from "./transitions.js";

export type ManualOutcome = { outcome: "applied"; result: JsonValue } | { outcome: "not_applied" };

export interface ResolveInDoubtOptions {
  /** Clock, epoch ms. Default `Date.now`. */
  now?: () => number;
  /** TTL of the COMPLETED record an `applied` resolution writes, ms; null keeps it. Default 24 h. */
  ttl_ms?: number | null;
}

/** What the record became: COMPLETED with the given result, or released (the next call runs). */
export type ResolveInDoubtResult =
  { settled: "completed"; record: IdempotencyRecord } | { settled: "released"; key: string };

/**
 * Resolves an IN_DOUBT record (or an IN_FLIGHT one whose lease has passed, which reads as IN_DOUBT).
 * Refuses unseen, COMPLETED and live IN_FLIGHT records with a `ResolveInDoubtError` saying why.
 */
export async function resolveInDoubt(
  store: Store,
  key: string,
  input: ManualOutcome,
  options: ResolveInDoubtOptions = {},
): Promise<ResolveInDoubtResult> {
  const now = options.now ?? Date.now;
  const ttl = options.ttl_ms === undefined ? DEFAULT_TTL_MS : options.ttl_ms;
  const records = new RecordTransitions(store, key);
  let result: JsonValue = null;
  if (input.outcome === "applied") {
    const stored = storableResult(input.result);
    if (!stored.ok)
      throw new ResolveInDoubtError("result_not_json", `the result to store for ${key} is not JSON: ${stored.reason}`);
    result = stored.result;
  } else if (input.outcome !== "not_applied") {
    throw new ResolveInDoubtError(
      "invalid_outcome",
      `outcome must be "applied" or "not_applied"; received ${JSON.stringify((input as { outcome?: unknown }).outcome)}`,
    );
  }

  let record = await records.get(now());
  if (!record)
    throw new ResolveInDoubtError(
      "record_not_found",
      `no record for key ${key}: it was never claimed, was released, or was COMPLETED and passed its TTL`,
    );
  const t = now();
  switch (effectiveState(record, t)) {
    case "COMPLETED":
      throw new ResolveInDoubtError(
        "record_completed",
        `record ${key} is already COMPLETED (at ${new Date(record.updated_at).toISOString()}); there is nothing to settle`,
      );
    case "IN_FLIGHT":
      throw new ResolveInDoubtError(
        "record_in_flight",
        `record ${key} is IN_FLIGHT until ${new Date(record.lease_until).toISOString()} (${retryAfterMs(record, t)} ms); its executor may still finish; settle it after the lease passes`,
      );
    case "IN_DOUBT":
      if (record.state === "IN_FLIGHT") {
        // Its lease passed: record it IN_DOUBT first, fenced by the dead executor's owner token.
        record = await records.expireLease(record, t);
        if (!record) throw changed(key);
      }
  }

  const operator = newOwnerToken();
  const mine = await records.takeOver(record, operator, now());
  if (!mine) throw changed(key);
  if (input.outcome === "not_applied") {
    if (!(await records.release(operator, "IN_DOUBT", "unknown"))) throw changed(key);
    return { settled: "released", key };
  }
  const t2 = now();
  const done = await records.complete(mine, result, ttl === null ? null : t2 + ttl, t2);
  if (!done) throw changed(key);
  return { settled: "completed", record: done };
}

const changed = (key: string) =>
  new ResolveInDoubtError(
    "record_changed",
    `record ${key} changed while it was being settled (another party settled it); run \`toolgate records show ${key}\` and retry`,
  );
