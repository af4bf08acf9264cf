/**
 * The stale-task query reads only live tasks whose own deadline has passed. A sweep runs it every
 * stale_ms / 2 on every replica, while the store keeps each ended task for its TTL and a replica
 * that heartbeats slowly keeps its live tasks unwritten for longer than a reader's bound: a query
 * that walks either grows with them (better-sqlite3 runs it on the gateway's event loop). Many
 * ended tasks, a few live ones past their deadline and a few whose own bound has not passed are
 * written straight into the store's own table; the plan of the store's own query is read back: it
 * searches the index of live tasks by deadline (`tasks_due`) up to now, in its order.
 */
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import pg from "pg";
import { afterAll, describe, expect, it } from "vitest";
import { createPostgresStore } from "../../../src/idempotency/stores/postgres.js";
import { createSqliteStore } from "../../../src/idempotency/stores/sqlite.js";
import { SQL as SQLITE_TASKS_SQL } from "../../../src/idempotency/stores/tasks-sqlite.js";
import { tasksSql } from "../../../src/idempotency/stores/tasks-postgres.js";
import { POSTGRES_URL, serviceAvailable } from "../../support/require.js";
import { dropPgSchema } from "../fixtures/service-cleanup.js";

const ENDED = 20_000;
const LIVE = 5;
/** Live tasks of a replica with a longer bound of its own, not yet due: the query never reads them. */
const SLOW = 3;
const dir = mkdtempSync(join(tmpdir(), "tg-stale-plan-"));
const schema = `tg_test_stale_plan_${randomBytes(4).toString("hex")}`;
const postgresUp = await serviceAvailable(
  "PostgreSQL",
  new URL(POSTGRES_URL).hostname,
  Number(new URL(POSTGRES_URL).port || 5432),
);
afterAll(async () => {
  rmSync(dir, { recursive: true, force: true });
  if (postgresUp) await dropPgSchema(schema);
});

/**
 * Ended tasks written long ago (updated_at 1 … ENDED), then LIVE live ones written after them (old
 * rows without a bound of their own, or one long past), then SLOW whose own bound has not passed.
 */
function rows(): unknown[][] {
  const out: unknown[][] = [];
  const row = (id: string, status: string, at: number, own: number | null = null) => [
    ...[id, "held", "alice", status, null, null, at, at, 1, 1e13, 1],
    own,
  ];
  for (let i = 1; i <= ENDED; i++) out.push(row(`tk_e${i}`, i % 2 ? "completed" : "cancelled", i));
  for (let i = 1; i <= LIVE; i++) out.push(row(`tk_l${i}`, "working", ENDED + i, i % 2 ? null : 1));
  for (let i = 1; i <= SLOW; i++) out.push(row(`tk_s${i}`, "working", ENDED + LIVE + i, 1e9));
  return out;
}
/** The stale query's before and now: every row is written before it, the slow ones' own bound is far off. */
const BEFORE = ENDED + LIVE + SLOW + 1;
const NOW = BEFORE + 10;

