/**
 * The SQLite tables of the embedded store, created idempotently at open. Keys compare with
 * SQLite's BINARY collation (UTF-8 bytes, i.e. code point order), which equals JavaScript's
 * UTF-16 order for every key without astral characters.
 */
import type BetterSqlite3 from "better-sqlite3";
import { DUE_SQL, LIVE_STATUS_SQL } from "./tasks-rows.js";

export const SQLITE_DDL = `
CREATE TABLE IF NOT EXISTS idem_records (
  key TEXT PRIMARY KEY,
  state TEXT NOT NULL,
  owner TEXT NOT NULL,
  fingerprint TEXT,
  tool TEXT,
  lease_until INTEGER NOT NULL,
  result TEXT,
  error TEXT,
  expires_at INTEGER,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL
) WITHOUT ROWID;
-- (no index on state: it would cost every claim and transition a second b-tree write; listing by state scans)
CREATE TABLE IF NOT EXISTS revocations (
  id TEXT PRIMARY KEY,
  reason TEXT,
  revoked_at INTEGER NOT NULL,
  until INTEGER
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS budgets (
  id TEXT PRIMARY KEY,
  spent REAL NOT NULL
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS approvals (
  id TEXT PRIMARY KEY,
  tool TEXT NOT NULL,
  args_hash TEXT NOT NULL,
  arguments TEXT NOT NULL,
  capability_id TEXT,
  trajectory_id TEXT NOT NULL,
  state TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  expires_at INTEGER NOT NULL,
  decided_at INTEGER,
  approver TEXT,
  note TEXT
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS approvals_created ON approvals (created_at, id);
CREATE INDEX IF NOT EXISTS approvals_binding ON approvals (trajectory_id, tool, args_hash);
CREATE TABLE IF NOT EXISTS tasks (
  id TEXT PRIMARY KEY,
  tool TEXT NOT NULL,
  owner TEXT NOT NULL,
  status TEXT NOT NULL,
  status_message TEXT,
  result TEXT,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL,
  ttl_ms INTEGER NOT NULL,
  expires_at INTEGER NOT NULL,
  poll_ms INTEGER NOT NULL,
  stale_ms INTEGER
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS tasks_owner ON tasks (owner, id);
CREATE INDEX IF NOT EXISTS tasks_expiry ON tasks (expires_at);
DROP INDEX IF EXISTS tasks_written;
DROP INDEX IF EXISTS tasks_live;
`;

/**
 * What `SQLITE_DDL` cannot say idempotently, run after it in the same write transaction: a tasks
 * table created before a task kept its own stale bound gets the column (its rows keep null, the
 * reader's bound), as `ALTER TABLE … ADD COLUMN` with no IF NOT EXISTS in SQLite; then the stale
 * query's index (`tasks_due`: the live tasks by their own deadline, `DUE_SQL`), which names that
 * column, is built over the rows already there (it replaces `tasks_live`, by last write).
 */
export function migrateSqlite(db: BetterSqlite3.Database): void {
  const columns = db.prepare("SELECT name FROM pragma_table_info('tasks')").pluck().all() as string[];
  if (!columns.includes("stale_ms")) db.exec("ALTER TABLE tasks ADD COLUMN stale_ms INTEGER");
  db.exec(`CREATE INDEX IF NOT EXISTS tasks_due ON tasks (${DUE_SQL}, id) WHERE ${LIVE_STATUS_SQL}`);
}

const RECORD_COLUMNS =
  "key, state, owner, fingerprint, tool, lease_until, result, error, expires_at, created_at, updated_at";

/**
 * Every statement of the store, prepared once at open. `expires_at <= now` in claim, transition
 * and list is rows.ts `completedExpired`, repeated inside the statement so it decides atomically.
 */
