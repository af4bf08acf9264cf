/**
 * The embedded default store: one SQLite file (better-sqlite3 12, WAL), safe to share between
 * several OS processes on one machine. Every transition is one statement, so SQLite's write
 * lock makes it atomic across processes; `busy_timeout` makes a writer wait instead of failing.
 */
import type BetterSqlite3 from "better-sqlite3";
import { ToolgateError } from "../../core/errors.js";
import type { ApprovalRecord, ApprovalStore, BudgetStore, RecordStore, RevocationStore, Store } from "../store.js";
import { openSqliteDatabase } from "./sqlite-open.js";
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
import { SQLITE_DDL, SQLITE_SQL, migrateSqlite } from "./sqlite-schema.js";
import { sqliteTasks } from "./tasks-sqlite.js";

export interface SqliteStoreOptions {
  /**
   * Path of the database file; `:memory:` for a private in-process database. Its folder is
   * created (0700) when absent and must be ours alone; the file is created 0600, and a symbolic
   * link, a non-regular file or one owned by another user is refused (state/private.ts).
   */
  path: string;
  /** How long a writer waits for another process's write lock before failing, in ms. Default 5000. */
  busyTimeoutMs?: number;
}

type Statements = { [K in keyof typeof SQLITE_SQL]: BetterSqlite3.Statement };

/** Opens (and creates, idempotently) the SQLite store at `options.path`. */
export async function createSqliteStore(options: SqliteStoreOptions): Promise<Store> {
  const db = await openSqliteDatabase(options.path, options.busyTimeoutMs ?? 5000, SQLITE_DDL, migrateSqlite);
  const sql = Object.fromEntries(
    Object.entries(SQLITE_SQL).map(([name, text]) => [name, db.prepare(text)]),
  ) as Statements;
  let closed = false;
  return {
    kind: "sqlite",
    capabilities: { shared: true, durable: options.path !== ":memory:" },
    records: sqliteRecords(sql),
    revocations: sqliteRevocations(sql),
    budgets: sqliteBudgets(db, sql),
    approvals: sqliteApprovals(db, sql),
    tasks: sqliteTasks(db),
    async close() {
      if (closed) return;
      closed = true;
      db.close();
    },
  };
}

function sqliteRecords(sql: Statements): RecordStore {
  const read = (key: string) => sql.get.get(key) as RecordRow | undefined;
  return {
    async claim(key, input) {
      // The record can vanish between a refused claim and the read (released meanwhile): claim again.
      for (;;) {
        // One row changed = inserted, or an expired COMPLETED record replaced: the record is the claim's.
        if (
          sql.claim.run(key, input.owner, input.fingerprint, input.tool, input.lease_until, input.now, input.now)
            .changes === 1
        ) {
          return { claimed: true, record: claimedRecord(key, input) };
        }
        const existing = read(key);
        if (existing) return { claimed: false, record: recordFromRow(existing) };
      }
    },
    async get(key, now) {
      const row = read(key);
      if (!row) return null;
      const record = recordFromRow(row);
      return completedExpired(record.state, record.expires_at, now) ? null : record;
    },
    async transition(key, owner, from, patch) {
      return sql.transition.run(transitionParams(key, owner, from, patch)).changes === 1;
    },
    async release(key, owner, from) {
      return sql.release.run(key, owner, from).changes === 1;
    },
    async list(query) {
      const rows = sql.list.all({
        after: query.after ?? null,
        state: query.state ?? null,
        now: query.now,
        limit: query.limit ?? DEFAULT_LIST_LIMIT,
      }) as RecordRow[];
      return rows.map(recordFromRow);
    },
  };
}

function sqliteRevocations(sql: Statements): RevocationStore {
  return {
    async revoke(id, input) {
      // Entries whose grant has expired anyway are forgotten here (RevocationStore `until`).
      sql.forgetRevocations.run(input.now);
      sql.revoke.run({ id, reason: input.reason, until: input.until, now: input.now });
    },
    async firstRevoked(ids, now) {
      if (ids.length === 0) return null;
      const revoked = new Set(
        (sql.revokedAmong.all({ ids: JSON.stringify(ids), now }) as Array<{ id: string }>).map((r) => r.id),
      );
      return ids.find((id) => revoked.has(id)) ?? null;
    },
    async list(now) {
      return sql.revocations.all(now) as Array<{
        id: string;
        reason: string | null;
        revoked_at: number;
        until: number | null;
      }>;
    },
  };
}

function sqliteBudgets(db: BetterSqlite3.Database, sql: Statements): BudgetStore {
  const spentOf = (id: string) => (sql.spent.get(id) as { spent: number } | undefined)?.spent ?? 0;
  // Read-check-write under BEGIN IMMEDIATE: the write lock is held from the read on, so two
  // processes spending at once serialise and the limit holds.
  const spend = db.transaction((id: string, amount: number, limit: number) => {
    const spent = spentOf(id);
    if (spent + amount > limit) return { ok: false, remaining: limit - spent };
    sql.setSpent.run(id, spent + amount);
    return { ok: true, remaining: limit - (spent + amount) };
  });
  return {
    async spend(id, amount, limit) {
      checkSpend(id, amount, limit);
      return spend.immediate(id, amount, limit);
    },
    async spent(id) {
      return spentOf(id);
    },
  };
}

function sqliteApprovals(db: BetterSqlite3.Database, sql: Statements): ApprovalStore {
  const create = (record: ApprovalRecord) => {
    try {
      sql.createApproval.run(approvalToRow(record));
    } catch (err) {
      if ((err as { code?: string }).code === "SQLITE_CONSTRAINT_PRIMARYKEY") {
        throw new ToolgateError(
          "approval_exists",
          `approval ${record.id} already exists; create each approval once with a fresh id`,
          { cause: err },
        );
      }
      throw err;
    }
  };
  // Look-up and insert under BEGIN IMMEDIATE: two processes proposing one call serialise on the write lock.
  const createOrReuse = db.transaction((record: ApprovalRecord, now: number): ApprovalRecord => {
    const { tool, args_hash, capability_id, trajectory_id } = record;
    const row = sql.liveApproval.get({ tool, args_hash, capability_id, trajectory_id, now }) as ApprovalRow | undefined;
    if (row) return approvalFromRow(row);
    create(record);
    return record;
  });
  return {
    async create(record: ApprovalRecord) {
      create(record);
    },
    async createOrReuse(record, now) {
      return createOrReuse.immediate(record, now);
    },
    async get(id) {
      const row = sql.getApproval.get(id) as ApprovalRow | undefined;
      return row ? approvalFromRow(row) : null;
    },
    async update(id, from, patch) {
      const row = sql.updateApproval.get(Object.assign(approvalPatchParams(patch), { id, from })) as
        ApprovalRow | undefined;
      return row ? approvalFromRow(row) : null;
    },
    async list(query) {
      const rows = sql.listApprovals.all({ state: query.state ?? null, limit: query.limit ?? -1 }) as ApprovalRow[];
      return rows.map(approvalFromRow);
    },
  };
}
