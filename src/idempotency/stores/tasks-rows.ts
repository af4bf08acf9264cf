/**
 * A task as an SQL row (SQLite and PostgreSQL): the result as JSON text, numbers as the driver
 * returns them (PostgreSQL's bigint arrives as a string).
 */
import type { JsonValue } from "../../core/json.js";
import { LIVE_STATUSES, type TaskPatch, type TaskRecord, type TaskStatus } from "../tasks.js";

/**
 * `status IN (…)` of the live statuses, as SQL literals: the stale query and the partial index
 * of live tasks it searches (`tasks_due`) spell it alike, so both SQLite and PostgreSQL match them.
 */
export const LIVE_STATUS_SQL = `status IN (${LIVE_STATUSES.map((s) => `'${s}'`).join(", ")})`;

/**
 * A task's own deadline (`TaskStore.stale`, tasks.ts `staleDue`): its last write plus its own
 * `stale_ms`, or the write alone for a row without one (stored before it was kept). The stale
 * query's range and order and the index it searches (`tasks_due`, `sqlite-schema.ts`,
 * `postgres-schema.ts`) spell it alike, as a planner uses an index on an expression only for a query
 * that writes the same expression.
 */
export const DUE_SQL = "updated_at + COALESCE(stale_ms, 0)";

export interface TaskRow {
  id: string;
  tool: string;
  owner: string;
  status: string;
  status_message: string | null;
  result: string | null;
  created_at: number | string;
  updated_at: number | string;
  ttl_ms: number | string;
  expires_at: number | string;
  poll_ms: number | string;
  /** Null on a row stored before the column was added (`sqlite-schema.ts`, `postgres-schema.ts`). */
  stale_ms: number | string | null;
}

export const TASK_COLUMNS =
  "id, tool, owner, status, status_message, result, created_at, updated_at, ttl_ms, expires_at, poll_ms, stale_ms";

export function taskToRow(t: TaskRecord): unknown[] {
  return [
    t.id,
    t.tool,
    t.owner,
    t.status,
    t.status_message,
    t.result === null ? null : JSON.stringify(t.result),
    t.created_at,
    t.updated_at,
    t.ttl_ms,
    t.expires_at,
    t.poll_ms,
    t.stale_ms ?? null,
  ];
}

export function taskFromRow(r: TaskRow): TaskRecord {
  return {
    id: r.id,
    tool: r.tool,
    owner: r.owner,
    status: r.status as TaskStatus,
    status_message: r.status_message,
    result: r.result === null ? null : (JSON.parse(r.result) as JsonValue),
    created_at: Number(r.created_at),
    updated_at: Number(r.updated_at),
    ttl_ms: Number(r.ttl_ms),
    expires_at: Number(r.expires_at),
    poll_ms: Number(r.poll_ms),
    ...(r.stale_ms === null ? {} : { stale_ms: Number(r.stale_ms) }),
  };
}

/** The update's SQL parameters, shared by the SQL backends: status, has-message, message, has-result, result, now. */
export function taskPatchParams(patch: TaskPatch): unknown[] {
  return [
    patch.status,
    patch.status_message !== undefined ? 1 : 0,
    patch.status_message ?? null,
    patch.result !== undefined ? 1 : 0,
    patch.result === undefined || patch.result === null ? null : JSON.stringify(patch.result),
    patch.now,
  ];
}
