/**
 * A store whose tasks table was made before a task kept its own stale bound (no `stale_ms`
 * column) opens as it is: the column is added, its old rows read without a bound of their own
 * (the reader's decides), new tasks keep theirs, and a second open changes nothing. On SQLite and
 * PostgreSQL, the table made by the old DDL itself, holding rows written the old way.
 */
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import pg from "pg";
import { afterAll, describe, expect, it } from "vitest";
import type { Store } from "../../../src/idempotency/store.js";
import { createPostgresStore } from "../../../src/idempotency/stores/postgres.js";
import { createSqliteStore } from "../../../src/idempotency/stores/sqlite.js";
import { liveTask } from "../../runtime/held.js";
import { POSTGRES_URL, serviceAvailable } from "../../support/require.js";
import { dropPgSchema } from "../fixtures/service-cleanup.js";

const dir = mkdtempSync(join(tmpdir(), "tg-own-bound-"));
const schema = `tg_test_own_bound_${randomBytes(4).toString("hex")}`;
const postgresUp = await serviceAvailable(
  "PostgreSQL",
  new URL(POSTGRES_URL).hostname,
  Number(new URL(POSTGRES_URL).port || 5432),
);
afterAll(async () => {
  rmSync(dir, { recursive: true, force: true });
  if (postgresUp) await dropPgSchema(schema);
});

/** The tasks table and its live index as the DDL before this column made them. */
const OLD_COLUMNS = `id TEXT PRIMARY KEY, tool TEXT NOT NULL, owner TEXT NOT NULL, status TEXT NOT NULL,
  status_message TEXT, result TEXT, created_at BIGINT NOT NULL, updated_at BIGINT NOT NULL,
  ttl_ms BIGINT NOT NULL, expires_at BIGINT NOT NULL, poll_ms BIGINT NOT NULL`;
const OLD_LIVE_INDEX = `(updated_at, id) WHERE status IN ('working', 'input_required')`;
/** A live task written the old way (11 columns), at `at`. */
const oldRow = (id: string, at: number) => [
  id,
  "held",
  "alice",
  "working",
  null,
  null,
  at,
  at,
  3_600_000,
  at + 3_600_000,
  20,
];

/** What every migrated store must show; `open` opens it again over the same table. */
async function checkMigrated(store: Store, open: () => Promise<Store>, now: number): Promise<void> {
  const old = await store.tasks.get("tk_old", now);
  expect(old).toEqual(liveTask("tk_old", now - 10_000, now - 10_000 + 3_600_000));
  expect(old).not.toHaveProperty("stale_ms");
  // A new task keeps its own bound; the old one goes by the reader's alone.
  await store.tasks.create({ ...liveTask("tk_new", now - 10_000, now + 3_600_000), stale_ms: 60_000 });
  expect((await store.tasks.get("tk_new", now))?.stale_ms).toBe(60_000);
  expect((await store.tasks.stale({ before: now - 5_000, now })).map((t) => t.id)).toEqual(["tk_old"]);
  // Written in the same millisecond, the old one is due first: by its write alone.
  expect((await store.tasks.stale({ before: now - 5_000, now: now + 50_000 })).map((t) => t.id)).toEqual([
    "tk_old",
    "tk_new",
  ]);
  await store.close();
  const again = await open();
  expect((await again.tasks.get("tk_new", now))?.stale_ms).toBe(60_000);
  expect(await again.tasks.get("tk_old", now)).toEqual(old);
  await again.close();
}

describe("a tasks table made before a task kept its own stale bound", () => {
  it("on SQLite gets the column and the index by deadline at open, which the stale query searches", async () => {
    const path = join(dir, "old.db");
    const now = Date.now();
    const db = new Database(path);
    db.exec(`CREATE TABLE tasks (${OLD_COLUMNS}) WITHOUT ROWID; CREATE INDEX tasks_live ON tasks ${OLD_LIVE_INDEX};`);
    db.prepare(`INSERT INTO tasks VALUES (${Array(11).fill("?").join(", ")})`).run(...oldRow("tk_old", now - 10_000));
    db.close();
    const open = () => createSqliteStore({ path });
    await checkMigrated(await open(), open, now);
    const after = new Database(path);
    const columns = after.prepare("SELECT name FROM pragma_table_info('tasks')").pluck().all();
    expect(columns.filter((c) => c === "stale_ms")).toEqual(["stale_ms"]);
    const { SQL } = await import("../../../src/idempotency/stores/tasks-sqlite.js");
    const plan = after
      .prepare(`EXPLAIN QUERY PLAN ${SQL.stale}`)
      .all(...Array(SQL.stale.split("?").length - 1).fill(null)) as Array<{ detail: string }>;
    // The index by deadline, built over the old rows at open, replaces the one by last write.
    expect(plan.map((r) => r.detail).join("\n")).toMatch(/^SEARCH tasks USING (?:COVERING )?INDEX tasks_due /m);
    expect(
      after
        .prepare("SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'tasks' ORDER BY name")
        .pluck()
        .all(),
    ).toEqual(["tasks_due", "tasks_expiry", "tasks_owner"]);
    after.close();
  });

  it.runIf(postgresUp)("on PostgreSQL gets the column and the index by deadline at open", async () => {
    const now = Date.now();
    const table = `"${schema}"."old_tasks"`;
    const pool = new pg.Pool({ connectionString: POSTGRES_URL, max: 1 });
    await pool.query(`CREATE SCHEMA IF NOT EXISTS "${schema}"`);
    await pool.query(`CREATE TABLE ${table} (${OLD_COLUMNS.replace("id TEXT", 'id TEXT COLLATE "C"')})`);
    await pool.query(`CREATE INDEX "old_tasks_live" ON ${table} ${OLD_LIVE_INDEX}`);
    await pool.query(
      `INSERT INTO ${table} VALUES (${Array.from({ length: 11 }, (_, i) => `$${i + 1}`).join(", ")})`,
      oldRow("tk_old", now - 10_000),
    );
    const open = () => createPostgresStore({ url: POSTGRES_URL, schema, tablePrefix: "old_" });
    await checkMigrated(await open(), open, now);
    const { rows } = await pool.query<{ data_type: string }>(
      `SELECT data_type FROM information_schema.columns WHERE table_schema = $1 AND table_name = 'old_tasks' AND column_name = 'stale_ms'`,
      [schema],
    );
    expect(rows).toEqual([{ data_type: "bigint" }]);
    const made = await pool.query<{ indexname: string }>(
      `SELECT indexname FROM pg_indexes WHERE schemaname = $1 AND tablename = 'old_tasks' ORDER BY indexname`,
      [schema],
    );
    expect(made.rows.map((r) => r.indexname)).toEqual([
      "old_tasks_due",
      "old_tasks_expiry",
      "old_tasks_owner",
      "old_tasks_pkey",
    ]);
    await pool.end();
  });
});
