/**
 * The PostgreSQL store (pg Pool, loaded lazily). Tables are created idempotently at open under a
 * transaction-level advisory lock, so replicas starting at once do not race on DDL. Every
 * transition is one statement: the claim an INSERT … ON CONFLICT, transitions owner-fenced
 * UPDATEs, the budget spend a conditional upsert, approvals a compare-and-set on state.
 */
import { createHash } from "node:crypto";
import type { Pool, QueryResult, QueryResultRow } from "pg";
import { ToolgateError } from "../../core/errors.js";
import type { ApprovalRecord, ApprovalStore, BudgetStore, RecordStore, RevocationStore, Store } from "../store.js";
import { approvalBinding } from "./approval-binding.js";
import { connectPostgres } from "./postgres-connect.js";
import { checkIdentifiers, postgresDdl, postgresSql } from "./postgres-schema.js";
import type { PostgresSql } from "./postgres-schema.js";
import {
  DEFAULT_LIST_LIMIT,
  approvalFromRow,
  claimedRecord,
  approvalPatchParams,
  approvalToRow,
  checkSpend,
  completedExpired,
  recordFromRow,
  transitionParams,
} from "./rows.js";
import type { ApprovalRow, RecordRow } from "./rows.js";
import { postgresTasks } from "./tasks-postgres.js";

export interface PostgresStoreOptions {
  /** `postgres://USER[:PASSWORD]@HOST:PORT/DATABASE` (or `postgresql://`). */
  url: string;
  /** Schema holding the tables, created if missing. Default `public`. */
  schema?: string;
  /** Prefix of the table names, so stores (and test files) can share a schema. Default `toolgate_`. */
  tablePrefix?: string;
  /** Connect timeout in ms; a server that does not answer in time fails with `store_unavailable`. Default 2000. */
  connectTimeoutMs?: number;
  /** A query not answered within this many ms fails instead of waiting on a hung server. Default 10000. */
  queryTimeoutMs?: number;
  /** Pool size. Default 10. */
  maxConnections?: number;
  /**
   * Commit every record write after the claim (fenced transitions, releases) with
   * `synchronous_commit = off`, on a second pool of the same size: such a commit returns without
   * waiting for its WAL flush, which takes a settle from two disk flushes to one. The claim is
   * always flushed before the call runs, and a later flushed commit flushes every earlier one.
   * The trade: a PostgreSQL or OS crash may lose the last moments (up to 3 × wal_writer_delay)
   * of these writes, and a lost write leaves the record as it was before it. A lost completion
   * leaves the claim, which reads IN_DOUBT once its lease passes: nothing runs twice, but a
   * repeat is refused until a probe or an operator settles it instead of getting the replay.
   * Default false (every write flushed).
   */
  asyncTransitions?: boolean;
}

type Query = <R extends QueryResultRow>(name: keyof PostgresSql, values: unknown[]) => Promise<QueryResult<R>>;

/** The rows of a query. */
const rowsOf = async <R extends QueryResultRow>(result: Promise<QueryResult<R>>): Promise<R[]> => (await result).rows;

/** Opens the PostgreSQL store, creating its tables; fails fast with `store_unavailable` when the server does not
 * answer. */
export async function createPostgresStore(options: PostgresStoreOptions): Promise<Store> {
  const schema = options.schema ?? "public";
  const prefix = options.tablePrefix ?? "toolgate_";
  checkIdentifiers(schema, prefix);
  const connection = await connectPostgres(options, postgresDdl(schema, prefix), `toolgate-ddl:${schema}.${prefix}`);
  const pool = connection.pool;
  const texts = postgresSql(schema, prefix);
  // Named prepared statements: parsed once per connection. The name carries a hash of the
  // text so stores with other schemas or prefixes on the same pool never collide.
  const tag = createHash("sha256").update(`${schema}.${prefix}`).digest("hex").slice(0, 12);
  const queryOn =
    (on: Pool): Query =>
    (name, values) =>
      on.query({ name: `tg_${tag}_${name}`, text: texts[name], values });
  const query = queryOn(pool);
  const asyncPool = options.asyncTransitions ? connection.pool2("-c synchronous_commit=off") : null;
  let closed = false;
  return {
    kind: "postgres",
    capabilities: { shared: true, durable: true },
    records: postgresRecords(query, asyncPool ? queryOn(asyncPool) : query),
    revocations: postgresRevocations(query),
    budgets: postgresBudgets(query),
    approvals: postgresApprovals(query, pool, texts, `${schema}.${prefix}`),
    tasks: postgresTasks(pool, schema, prefix),
    async close() {
      if (closed) return;
      closed = true;
      await Promise.all([pool.end(), asyncPool?.end()]);
    },
  };
}