export const SQLITE_SQL = {
  /**
   * Set-if-absent, or re-claim of an expired COMPLETED record, in one statement (store.ts `claim`).
   * Positional parameters, as every statement on the settle path: binding by name cost a lookup
   * per parameter. Parameters: key, owner, fingerprint, tool, lease_until, now, now.
   */
  claim: `INSERT INTO idem_records (${RECORD_COLUMNS})
    VALUES (?, 'IN_FLIGHT', ?, ?, ?, ?, NULL, NULL, NULL, ?, ?)
    ON CONFLICT (key) DO UPDATE SET state = 'IN_FLIGHT', owner = excluded.owner, fingerprint = excluded.fingerprint,
      tool = excluded.tool, lease_until = excluded.lease_until, result = NULL, error = NULL, expires_at = NULL,
      created_at = excluded.created_at, updated_at = excluded.updated_at
    WHERE idem_records.state = 'COMPLETED' AND idem_records.expires_at IS NOT NULL AND idem_records.expires_at <= excluded.updated_at`,
  get: `SELECT * FROM idem_records WHERE key = ?`,
  /**
   * The fenced transition (store.ts `transition`): one UPDATE, nothing returned. Each column is
   * a keep-flag and a value (rows.ts `transitionParams`), then updated_at, key, owner fence, from, now.
   */
  transition: `UPDATE idem_records SET state = ?,
      owner = CASE WHEN ? THEN ? ELSE owner END,
      lease_until = CASE WHEN ? THEN ? ELSE lease_until END,
      result = CASE WHEN ? THEN ? ELSE result END,
      error = CASE WHEN ? THEN ? ELSE error END,
      expires_at = CASE WHEN ? THEN ? ELSE expires_at END,
      updated_at = ?
    WHERE key = ? AND owner = ? AND state = ?
      AND NOT (state = 'COMPLETED' AND expires_at IS NOT NULL AND expires_at <= ?)`,
  release: `DELETE FROM idem_records WHERE key = ? AND owner = ? AND state = ?`,
  list: `SELECT * FROM idem_records
    WHERE (@after IS NULL OR key > @after) AND (@state IS NULL OR state = @state)
      AND NOT (state = 'COMPLETED' AND expires_at IS NOT NULL AND expires_at <= @now)
    ORDER BY key LIMIT @limit`,
  revoke: `INSERT INTO revocations (id, reason, revoked_at, until) VALUES (@id, @reason, @now, @until)
    ON CONFLICT (id) DO UPDATE SET reason = excluded.reason, until = excluded.until`,
  revokedAmong: `SELECT id FROM revocations
    WHERE id IN (SELECT value FROM json_each(@ids)) AND (until IS NULL OR until > @now)`,
  revocations: `SELECT id, reason, revoked_at, until FROM revocations WHERE until IS NULL OR until > ? ORDER BY revoked_at, id`,
  forgetRevocations: `DELETE FROM revocations WHERE until IS NOT NULL AND until <= ?`,
  spent: `SELECT spent FROM budgets WHERE id = ?`,
  setSpent: `INSERT INTO budgets (id, spent) VALUES (?, ?) ON CONFLICT (id) DO UPDATE SET spent = excluded.spent`,
  createApproval: `INSERT INTO approvals (id, tool, args_hash, arguments, capability_id, trajectory_id, state, created_at, expires_at, decided_at, approver, note)
    VALUES (@id, @tool, @args_hash, @arguments, @capability_id, @trajectory_id, @state, @created_at, @expires_at, @decided_at, @approver, @note)`,
  getApproval: `SELECT * FROM approvals WHERE id = ?`,
  /** The newest approval still live for the same call at @now (store.ts `createOrReuse`, approval-binding.ts
   * `isLiveAt`). */
  liveApproval: `SELECT * FROM approvals
    WHERE trajectory_id = @trajectory_id AND tool = @tool AND args_hash = @args_hash AND capability_id IS @capability_id
      AND state <> 'denied' AND expires_at > @now
    ORDER BY created_at DESC, id DESC LIMIT 1`,
  updateApproval: `UPDATE approvals SET
      state = CASE WHEN @set_state THEN @state ELSE state END,
      decided_at = CASE WHEN @set_decided THEN @decided_at ELSE decided_at END,
      approver = CASE WHEN @set_approver THEN @approver ELSE approver END,
      note = CASE WHEN @set_note THEN @note ELSE note END
    WHERE id = @id AND state = @from
    RETURNING *`,
  listApprovals: `SELECT * FROM approvals WHERE (@state IS NULL OR state = @state) ORDER BY created_at DESC, id DESC LIMIT @limit`,
} as const;
