/**
 * Tasks: a call that runs on after the request that started it, its status kept in the store
 * so a client that reconnects, or reaches another replica, reads it. `TaskStore` is one part of
 * the one persistence interface (`Store.tasks`); every backend implements it in its own file
 * beside the store (`stores/tasks-*.ts`) over the store's own connection, and the conformance
 * suite runs against each.
 *
 * A task belongs to the principal that started it (`owner`): the store keeps it and filters lists
 * by it; the runtime's task API refuses anyone else. Times are passed in, never read.
 */
import type { JsonValue } from "../core/json.js";

/** working → input_required ⇄ working → completed | failed | cancelled (the last three are final). */
export type TaskStatus = "working" | "input_required" | "completed" | "failed" | "cancelled";

export const TASK_STATUSES: readonly TaskStatus[] = ["working", "input_required", "completed", "failed", "cancelled"];

/** A task in a final state never changes status again. */
export const isFinalStatus = (s: TaskStatus): boolean => s === "completed" || s === "failed" || s === "cancelled";

/** The statuses of a task not yet final. */
export const LIVE_STATUSES: readonly TaskStatus[] = TASK_STATUSES.filter((s) => !isFinalStatus(s));

export interface TaskRecord {
  /** Unguessable (128 random bits); list order is id order. */
  id: string;
  tool: string;
  /** The principal that started it; the only one who may read or cancel it. */
  owner: string;
  status: TaskStatus;
  /** One line on the current status (what it waits for, why it failed); null when there is nothing to say. */
  status_message: string | null;
  /** Once final: what the call answered (the observation), or null. */
  result: JsonValue | null;
  created_at: number;
  updated_at: number;
  /** How long the task is kept from its creation, ms. */
  ttl_ms: number;
  /** created_at + ttl_ms: from this instant the task is gone (get and list leave it out). */
  expires_at: number;
  /** How often a client should poll its status, ms. */
  poll_ms: number;
  /**
   * How long the runner that created it lets it go unwritten before it reads failed, ms (its
   * `stale_ms`: it writes the task once a poll). A reader or sweep whose own bound is shorter waits
   * this long (the larger of the two decides), so a replica with a short bound never fails the live
   * task of one that heartbeats slowly. Absent on a task stored before it was kept: the reader's bound.
   */
  stale_ms?: number;
}

/** What an update changes; `now` becomes updated_at. */
export interface TaskPatch {
  status: TaskStatus;
  status_message?: string | null;
  result?: JsonValue | null;
  now: number;
}

/** What fences an update beyond its status. */
export interface TaskFence {
  /**
   * Applies only while the task's updated_at is below this, epoch ms: it has not been written
   * since it was seen stale, so a heartbeat that lands first wins over marking it failed.
   */
  updated_before?: number;
}

export interface TaskStore {
  /** Stores a new task; an id already stored is refused (throws), ids are single-use. */
  create(record: TaskRecord): Promise<void>;
  /** The task, or null when unknown or expired at `now`. */
  get(id: string, now: number): Promise<TaskRecord | null>;
  /**
   * Compare-and-set on status: applies `patch` only when the task exists, has not expired at
   * `patch.now` and its status is one of `from`. Returns the task as updated, or null when the
   * fence did not hold (it moved on, e.g. cancelled by another replica). `fence` narrows it further
   * (`updated_before`). Atomic across processes for a `shared` store.
   */
  update(id: string, from: readonly TaskStatus[], patch: TaskPatch, fence?: TaskFence): Promise<TaskRecord | null>;
  /**
   * Every owner's tasks not final and not expired at `now` whose own deadline (`staleDue`) is at
   * most `now` and whose updated_at is below `before` (tasks no process has written since, by the
   * reader's bound and by the task's own), the most overdue (earliest deadline) first, ties in id
   * order; `limit` default 100. What a sweep marks failed, each through `update` fenced with
   * `updated_before`. SQLite, PostgreSQL and Redis keep the live tasks in deadline order (an
   * index, a sorted set), so the query reads neither an ended task nor a live one whose own bound
   * has not passed (the memory store walks its map).
   */
  stale(query: { before: number; now: number; limit?: number }): Promise<TaskRecord[]>;
  /** `owner`'s tasks not expired at `now`, in id order after `after`; `limit` default 100. */
  list(query: { owner: string; after?: string; limit?: number; now: number }): Promise<TaskRecord[]>;
}

/**
 * How long `t` may go unwritten before a reader whose own bound is `stale_ms` fails it: the larger
 * of that and the task's own `stale_ms` (the runtime's reads use it; the stores' `stale` keeps the
 * same test as `staleDue` against `now` beside `before`).
 */
export function staleBound(t: TaskRecord, stale_ms: number): number {
  return Math.max(stale_ms, t.stale_ms ?? 0);
}

/**
 * The instant from which `t` is stale by its own bound: its last write plus its own `stale_ms`,
 * or the write alone for a task without one (the reader's bound decides). The order of
 * `TaskStore.stale` (the SQL of the other stores repeats it, `tasks-rows.ts` `DUE_SQL`, and so do
 * the Redis scripts that score its live set by it).
 */
export function staleDue(t: Pick<TaskRecord, "updated_at" | "stale_ms">): number {
  return t.updated_at + (t.stale_ms ?? 0);
}

/** The task with `patch` applied, as every backend stores it. */
export function patchedTask(task: TaskRecord, patch: TaskPatch): TaskRecord {
  return {
    ...task,
    status: patch.status,
    ...(patch.status_message !== undefined ? { status_message: patch.status_message } : {}),
    ...(patch.result !== undefined ? { result: patch.result } : {}),
    updated_at: patch.now,
  };
}
