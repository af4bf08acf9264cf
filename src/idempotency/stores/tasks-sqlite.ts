/**
 * Tasks of the SQLite store, on the store's own database handle: one table (created with the
 * store's tables, `sqlite-schema.ts`), the compare-and-set one UPDATE … RETURNING.
 */
import type BetterSqlite3 from "better-sqlite3";
import type { TaskStore } from "../tasks.js";
import { DEFAULT_LIST_LIMIT } from "./rows.js";
import {
  DUE_SQL,
  LIVE_STATUS_SQL,
  TASK_COLUMNS,
  taskFromRow,
  taskPatchParams,
  taskToRow,
  type TaskRow,
} from "./tasks-rows.js";

/** The statements, exported for the test that reads their plans. */
export const SQL = {
  create: `INSERT INTO tasks (${TASK_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  get: `SELECT * FROM tasks WHERE id = ? AND expires_at > ?`,
  /** Parameters: rows `taskPatchParams` (status, has-message, message, has-result, result, now), id, from (JSON list), now, updated_before (null: no fence). */
  update: `UPDATE tasks SET status = ?,
      status_message = CASE WHEN ? THEN ? ELSE status_message END,
      result = CASE WHEN ? THEN ? ELSE result END,
      updated_at = ?
    WHERE id = ? AND status IN (SELECT value FROM json_each(?)) AND expires_at > ?
      AND (? IS NULL OR updated_at < ?)
    RETURNING *`,
  /**
   * Parameters: now, before, now, limit. Searches the partial index of live tasks by their own
   * deadline (`tasks_due`) up to `now`, in its order: never an ended task, nor a live one whose own
   * bound has not passed; the reader's bound (`before`) is checked on the rows it finds.
   */
  stale: `SELECT * FROM tasks WHERE ${LIVE_STATUS_SQL} AND ${DUE_SQL} <= ? AND updated_at < ? AND expires_at > ?
    ORDER BY ${DUE_SQL}, id LIMIT ?`,
  list: `SELECT * FROM tasks WHERE owner = ? AND id > ? AND expires_at > ? ORDER BY id LIMIT ?`,
  /** Expired tasks are deleted as new ones arrive, a bounded batch at a time. */
  forget: `DELETE FROM tasks WHERE id IN (SELECT id FROM tasks WHERE expires_at <= ? LIMIT 100)`,
} as const;

export function sqliteTasks(db: BetterSqlite3.Database): TaskStore {
  const sql = Object.fromEntries(Object.entries(SQL).map(([name, text]) => [name, db.prepare(text)])) as {
    [K in keyof typeof SQL]: BetterSqlite3.Statement;
  };
  return {
    async create(record) {
      sql.forget.run(record.created_at);
      sql.create.run(...taskToRow(record));
    },
    async get(id, now) {
      const row = sql.get.get(id, now) as TaskRow | undefined;
      return row ? taskFromRow(row) : null;
    },
    async update(id, from, patch, fence) {
      const before = fence?.updated_before ?? null;
      const row = sql.update.get(...taskPatchParams(patch), id, JSON.stringify(from), patch.now, before, before) as
        TaskRow | undefined;
      return row ? taskFromRow(row) : null;
    },
    async stale({ before, now, limit }) {
      const rows = sql.stale.all(now, before, now, limit ?? DEFAULT_LIST_LIMIT) as TaskRow[];
      return rows.map(taskFromRow);
    },
    async list({ owner, after, limit, now }) {
      const rows = sql.list.all(owner, after ?? "", now, limit ?? DEFAULT_LIST_LIMIT) as TaskRow[];
      return rows.map(taskFromRow);
    },
  };
}
