/**
 * The PostgreSQL tables and statements of the store, parameterised by schema and table prefix
 * so several stores (and test files) can share one database. Keys use the "C" collation, so
 * `list` walks them in byte order like the SQLite and Redis stores. JSON values are `text`,
 * not `jsonb`, so a stored result comes back exactly as written.
 */
import { ToolgateError } from "../../core/errors.js";
import { DUE_SQL, LIVE_STATUS_SQL } from "./tasks-rows.js";

const IDENT = /^[a-z_][a-z0-9_]{0,40}$/;

/** Validates `schema` and `prefix` as plain SQL identifiers (they are interpolated, never user data). */
export function checkIdentifiers(schema: string, prefix: string): void {
  if (!IDENT.test(schema))
    throw new ToolgateError(
      "bad_store_option",
      `postgres schema must match ${IDENT}; received ${JSON.stringify(schema)}; example toolgate`,
    );
  if (prefix !== "" && !/^[a-z_][a-z0-9_]{0,30}$/.test(prefix)) {
    throw new ToolgateError(
      "bad_store_option",
      `postgres table prefix must be lower-case letters, digits and _; received ${JSON.stringify(prefix)}; example toolgate_`,
    );
  }
}

export function postgresDdl(schema: string, prefix: string): string {
  const t = (name: string) => `"${schema}"."${prefix}${name}"`;
  return `
CREATE SCHEMA IF NOT EXISTS "${schema}";
CREATE TABLE IF NOT EXISTS ${t("records")} (
  key text COLLATE "C" PRIMARY KEY,
  state text NOT NULL,
  owner text NOT NULL,
  fingerprint text,
  tool text,
  lease_until bigint NOT NULL,
  result text,
  error text,
  expires_at bigint,
  created_at bigint NOT NULL,
  updated_at bigint NOT NULL
);
CREATE TABLE IF NOT EXISTS ${t("revocations")} (
  id text PRIMARY KEY,
  reason text,
  revoked_at bigint NOT NULL,
  until bigint
);
CREATE TABLE IF NOT EXISTS ${t("budgets")} (
  id text PRIMARY KEY,
  spent double precision NOT NULL
);
CREATE TABLE IF NOT EXISTS ${t("approvals")} (
  id text PRIMARY KEY,
  tool text NOT NULL,
  args_hash text NOT NULL,
  arguments text NOT NULL,
  capability_id text,
  trajectory_id text NOT NULL,
  state text NOT NULL,
  created_at bigint NOT NULL,
  expires_at bigint NOT NULL,
  decided_at bigint,
  approver text,
  note text
);
CREATE INDEX IF NOT EXISTS "${prefix}approvals_created" ON ${t("approvals")} (created_at DESC, id DESC);
CREATE INDEX IF NOT EXISTS "${prefix}approvals_binding" ON ${t("approvals")} (trajectory_id, tool, args_hash);
CREATE TABLE IF NOT EXISTS ${t("tasks")} (
  id text COLLATE "C" PRIMARY KEY,
  tool text NOT NULL,
  owner text NOT NULL,
  status text NOT NULL,
  status_message text,
  result text,
  created_at bigint NOT NULL,
  updated_at bigint NOT NULL,
  ttl_ms bigint NOT NULL,
  expires_at bigint NOT NULL,
  poll_ms bigint NOT NULL,
  stale_ms bigint
);
-- A table made before a task kept its own stale bound: its rows keep null, the reader's bound.
ALTER TABLE ${t("tasks")} ADD COLUMN IF NOT EXISTS stale_ms bigint;
CREATE INDEX IF NOT EXISTS "${prefix}tasks_owner" ON ${t("tasks")} (owner, id);
CREATE INDEX IF NOT EXISTS "${prefix}tasks_expiry" ON ${t("tasks")} (expires_at);
DROP INDEX IF EXISTS "${schema}"."${prefix}tasks_written";
-- The stale query's: live tasks by their own deadline (tasks-rows.ts DUE_SQL), built over the rows
-- already there at the first open after it came; it replaces tasks_live (by last write).
CREATE INDEX IF NOT EXISTS "${prefix}tasks_due" ON ${t("tasks")} ((${DUE_SQL}), id) WHERE ${LIVE_STATUS_SQL};
DROP INDEX IF EXISTS "${schema}"."${prefix}tasks_live";`;
}

const COLUMNS = "key, state, owner, fingerprint, tool, lease_until, result, error, expires_at, created_at, updated_at";

/**
 * Every statement, as text; the store sends them as named prepared statements. `expires_at <= now`
 * in claim, transition and list is rows.ts `completedExpired`, repeated inside the statement so it
 * decides atomically.
 */
