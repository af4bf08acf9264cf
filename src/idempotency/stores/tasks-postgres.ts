/**
 * Tasks of the PostgreSQL store, on the store's own pool: one table (created with the store's
 * tables, `postgres-schema.ts`), the compare-and-set one UPDATE … RETURNING.
 */
import type { Pool } from "pg";
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

/** The statements on `table`, exported for the test that reads their plans. */
export function tasksSql(table: string) {
  return {
    create: `INSERT INTO ${table} (${TASK_COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)`,
    get: `SELECT * FROM ${table} WHERE id = $1 AND expires_at > $2::bigint`,
    /** Parameters: rows `taskPatchParams` (status, has-message, message, has-result, result, now), id, from, updated_before (null: no fence). */
    update: `UPDATE ${table} SET status = $1,
        status_message = CASE WHEN $2::int = 1 THEN $3::text ELSE status_message END,
        result = CASE WHEN $4::int = 1 THEN $5::text ELSE result END,
        updated_at = $6::bigint
      WHERE id = $7 AND status = ANY($8::text[]) AND expires_at > $6::bigint
        AND ($9::bigint IS NULL OR updated_at < $9::bigint)
      RETURNING *`,
    /**
     * Parameters: before, now, limit. Searches the partial index of live tasks by their own deadline
     * (`tasks_due`) up to `now`, in its order: never an ended task, nor a live one whose own bound
     * has not passed; the reader's bound (`before`) is checked on the rows it finds.
     */
    stale: `SELECT * FROM ${table} WHERE ${LIVE_STATUS_SQL} AND ${DUE_SQL} <= $2::bigint
        AND updated_at < $1::bigint AND expires_at > $2::bigint
      ORDER BY ${DUE_SQL}, id LIMIT $3::bigint`,
    list: `SELECT * FROM ${table} WHERE owner = $1 AND id > $2 AND expires_at > $3::bigint ORDER BY id LIMIT $4::bigint`,
    /** Expired tasks are deleted as new ones arrive, a bounded batch at a time. */
    forget: `DELETE FROM ${table} WHERE id IN (SELECT id FROM ${table} WHERE expires_at <= $1::bigint LIMIT 100)`,
  };
}

/** `schema` and `prefix` are the store's, already checked as identifiers. */
export function postgresTasks(pool: Pool, schema: string, prefix: string): TaskStore {
  const sql = tasksSql(`"${schema}"."${prefix}tasks"`);
  const rows = async (text: string, values: unknown[]) => (await pool.query<TaskRow>(text, values)).rows;
  return {
    async create(record) {
      await pool.query(sql.forget, [record.created_at]);
      await pool.query(sql.create, taskToRow(record));
    },
    async get(id, now) {
      const [row] = await rows(sql.get, [id, now]);
      return row ? taskFromRow(row) : null;
    },
    async update(id, from, patch, fence) {
      const [row] = await rows(sql.update, [...taskPatchParams(patch), id, [...from], fence?.updated_before ?? null]);
      return row ? taskFromRow(row) : null;
    },
    async stale({ before, now, limit }) {
      return (await rows(sql.stale, [before, now, limit ?? DEFAULT_LIST_LIMIT])).map(taskFromRow);
    },
    async list({ owner, after, limit, now }) {
      return (await rows(sql.list, [owner, after ?? "", now, limit ?? DEFAULT_LIST_LIMIT])).map(taskFromRow);
    },
  };
}
