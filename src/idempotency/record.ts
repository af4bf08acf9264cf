/** Small facts about endpoint records shared by settle, settleRecord and the CLI. */
import { randomBytes } from "node:crypto";
import type { IdempotencyRecord, RecordState } from "./store.js";

/** COMPLETED records are kept this long by default: 24 h (issue 3). */
export const DEFAULT_TTL_MS = 24 * 60 * 60 * 1000;

/** A fresh owner token: 128 random bits, unguessable so nobody can forge a fence. */
export function newOwnerToken(): string {
  return randomBytes(16).toString("hex");
}

/**
 * The state a record reads as at `now`: an IN_FLIGHT record whose lease has passed reads as
 * IN_DOUBT (seed 000, "The endpoint record": the executor may have died partway through).
 */
export function effectiveState(record: IdempotencyRecord, now: number): RecordState {
  return record.state === "IN_FLIGHT" && record.lease_until <= now ? "IN_DOUBT" : record.state;
}
