/**
 * Small facts about endpoint records shared by `runOnce`, `resolveInDoubt` and the CLI. Whether a
 * lease has passed is decided here and nowhere else: `effectiveState` and `retryAfterMs`.
 */
import { randomFillSync } from "node:crypto";
import type { IdempotencyRecord, RecordPatch, RecordState } from "./store.js";

/** COMPLETED records are kept this long by default: 24 h. */
export const DEFAULT_TTL_MS = 24 * 60 * 60 * 1000;

/**
 * Random bytes drawn from the CSPRNG in one call per 256 tokens: a call into OpenSSL per token
 * cost more than the rest of `runOnce` (the same batching `crypto.randomUUID` does). Each byte
 * is handed out once, so tokens stay independent 128-bit secrets.
 */
const TOKEN_BYTES = 16;
const pool = Buffer.alloc(TOKEN_BYTES * 256);
let poolOffset = pool.length;

/** A fresh owner token: 128 random bits as 32 hex digits, unguessable so nobody can forge a fence. */
export function newOwnerToken(): string {
  if (poolOffset === pool.length) {
    randomFillSync(pool);
    poolOffset = 0;
  }
  const token = pool.toString("hex", poolOffset, poolOffset + TOKEN_BYTES);
  poolOffset += TOKEN_BYTES;
  return token;
}

/**
 * The state a record reads as at `now`: an IN_FLIGHT record whose lease has passed reads as
 * IN_DOUBT (docs/idempotency.md: the executor may have died partway through). The one test of
 * "the lease passed": the state machine, the operator's resolution and the listings all ask this
 * function. Stores never judge a lease; they return a record as stored (the conformance suite pins it).
 */
export function effectiveState(record: IdempotencyRecord, now: number): RecordState {
  return record.state === "IN_FLIGHT" && record.lease_until <= now ? "IN_DOUBT" : record.state;
}

/**
 * Milliseconds until the lease of a record that still reads IN_FLIGHT at `now` passes, at
 * least 1: how long a repeat waits before it finds the call finished or IN_DOUBT.
 */
export function retryAfterMs(record: IdempotencyRecord, now: number): number {
  return Math.max(1, Math.ceil(record.lease_until - now));
}

/**
 * The record after `patch` applied to `record`: an absent patch field keeps the value, an
 * explicit null clears it (store.ts `RecordPatch`). What a store holds once a fenced
 * `transition` on `record` succeeded, so no store has to read it back.
 */
export function applyPatch(record: IdempotencyRecord, patch: RecordPatch): IdempotencyRecord {
  return {
    ...record,
    state: patch.state,
    owner: patch.owner ?? record.owner,
    lease_until: patch.lease_until ?? record.lease_until,
    result: patch.result !== undefined ? patch.result : record.result,
    error: patch.error !== undefined ? patch.error : record.error,
    expires_at: patch.expires_at !== undefined ? patch.expires_at : record.expires_at,
    updated_at: patch.now,
  };
}
