/**
 * Task status under concurrency, with a tool whose call the test finishes: two cancels racing
 * the call's completion leave one final status, the one every reader sees and the one the starting
 * session is told of; a cancel that reports success means the task stays cancelled. On SQLite and,
 * across two replicas (the call on one, both cancels on the other), on Redis and PostgreSQL. The
 * race is real (no order is forced): each run checks what must hold whichever side wins.
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { Store } from "../../src/idempotency/store.js";
import { isFinalStatus, type TaskRecord } from "../../src/idempotency/tasks.js";
import { createPostgresStore } from "../../src/idempotency/stores/postgres.js";
import { createRedisStore } from "../../src/idempotency/stores/redis.js";
import { createSqliteStore } from "../../src/idempotency/stores/sqlite.js";
import { createGateway } from "../../src/runtime/gateway.js";
import { createTaskRunner } from "../../src/runtime/tasks.js";
import { POSTGRES_URL, REDIS_URL, serviceAvailable } from "../support/require.js";
import { heldTool, whenHeld } from "./held.js";

const held = heldTool();

function replica(store: Store) {
  const gateway = createGateway({ tools: [held], store, audit: false });
  const tasks = createTaskRunner(gateway, { store, poll_ms: 20 });
  return {
    tasks,
    async close() {
      tasks.close();
      await gateway.close({ grace_ms: 0 });
    },
  };
}

async function settled(read: () => Promise<TaskRecord | null>): Promise<TaskRecord> {
  for (;;) {
    const t = await read();
    if (t !== null && isFinalStatus(t.status) && (t.status !== "cancelled" || t.result !== null)) return t;
    await new Promise((r) => setTimeout(r, 10));
  }
}

let n = 0;
async function race(here: ReturnType<typeof replica>, there: ReturnType<typeof replica>) {
  const name = `race-${++n}`;
  const told: string[] = [];
  const started = await here.tasks.start(
    { trajectory_id: "t-race", turn: 1, call_id: name, tool: "held", arguments: { name } },
    { owner: "alice", onStatus: (t) => told.push(t.status) },
  );
  const release = await whenHeld(name);
  const [first, second] = await Promise.all([
    there.tasks.cancel(started.id, "alice"),
    there.tasks.cancel(started.id, "alice"),
    Promise.resolve().then(release),
  ]);
  const final = await settled(() => here.tasks.get(started.id, "alice"));
  const elsewhere = await there.tasks.get(started.id, "alice");
  expect(elsewhere?.status).toBe(final.status);
  expect(["cancelled", "completed"]).toContain(final.status);
  const won = [first, second].filter((c) => c !== null && !c.already_final);
  expect(won.length, "at most one cancel moves the task").toBeLessThanOrEqual(1);
  if (won.length === 1) expect(final.status).toBe("cancelled");
  // The starting side is told one final status (it may first be told of none while the call runs), and it is the stored one.
  while (told.filter((s) => isFinalStatus(s as never)).length === 0) await new Promise((r) => setTimeout(r, 10));
  expect(told.filter((s) => isFinalStatus(s as never))).toEqual([final.status]);
  return final.status;
}

describe("two cancels racing a completion", { timeout: 60_000 }, () => {
  it("on one SQLite store: one final status, every time", async () => {
    const store = await createSqliteStore({ path: join(mkdtempSync(join(tmpdir(), "tg-race-")), "state.db") });
    const r = replica(store);
    for (let i = 0; i < 10; i++) await race(r, r);
    await r.close();
  });

  const shared: Array<[string, () => Promise<boolean>, (tag: string) => Promise<Store>]> = [
    [
      "Redis",
      () => serviceAvailable("Redis", "127.0.0.1", 6379),
      (tag) => createRedisStore({ url: REDIS_URL, prefix: `tg-race-${tag}:` }),
    ],
    [
      "PostgreSQL",
      () => serviceAvailable("PostgreSQL", "127.0.0.1", 5432),
      (tag) => createPostgresStore({ url: POSTGRES_URL, tablePrefix: `tg_race_${tag}_` }),
    ],
  ];
  it.each(shared)("across two replicas on %s: the call on one, both cancels on the other", async (_name, up, open) => {
    if (!(await up())) return;
    const tag = `${Date.now().toString(36)}${Math.random().toString(36).slice(2, 6)}`;
    const a = replica(await open(tag));
    const b = replica(await open(tag));
    for (let i = 0; i < 5; i++) await race(a, b);
    await a.close();
    await b.close();
  });
});
