/**
 * Row ↔ record mapping shared by the SQL stores (SQLite, PostgreSQL) and the Redis store,
 * which all keep JSON values as text so a stored result comes back byte-for-byte as written
 * (PostgreSQL `jsonb` would reorder keys and normalise numbers).
 */
import type { JsonValue } from "../../core/json.js";
import type {
  ApprovalRecord,
  ApprovalState,
  ClaimInput,
  IdempotencyRecord,
  RecordPatch,
  RecordState,
} from "../store.js";

/** A record as the backends keep it: times may arrive as strings (pg `bigint`, Redis replies). */
export interface RecordRow {
  key: string;
  state: string;
  owner: string;
  fingerprint: string | null;
  tool: string | null;
  lease_until: number | string;
  result: string | null;
  error: string | null;
  expires_at: number | string | null;
  created_at: number | string;
  updated_at: number | string;
}

/** Page size of `records.list` when the query gives none (as the memory store). */
export const DEFAULT_LIST_LIMIT = 100;

const num = (v: number | string): number => (typeof v === "number" ? v : Number(v));
const numOrNull = (v: number | string | null | undefined): number | null =>
  v === null || v === undefined || v === "" ? null : num(v);

/** JSON text of a stored value; `null` stays SQL NULL so "no result" and JSON `null` read back the same. */
export function jsonText(value: JsonValue | null | undefined): string | null {
  return value === null || value === undefined ? null : JSON.stringify(value);
}

export function recordFromRow(row: RecordRow): IdempotencyRecord {
  return {
    key: row.key,
    state: row.state as RecordState,
    owner: row.owner,
    fingerprint: row.fingerprint ?? null,
    tool: row.tool ?? null,
    lease_until: num(row.lease_until),
    result: row.result === null || row.result === undefined ? null : (JSON.parse(row.result) as JsonValue),
    error: row.error ?? null,
    expires_at: numOrNull(row.expires_at),
    created_at: num(row.created_at),
    updated_at: num(row.updated_at),
  };
}

/** The record a successful claim wrote, built locally instead of read back (one less value to send and parse). */
export function claimedRecord(key: string, input: ClaimInput): IdempotencyRecord {
  return {
    key,
    state: "IN_FLIGHT",
    owner: input.owner,
    fingerprint: input.fingerprint,
    tool: input.tool,
    lease_until: input.lease_until,
    result: null,
    error: null,
    expires_at: null,
    created_at: input.now,
    updated_at: input.now,
  };
}

/**
 * A COMPLETED record whose TTL has passed reads as unseen (store.ts `get`, `claim`):
 * expired once `now` reaches `expires_at`. The statements that must decide it atomically repeat
 * this test inside SQL (sqlite-schema.ts, postgres-schema.ts) and Lua (redis-scripts.ts
 * `expired`); the conformance suite pins that all agree at the boundary.
 */
export function completedExpired(state: string, expiresAt: number | null, now: number): boolean {
  return state === "COMPLETED" && expiresAt !== null && expiresAt <= now;
}

/**
 * The positional parameters of the fenced transition statement of both SQL stores, in their
 * order: state; then for owner, lease_until, result, error, expires_at a keep flag (1 = set,
 * 0 = keep the column) and the value, so one cached statement serves every patch shape (an
 * absent field keeps the column, an explicit `null` clears it); then updated_at, key, the owner
 * fence, from, and now for the expiry check. Flags are 1/0: SQLite binds no booleans, and
 * PostgreSQL reads '1'/'0' as booleans.
 */
export function transitionParams(key: string, owner: string, from: RecordState, patch: RecordPatch): unknown[] {
  return [
    patch.state,
    patch.owner !== undefined ? 1 : 0,
    patch.owner ?? null,
    patch.lease_until !== undefined ? 1 : 0,
    patch.lease_until ?? null,
    patch.result !== undefined ? 1 : 0,
    jsonText(patch.result),
    patch.error !== undefined ? 1 : 0,
    patch.error ?? null,
    patch.expires_at !== undefined ? 1 : 0,
    patch.expires_at ?? null,
    patch.now,
    key,
    owner,
    from,
    patch.now,
  ];
}

/** An approval as the backends keep it (`arguments` as JSON text). */
export interface ApprovalRow {
  id: string;
  tool: string;
  args_hash: string;
  arguments: string;
  capability_id: string | null;
  trajectory_id: string;
  state: string;
  created_at: number | string;
  expires_at: number | string;
  decided_at: number | string | null;
  approver: string | null;
  note: string | null;
}

export function approvalFromRow(row: ApprovalRow): ApprovalRecord {
  return {
    id: row.id,
    tool: row.tool,
    args_hash: row.args_hash,
    arguments: JSON.parse(row.arguments) as JsonValue,
    capability_id: row.capability_id ?? null,
    trajectory_id: row.trajectory_id,
    state: row.state as ApprovalState,
    created_at: num(row.created_at),
    expires_at: num(row.expires_at),
    decided_at: numOrNull(row.decided_at),
    approver: row.approver ?? null,
    note: row.note ?? null,
  };
}

export function approvalToRow(record: ApprovalRecord): ApprovalRow {
  return { ...record, arguments: JSON.stringify(record.arguments) };
}

/** The CAS parameters of an approval update, with the same keep/clear flags as `patchParams`. */
export function approvalPatchParams(
  patch: Partial<Pick<ApprovalRecord, "state" | "decided_at" | "approver" | "note">>,
) {
  return {
    set_state: patch.state !== undefined ? 1 : 0,
    state: patch.state ?? null,
    set_decided: patch.decided_at !== undefined ? 1 : 0,
    decided_at: patch.decided_at ?? null,
    set_approver: patch.approver !== undefined ? 1 : 0,
    approver: patch.approver ?? null,
    set_note: patch.note !== undefined ? 1 : 0,
    note: patch.note ?? null,
  };
}

/** Budget arithmetic shared by every backend that computes in JS (SQLite, PostgreSQL fallbacks). */
export function checkSpend(id: string, amount: number, limit: number): void {
  if (!Number.isFinite(amount) || amount < 0)
    throw new RangeError(`budget ${id}: amount must be a finite number ≥ 0; received ${amount}`);
  if (!Number.isFinite(limit)) throw new RangeError(`budget ${id}: limit must be a finite number; received ${limit}`);
}