describe("the stale-task query", () => {
  it("on SQLite searches the index of live tasks by deadline, up to now and in its order, and finds those whose own bound has passed", async () => {
    const path = join(dir, "plan.db");
    const store = await createSqliteStore({ path });
    const db = new Database(path);
    const insert = db.prepare(`INSERT INTO tasks VALUES (${Array(12).fill("?").join(", ")})`);
    db.transaction(() => rows().forEach((r) => insert.run(...r)))();
    db.exec("ANALYZE");
    const args = SQLITE_TASKS_SQL.stale.split("?").length - 1;
    const plan = (
      db.prepare(`EXPLAIN QUERY PLAN ${SQLITE_TASKS_SQL.stale}`).all(...Array(args).fill(null)) as Array<{
        detail: string;
      }>
    ).map((r) => r.detail);
    const index = plan.map((d) => /^SEARCH tasks USING (?:COVERING )?INDEX (\S+)/.exec(d)?.[1]).find(Boolean);
    expect(index, plan.join("\n")).toBe("tasks_due");
    // A range on the index's first column, the deadline expression (not a scan of every live task), and no sort after it.
    expect(plan, plan.join("\n")).toEqual([
      expect.stringMatching(/^SEARCH tasks USING (?:COVERING )?INDEX tasks_due \(<expr><\?\)$/),
    ]);
    const made = db.prepare("SELECT sql FROM sqlite_master WHERE type = 'index' AND name = ?").get(index) as {
      sql: string;
    };
    expect(made.sql, `the stale query searches ${index}; it should hold only live tasks, by deadline`).toMatch(
      /ON tasks \(updated_at \+ COALESCE\(stale_ms, 0\), id\) WHERE status IN \('working', 'input_required'\)$/,
    );
    const found = await store.tasks.stale({ before: BEFORE, now: NOW });
    expect(found.map((t) => t.id)).toEqual(Array.from({ length: LIVE }, (_, i) => `tk_l${i + 1}`));
    db.close();
    await store.close();
  });

  it.runIf(postgresUp)(
    "on PostgreSQL reads no ended task nor one not yet due, and finds the live ones whose own bound has passed",
    async () => {
      const store = await createPostgresStore({ url: POSTGRES_URL, schema, tablePrefix: "plan_" });
      const table = `"${schema}"."plan_tasks"`;
      const pool = new pg.Pool({ connectionString: POSTGRES_URL, max: 1 });
      const all = rows();
      for (let i = 0; i < all.length; i += 1000) {
        const chunk = all.slice(i, i + 1000);
        await pool.query(
          `INSERT INTO ${table} VALUES ${chunk.map((_, r) => `(${Array.from({ length: 12 }, (_, c) => `$${r * 12 + c + 1}`).join(", ")})`).join(", ")}`,
          chunk.flat(),
        );
      }
      await pool.query(`ANALYZE ${table}`);
      const text = tasksSql(table).stale;
      // The store's own parameters, by position: a text[] takes the live statuses, the bigints before, now and limit in order.
      const types = [
        ...new Set((text.match(/\$\d+::[a-z[\]]+/g) ?? []).sort((a, b) => parseInt(a.slice(1)) - parseInt(b.slice(1)))),
      ];
      const bigints = [String(BEFORE), String(NOW), "100"];
      const args = types.map((p) => (p.endsWith("text[]") ? "'{working,input_required}'" : bigints.shift()!));
      const client = await pool.connect();
      await client.query(`PREPARE stale_plan AS ${text}`);
      const explained = (
        (await client.query(`EXPLAIN (ANALYZE, FORMAT JSON) EXECUTE stale_plan(${args.join(", ")})`)).rows as Array<{
          "QUERY PLAN": Array<{ Plan: PlanNode }>;
        }>
      )[0]!["QUERY PLAN"];
      client.release();
      await pool.end();
      /** Rows a scan of the tasks table read: those it kept and those its filter dropped. */
      const read = (n: PlanNode): number =>
        (n["Relation Name"] === "plan_tasks" ? n["Actual Rows"] + (n["Rows Removed by Filter"] ?? 0) : 0) +
        (n.Plans ?? []).reduce((s, c) => s + read(c), 0);
      const plan = explained[0]!.Plan;
      expect(read(plan), JSON.stringify(plan, null, 1)).toBeLessThanOrEqual(LIVE);
      expect(indexes(plan), JSON.stringify(plan, null, 1)).toEqual(["plan_tasks_due"]);
      const found = await store.tasks.stale({ before: BEFORE, now: NOW });
      expect(found.map((t) => t.id)).toEqual(Array.from({ length: LIVE }, (_, i) => `tk_l${i + 1}`));
      await store.close();
    },
  );
});

/** The indexes a plan searches. */
const indexes = (n: PlanNode): string[] => [
  ...(n["Index Name"] !== undefined ? [n["Index Name"]] : []),
  ...(n.Plans ?? []).flatMap(indexes),
];

interface PlanNode {
  "Relation Name"?: string;
  "Index Name"?: string;
  "Actual Rows": number;
  "Rows Removed by Filter"?: number;
  Plans?: PlanNode[];
}