/** `write` runs the writes after the claim (`asyncTransitions`); everything else runs on `query`. */
function postgresRecords(query: Query, write: Query): RecordStore {
  return {
    async claim(key, input) {
      // The record can vanish between a refused claim and the read (released meanwhile): claim again.
      for (;;) {
        // One row = inserted, or an expired COMPLETED record replaced: the record is the claim's.
        const won = await query("claim", [
          key,
          input.owner,
          input.fingerprint,
          input.tool,
          input.lease_until,
          input.now,
        ]);
        if (won.rowCount === 1) return { claimed: true, record: claimedRecord(key, input) };
        const [existing] = await rowsOf(query<RecordRow>("get", [key]));
        if (existing) return { claimed: false, record: recordFromRow(existing) };
      }
    },
    async get(key, now) {
      const [row] = await rowsOf(query<RecordRow>("get", [key]));
      if (!row) return null;
      const record = recordFromRow(row);
      return completedExpired(record.state, record.expires_at, now) ? null : record;
    },
    async transition(key, owner, from, patch) {
      return (await write("transition", transitionParams(key, owner, from, patch))).rowCount === 1;
    },
    async release(key, owner, from) {
      return (await write("release", [key, owner, from])).rowCount === 1;
    },
    async list(q) {
      const rows = await rowsOf(
        query<RecordRow>("list", [q.after ?? null, q.state ?? null, q.now, q.limit ?? DEFAULT_LIST_LIMIT]),
      );
      return rows.map(recordFromRow);
    },
  };
}

function postgresRevocations(query: Query): RevocationStore {
  return {
    async revoke(id, input) {
      // Entries whose grant has expired anyway are forgotten here (RevocationStore `until`).
      await query("forgetRevocations", [input.now]);
      await query("revoke", [id, input.reason, input.now, input.until]);
    },
    async firstRevoked(ids, now) {
      if (ids.length === 0) return null;
      const revoked = new Set((await rowsOf(query<{ id: string }>("revokedAmong", [ids, now]))).map((r) => r.id));
      return ids.find((id) => revoked.has(id)) ?? null;
    },
    async list(now) {
      const rows = await rowsOf(
        query<{ id: string; reason: string | null; revoked_at: string; until: string | null }>("revocations", [now]),
      );
      return rows.map((r) => ({
        id: r.id,
        reason: r.reason,
        revoked_at: Number(r.revoked_at),
        until: r.until === null ? null : Number(r.until),
      }));
    },
  };
}

function postgresBudgets(query: Query): BudgetStore {
  const spentOf = async (id: string) => Number((await rowsOf(query<{ spent: number }>("spent", [id])))[0]?.spent ?? 0);
  return {
    async spend(id, amount, limit) {
      checkSpend(id, amount, limit);
      const [row] = await rowsOf(query<{ spent: number }>("spend", [id, amount, limit]));
      if (row) return { ok: true, remaining: limit - Number(row.spent) };
      return { ok: false, remaining: limit - (await spentOf(id)) };
    },
    spent: spentOf,
  };
}

function postgresApprovals(query: Query, pool: Pool, texts: PostgresSql, namespace: string): ApprovalStore {
  const values = (record: ApprovalRecord) => {
    const r = approvalToRow(record);
    return [
      r.id,
      r.tool,
      r.args_hash,
      r.arguments,
      r.capability_id,
      r.trajectory_id,
      r.state,
      r.created_at,
      r.expires_at,
      r.decided_at,
      r.approver,
      r.note,
    ];
  };
  const exists = (record: ApprovalRecord) =>
    new ToolgateError(
      "approval_exists",
      `approval ${record.id} already exists; create each approval once with a fresh id`,
    );
  return {
    async create(record) {
      if ((await query("createApproval", values(record))).rowCount !== 1) throw exists(record);
    },
    async createOrReuse(record, now) {
      // Look-up and insert in one transaction holding an advisory lock on the call, so two
      // replicas proposing it at once serialise; READ COMMITTED lets the second see the first's row.
      const client = await pool.connect();
      try {
        await client.query("BEGIN");
        await client.query("SELECT pg_advisory_xact_lock(hashtext($1))", [
          `toolgate-approval:${namespace}:${approvalBinding(record)}`,
        ]);
        const found = await client.query<ApprovalRow>(texts.liveApproval, [
          record.trajectory_id,
          record.tool,
          record.args_hash,
          record.capability_id,
          now,
        ]);
        const created =
          found.rows.length === 0 ? (await client.query(texts.createApproval, values(record))).rowCount === 1 : false;
        await client.query("COMMIT");
        if (found.rows[0]) return approvalFromRow(found.rows[0]);
        if (!created) throw exists(record);
        return record;
      } catch (err) {
        await client.query("ROLLBACK").catch(() => {});
        throw err;
      } finally {
        client.release();
      }
    },
    async get(id) {
      const [row] = await rowsOf(query<ApprovalRow>("getApproval", [id]));
      return row ? approvalFromRow(row) : null;
    },
    async update(id, from, patch) {
      const p = approvalPatchParams(patch);
      const [row] = await rowsOf(
        query<ApprovalRow>("updateApproval", [
          id,
          from,
          p.set_state === 1,
          p.state,
          p.set_decided === 1,
          p.decided_at,
          p.set_approver === 1,
          p.approver,
          p.set_note === 1,
          p.note,
        ]),
      );
      return row ? approvalFromRow(row) : null;
    },
    async list(q) {
      const rows = await rowsOf(query<ApprovalRow>("listApprovals", [q.state ?? null, q.limit ?? null]));
      return rows.map(approvalFromRow);
    },
  };
}