export function postgresSql(schema: string, prefix: string) {
  const t = (name: string) => `"${schema}"."${prefix}${name}"`;
  return {
    /**
     * The claim in one round trip: INSERT … ON CONFLICT, whose DO UPDATE only fires for an
     * expired COMPLETED record (the re-claim); any other conflict returns no row.
     */
    claim: `INSERT INTO ${t("records")} AS r (${COLUMNS})
      VALUES ($1, 'IN_FLIGHT', $2, $3, $4, $5, NULL, NULL, NULL, $6, $6)
      ON CONFLICT (key) DO UPDATE SET state = 'IN_FLIGHT', owner = EXCLUDED.owner, fingerprint = EXCLUDED.fingerprint,
        tool = EXCLUDED.tool, lease_until = EXCLUDED.lease_until, result = NULL, error = NULL, expires_at = NULL,
        created_at = EXCLUDED.created_at, updated_at = EXCLUDED.updated_at
      WHERE r.state = 'COMPLETED' AND r.expires_at IS NOT NULL AND r.expires_at <= EXCLUDED.updated_at`,
    get: `SELECT * FROM ${t("records")} WHERE key = $1`,
    /**
     * The fenced transition (store.ts `transition`): one UPDATE, nothing returned. Parameters in
     * the order of rows.ts `transitionParams`, which the SQLite store shares.
     */
    transition: `UPDATE ${t("records")} SET state = $1,
        owner = CASE WHEN $2::boolean THEN $3::text ELSE owner END,
        lease_until = CASE WHEN $4::boolean THEN $5::bigint ELSE lease_until END,
        result = CASE WHEN $6::boolean THEN $7::text ELSE result END,
        error = CASE WHEN $8::boolean THEN $9::text ELSE error END,
        expires_at = CASE WHEN $10::boolean THEN $11::bigint ELSE expires_at END,
        updated_at = $12
      WHERE key = $13 AND owner = $14 AND state = $15
        AND NOT (state = 'COMPLETED' AND expires_at IS NOT NULL AND expires_at <= $16::bigint)`,
    release: `DELETE FROM ${t("records")} WHERE key = $1 AND owner = $2 AND state = $3`,
    list: `SELECT * FROM ${t("records")}
      WHERE ($1::text IS NULL OR key > $1::text) AND ($2::text IS NULL OR state = $2::text)
        AND NOT (state = 'COMPLETED' AND expires_at IS NOT NULL AND expires_at <= $3::bigint)
      ORDER BY key LIMIT $4::bigint`,
    forgetRevocations: `DELETE FROM ${t("revocations")} WHERE until IS NOT NULL AND until <= $1`,
    revoke: `INSERT INTO ${t("revocations")} AS v (id, reason, revoked_at, until) VALUES ($1, $2, $3, $4)
      ON CONFLICT (id) DO UPDATE SET reason = EXCLUDED.reason, until = EXCLUDED.until`,
    revokedAmong: `SELECT id FROM ${t("revocations")} WHERE id = ANY($1::text[]) AND (until IS NULL OR until > $2::bigint)`,
    revocations: `SELECT id, reason, revoked_at, until FROM ${t("revocations")} WHERE until IS NULL OR until > $1::bigint ORDER BY revoked_at, id COLLATE "C"`,
    /** Budget spend as one upsert whose update only applies while the total stays ≤ the limit. */
    spend: `INSERT INTO ${t("budgets")} AS b (id, spent) SELECT $1::text, $2::float8 WHERE $2::float8 <= $3::float8
      ON CONFLICT (id) DO UPDATE SET spent = b.spent + EXCLUDED.spent WHERE b.spent + EXCLUDED.spent <= $3::float8
      RETURNING spent`,
    spent: `SELECT spent FROM ${t("budgets")} WHERE id = $1`,
    createApproval: `INSERT INTO ${t("approvals")} (id, tool, args_hash, arguments, capability_id, trajectory_id, state, created_at, expires_at, decided_at, approver, note)
      VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12) ON CONFLICT (id) DO NOTHING`,
    getApproval: `SELECT * FROM ${t("approvals")} WHERE id = $1`,
    /** The newest approval still live for the same call at $5 (store.ts `createOrReuse`, approval-binding.ts
     * `isLiveAt`); run under the call's advisory lock. */
    liveApproval: `SELECT * FROM ${t("approvals")}
      WHERE trajectory_id = $1 AND tool = $2 AND args_hash = $3 AND capability_id IS NOT DISTINCT FROM $4::text
        AND state <> 'denied' AND expires_at > $5::bigint
      ORDER BY created_at DESC, id COLLATE "C" DESC LIMIT 1`,
    updateApproval: `UPDATE ${t("approvals")} SET
        state = CASE WHEN $3::boolean THEN $4::text ELSE state END,
        decided_at = CASE WHEN $5::boolean THEN $6::bigint ELSE decided_at END,
        approver = CASE WHEN $7::boolean THEN $8::text ELSE approver END,
        note = CASE WHEN $9::boolean THEN $10::text ELSE note END
      WHERE id = $1 AND state = $2
      RETURNING *`,
    listApprovals: `SELECT * FROM ${t("approvals")} WHERE ($1::text IS NULL OR state = $1::text)
      ORDER BY created_at DESC, id COLLATE "C" DESC LIMIT $2::bigint`,
  };
}

export type PostgresSql = ReturnType<typeof postgresSql>;
