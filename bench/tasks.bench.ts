/**
 * Long calls: what a progress receiver costs a call that reports none (an A0 no-op through the
 * gateway with and without `progress`), and what one poll of a running task costs the store (the
 * runner's heartbeat, a compare-and-set update of the task on SQLite, against the raw driver's
 * single-row UPDATE on a table of the same shape in the same file).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import type { ToolSpec } from "../src/core/tool.js";
import { createMemoryStore } from "../src/idempotency/stores/memory.js";
import { createSqliteStore } from "../src/idempotency/stores/sqlite.js";
import { createGateway } from "../src/runtime/gateway.js";
import type { Harness } from "./harness.js";

const schema = {
  $schema: "https://json-schema.org/draft/2020-12/schema",
  type: "object",
  properties: { path: { type: "string", maxLength: 1024 } },
  required: ["path"],
  additionalProperties: false,
};

export default async function bench(h: Harness): Promise<void> {
  const tool = {
    name: "noop",
    description: "noop",
    inputSchema: schema,
    effect: "read",
    handler: () => null,
  } as ToolSpec;
  const gw = createGateway({ tools: [tool], store: createMemoryStore(), audit: false });
  let n = 0;
  const p = () => ({ trajectory_id: "bench", turn: 0, call_id: `c${n++}`, tool: "noop", arguments: { path: "/a" } });
  const progress = { progress: () => {} };
  await h.compare({
    area: "long calls",
    hot_path: "A0 no-op call with a progress receiver",
    toolgate: () => gw.call(p(), progress),
    peer: { name: "the same call without one", fn: () => gw.call(p()) },
    batch: 50,
    rounds: 40,
    note: "the receiver's cost when the tool reports nothing: one relay per call",
  });
  await gw.close();

  const dir = mkdtempSync(join(tmpdir(), "toolgate-bench-tasks-"));
  try {
    const path = join(dir, "state.db");
    const store = await createSqliteStore({ path });
    const now = Date.now();
    await store.tasks.create({
      id: "tk_bench",
      tool: "bash_execute",
      owner: "bench",
      status: "working",
      status_message: null,
      result: null,
      created_at: now,
      updated_at: now,
      ttl_ms: 3_600_000,
      expires_at: now + 3_600_000,
      poll_ms: 1000,
    });
    const raw = new Database(path);
    raw.pragma("journal_mode = WAL");
    raw.pragma("synchronous = NORMAL");
    raw.exec(
      "CREATE TABLE IF NOT EXISTS bench_tasks (id TEXT PRIMARY KEY, status TEXT, status_message TEXT, updated_at INTEGER) WITHOUT ROWID",
    );
    raw.prepare("INSERT OR REPLACE INTO bench_tasks VALUES ('tk_bench', 'working', NULL, 0)").run();
    const update = raw.prepare("UPDATE bench_tasks SET status_message = ?, updated_at = ? WHERE id = ?");
    let t = now;
    await h.compare({
      area: "long calls",
      hot_path: "task heartbeat (status CAS update), SQLite",
      toolgate: () =>
        store.tasks.update("tk_bench", ["working"], {
          status: "working",
          status_message: "running for 3 s; 12 B of stdout",
          now: ++t,
        }),
      peer: {
        name: "better-sqlite3 single-row UPDATE",
        fn: () => update.run("running for 3 s; 12 B of stdout", ++t, "tk_bench"),
      },
      batch: 100,
      rounds: 30,
      note: "one poll of a running task: once a second per task",
    });
    raw.close();
    await store.close();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
