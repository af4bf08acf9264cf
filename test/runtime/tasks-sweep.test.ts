/**
 * The live stale-task sweep: a task no process writes any more is failed by the runner's timer
 * without anyone reading it; a task still written (its process heartbeats it) is never failed,
 * however long it has run; a completion racing the sweep leaves one final status, and a completed
 * task stays completed. On SQLite, Redis and PostgreSQL, each replica its own runner on one store.
 * The timer keeps no process alive and stops on close.
 */
import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it, vi } from "vitest";
import { ToolgateError } from "../../src/core/errors.js";
import type { Store } from "../../src/idempotency/store.js";
import { createMemoryStore } from "../../src/idempotency/stores/memory.js";
import { createPostgresStore } from "../../src/idempotency/stores/postgres.js";
import { createRedisStore } from "../../src/idempotency/stores/redis.js";
import { createSqliteStore } from "../../src/idempotency/stores/sqlite.js";
import { isFinalStatus, type TaskRecord } from "../../src/idempotency/tasks.js";
import { createGateway } from "../../src/runtime/gateway.js";
import { createTaskRunner, type TaskRunnerOptions } from "../../src/runtime/tasks.js";
import { dropPgSchema, dropRedisPrefix } from "../idempotency/fixtures/service-cleanup.js";
import { POSTGRES_URL, REDIS_URL, projectRoot, serviceAvailable } from "../support/require.js";
import { heldTool, liveTask, whenHeld } from "./held.js";

const run = randomBytes(4).toString("hex");
const dir = mkdtempSync(join(tmpdir(), "tg-sweep-"));
const redisPrefix = `tg-test-sweep-${run}:`;
const pgSchema = `tg_test_sweep_${run}`;
const redisUp = await serviceAvailable("Redis", new URL(REDIS_URL).hostname, Number(new URL(REDIS_URL).port || 6379));
const postgresUp = await serviceAvailable(
  "PostgreSQL",
  new URL(POSTGRES_URL).hostname,
  Number(new URL(POSTGRES_URL).port || 5432),
);
afterAll(async () => {
  rmSync(dir, { recursive: true, force: true });
  if (redisUp) await dropRedisPrefix(redisPrefix);
  if (postgresUp) await dropPgSchema(pgSchema);
});

const held = heldTool();
/** As `held`, but a call whose signal aborts stops. */
const heldStops = heldTool({ name: "held_stops", stopsOnAbort: true });

/** Reads until `ok` holds; the test's own timeout bounds it. */
async function eventually<T>(read: () => Promise<T>, ok: (v: T) => boolean): Promise<T> {
  for (;;) {
    const v = await read();
    if (ok(v)) return v;
    await new Promise((r) => setTimeout(r, 10));
  }
}

function replica(store: Store, options: Partial<TaskRunnerOptions> = {}) {
  const gateway = createGateway({ tools: [held, heldStops], store, audit: false });
  const tasks = createTaskRunner(gateway, { store, poll_ms: 20, ...options });
  return {
    tasks,
    async close() {
      tasks.close();
      await gateway.close({ grace_ms: 0 });
    },
  };
}

/** A task as a process that then died left it: live, last written `age_ms` ago. */
const orphan = (id: string, now: number, age_ms: number): TaskRecord =>
  liveTask(id, now - age_ms, now - age_ms + 3_600_000);

const stores: Array<[string, boolean, (tag: string) => Promise<Store>]> = [
  ["SQLite", true, async (tag) => createSqliteStore({ path: join(dir, `${tag}.db`) })],
  ["Redis", redisUp, (tag) => createRedisStore({ url: REDIS_URL, prefix: `${redisPrefix}${tag}:` })],
  [
    "PostgreSQL",
    postgresUp,
    (tag) => createPostgresStore({ url: POSTGRES_URL, schema: pgSchema, tablePrefix: `${tag}_` }),
  ],
];

describe.each(stores)("the stale-task sweep on %s", { timeout: 60_000 }, (_name, up, open) => {
  it.runIf(up)("fails a task no process writes any more, with no one reading it, by its timer", async () => {
    const tag = `timer${randomBytes(3).toString("hex")}`;
    const store = await open(tag);
    const r = replica(store, { stale_ms: 200 });
    const dead = orphan(`tk_${tag}_dead`, Date.now(), 10_000);
    await store.tasks.create(dead);
    // Read from the store itself: a read through a runner would fail it on its own.
    const failed = await eventually(
      () => store.tasks.get(dead.id, Date.now()),
      (t) => t?.status === "failed",
    );
    expect(failed!.status_message).toMatch(
      /^the toolgate process running this task stopped writing it \d+ s ago; whether the call finished is unknown: ask for its record \(toolgate records\) before running it again$/,
    );
    expect(await r.tasks.sweep()).toBe(0);
    await r.close();
    await store.close();
  });

  it.runIf(up)(
    "never fails a task its process still writes, however long it has run; the one it runs itself neither",
    async () => {
      const tag = `live${randomBytes(3).toString("hex")}`;
      const clock = { now: Date.now() };
      // Stale bounds far above the real time the test takes: only the sweeps it calls run.
      const a = replica(await open(tag), { clock: () => clock.now, ttl_ms: 10 * 3_600_000, stale_ms: 600_000 });
      const storeB = await open(tag);
      const b = replica(storeB, { clock: () => clock.now, stale_ms: 600_000 });
      const name = `live-${tag}`;
      const started = await a.tasks.start(
        { trajectory_id: "t-sweep", turn: 1, call_id: name, tool: "held", arguments: { name } },
        { owner: "alice" },
      );
      const release = await whenHeld(name);
      // The task has run past b's stale_ms; its process writes it at its next poll.
      clock.now += 1_200_000;
      await eventually(
        () => storeB.tasks.get(started.id, clock.now),
        (t) => t?.updated_at === clock.now,
      );
      expect(await b.tasks.sweep()).toBe(0);
      expect(await a.tasks.sweep(), "a runner does not sweep what it runs").toBe(0);
      expect((await b.tasks.get(started.id, "alice"))?.status).toBe("working");
      release();
      const done = await eventually(
        () => b.tasks.get(started.id, "alice"),
        (t) => t !== null && isFinalStatus(t.status),
      );
      expect(done!.status).toBe("completed");
      await a.close();
      await b.close();
    },
  );

  it.runIf(up)(
    "a replica with a short stale_ms never fails the live task of one that heartbeats slowly; a truly orphaned one it does",
    async () => {
      const tag = `own${randomBytes(3).toString("hex")}`;
      const clock = { now: Date.now() };
      // a writes its tasks once a poll with room for an hour between writes; b's bound is 5 minutes.
      // Both bounds are far above the real time the test takes: only the sweeps it calls run.
      const slow = { clock: () => clock.now, ttl_ms: 10 * 3_600_000, poll_ms: 1_000, stale_ms: 3_600_000 };
      const a = replica(await open(tag), slow);
      const storeB = await open(tag);
      const b = replica(storeB, { clock: () => clock.now, ttl_ms: 10 * 3_600_000, stale_ms: 300_000 });
      const name = `own-${tag}`;
      const started = await a.tasks.start(
        { trajectory_id: "t-sweep", turn: 1, call_id: name, tool: "held", arguments: { name } },
        { owner: "alice" },
      );
      const release = await whenHeld(name);
      expect((await storeB.tasks.get(started.id, clock.now))?.stale_ms).toBe(3_600_000);
      // Dead ones: a's bound long past; one stored without a bound of its own (b's decides); and one of
      // a's bound, written past b's bound but within its own.
      const start = clock.now;
      const dead = { ...liveTask(`tk_${tag}_dead`, start - 4_000_000, start + 3_600_000), stale_ms: 3_600_000 };
      const unbound = orphan(`tk_${tag}_unbound`, start, 1_200_000);
      const quiet = { ...orphan(`tk_${tag}_quiet`, start, 1_200_000), stale_ms: 3_600_000 };
      for (const t of [dead, unbound, quiet]) await storeB.tasks.create(t);
      // a's heartbeat has not landed for twenty minutes (past b's bound, within a's): b sweeps and reads,
      // racing it.
      clock.now += 1_200_000;
      const [swept] = await Promise.all([b.tasks.sweep(), b.tasks.get(started.id, "alice")]);
      expect(swept).toBe(2);
      const status = async (id: string) => (await storeB.tasks.get(id, clock.now))?.status;
      expect({
        running: await status(started.id),
        dead: await status(dead.id),
        unbound: await status(unbound.id),
        quiet: await status(quiet.id),
      }).toEqual({ running: "working", dead: "failed", unbound: "failed", quiet: "working" });
      expect((await b.tasks.get(quiet.id, "alice"))?.status, "read through b: its own bound holds").toBe("working");
      release();
      const done = await eventually(
        () => b.tasks.get(started.id, "alice"),
        (t) => t !== null && isFinalStatus(t.status),
      );
      expect(done!.status).toBe("completed");
      await a.close();
      await b.close();
    },
  );

  it.runIf(up)(
    "a task another replica's sweep failed while it still runs here is stopped, and its owner's place is free again",
    async () => {
      const tag = `gone${randomBytes(3).toString("hex")}`;
      const a = replica(await open(tag), { max_live_per_owner: 1 });
      // b's clock runs ahead of a's by more than its stale_ms: the task a runs looks stale to b.
      const b = replica(await open(tag), { clock: () => Date.now() + 1_200_000, stale_ms: 600_000 });
      const name = `failed-${tag}`;
      const started = await a.tasks.start(
        { trajectory_id: "t-sweep", turn: 1, call_id: name, tool: "held_stops", arguments: { name } },
        { owner: "alice" },
      );
      await whenHeld(name);
      expect(await b.tasks.sweep()).toBe(1);
      // Failed, nobody can cancel it any more (tasks/cancel answers already final): a's next poll stops it.
      expect((await b.tasks.cancel(started.id, "alice"))?.already_final).toBe(true);
      const next = `next-${tag}`;
      const again = await eventually(
        () =>
          a.tasks
            .start(
              { trajectory_id: "t-sweep", turn: 2, call_id: next, tool: "held", arguments: { name: next } },
              { owner: "alice" },
            )
            .catch(() => null),
        (t) => t !== null,
      );
      expect((await a.tasks.get(started.id, "alice"))?.status).toBe("failed");
      (await whenHeld(next))();
      expect(
        (await eventually(
          () => a.tasks.get(again!.id, "alice"),
          (t) => t?.status === "completed",
        ))!.status,
      ).toBe("completed");
      await a.close();
      await b.close();
    },
  );

  it.runIf(up)(
    "a completion racing the sweep: exactly one wins, every reader sees it, and a completed task stays completed",
    async () => {
      const tag = `race${randomBytes(3).toString("hex")}`;
      const a = replica(await open(tag));
      // b's clock runs ahead of a's by more than its stale_ms, so every task a runs looks stale to b;
      // the stale bound is far above the real time the test takes, so only the sweeps it calls run.
      const b = replica(await open(tag), { clock: () => Date.now() + 1_200_000, stale_ms: 600_000 });
      const outcomes = { completed: 0, failed: 0 };
      for (let i = 0; i < 8; i++) {
        const name = `race-${tag}-${i}`;
        const told: string[] = [];
        const started = await a.tasks.start(
          { trajectory_id: "t-sweep", turn: 1, call_id: name, tool: "held", arguments: { name } },
          { owner: "alice", onStatus: (t) => told.push(t.status) },
        );
        const release = await whenHeld(name);
        const [swept] = await Promise.all([b.tasks.sweep(), Promise.resolve().then(release)]);
        const final = await eventually(
          () => a.tasks.get(started.id, "alice"),
          (t) => t !== null && isFinalStatus(t.status),
        );
        // a's own final write happens after its call answered: wait until it has tried.
        await eventually(
          async () => told,
          (t) => final!.status === "failed" || t.includes("completed"),
        );
        expect(swept <= 1).toBe(true);
        expect(final!.status).toBe(swept === 1 ? "failed" : "completed");
        expect((await b.tasks.get(started.id, "alice"))?.status).toBe(final!.status);
        if (final!.status === "completed") {
          expect(told.filter((s) => isFinalStatus(s as never))).toEqual(["completed"]);
          expect(await b.tasks.sweep()).toBe(0);
          expect((await b.tasks.get(started.id, "alice"))?.status).toBe("completed");
        } else expect(told).not.toContain("completed");
        outcomes[final!.status as "completed" | "failed"]++;
      }
      expect(outcomes.completed + outcomes.failed).toBe(8);
      await a.close();
      await b.close();
    },
  );
});

describe("the sweep's timer", () => {
  it("runs every stale_ms / 2 and stops on close", async () => {
    vi.useFakeTimers({ toFake: ["setInterval", "clearInterval"] });
    try {
      const store = createMemoryStore();
      const gateway = createGateway({ tools: [held, heldStops], store, audit: false });
      const now = Date.now();
      await store.tasks.create(orphan("tk_fake_timer", now, 5_000));
      const before = vi.getTimerCount();
      const tasks = createTaskRunner(gateway, { store, poll_ms: 20, stale_ms: 1_000, clock: () => now });
      expect(vi.getTimerCount()).toBe(before + 1);
      await vi.advanceTimersByTimeAsync(499);
      expect((await store.tasks.get("tk_fake_timer", now))?.status).toBe("working");
      await vi.advanceTimersByTimeAsync(1);
      await eventually(
        () => store.tasks.get("tk_fake_timer", now),
        (t) => t?.status === "failed",
      );
      tasks.close();
      expect(vi.getTimerCount()).toBe(before);
      await gateway.close({ grace_ms: 0 });
    } finally {
      vi.useRealTimers();
    }
  });

  it("after a full batch sweeps the rest soon, a batch a turn of the event loop, not a period later", async () => {
    vi.useFakeTimers({ toFake: ["setInterval", "clearInterval"] });
    try {
      const store = createMemoryStore();
      const gateway = createGateway({ tools: [held, heldStops], store, audit: false });
      const now = Date.now();
      for (let i = 0; i < 250; i++)
        await store.tasks.create(orphan(`tk_many${String(i).padStart(3, "0")}`, now, 5_000));
      // Each batch's query notes how many turns of the event loop (immediates) ran before it.
      let turns = 0;
      const seen: number[] = [];
      const stale = store.tasks.stale.bind(store.tasks);
      store.tasks.stale = (query) => {
        seen.push(turns);
        setImmediate(() => turns++);
        return stale(query);
      };
      const tasks = createTaskRunner(gateway, { store, poll_ms: 20, stale_ms: 1_000, clock: () => now });
      await vi.advanceTimersByTimeAsync(500);
      const left = () => store.tasks.list({ owner: "alice", now, limit: 1000 });
      // No more interval ticks: the 150 past the first batch are failed by the batches it re-armed.
      await eventually(left, (ts) => ts.every((t) => t.status === "failed"));
      expect((await left()).length).toBe(250);
      expect(seen).toEqual([0, 1, 2]);
      tasks.close();
      await gateway.close({ grace_ms: 0 });
    } finally {
      vi.useRealTimers();
    }
  });

  it("a full batch that fails none (each was written or ended meanwhile) waits for the period", async () => {
    vi.useFakeTimers({ toFake: ["setInterval", "clearInterval", "setImmediate", "clearImmediate"] });
    try {
      const store = createMemoryStore();
      const gateway = createGateway({ tools: [held, heldStops], store, audit: false });
      const now = Date.now();
      let calls = 0;
      // A store answering a full batch every time, of tasks it no longer holds: no fenced fail lands.
      const full = Array.from({ length: 100 }, (_, i) => orphan(`tk_moved${i}`, now, 5_000));
      store.tasks.stale = async () => (calls++, full);
      const tasks = createTaskRunner(gateway, { store, poll_ms: 20, stale_ms: 1_000, clock: () => now });
      await vi.advanceTimersByTimeAsync(500);
      expect(calls).toBe(1);
      await vi.advanceTimersByTimeAsync(499);
      expect(calls, "no batch before the period").toBe(1);
      await vi.advanceTimersByTimeAsync(1);
      expect(calls).toBe(2);
      tasks.close();
      await gateway.close({ grace_ms: 0 });
    } finally {
      vi.useRealTimers();
    }
  });

  it("keeps no process alive: a process whose runner was never closed exits on its own", async () => {
    const child = spawn(
      process.execPath,
      ["--import", "tsx", join(projectRoot, "test", "runtime", "fixtures", "sweep-exit.ts"), join(dir, "exit.db")],
      { cwd: projectRoot, stdio: ["ignore", "pipe", "pipe"] },
    );
    let out = "";
    child.stdout.on("data", (d: Buffer) => (out += d.toString()));
    child.stderr.on("data", (d: Buffer) => (out += d.toString()));
    const code = await new Promise<number | null>((done) => child.on("exit", (c) => done(c)));
    expect({ code, out: out.trim() }).toEqual({ code: 0, out: "sweeping" });
  }, 60_000);

  it("refuses a stale_ms below twice poll_ms, and a poll_ms that is no whole number, naming both and the fix", () => {
    const gateway = createGateway({ tools: [held], store: createMemoryStore(), audit: false });
    const make =
      (stale_ms: unknown, poll_ms: unknown = 1000) =>
      () =>
        createTaskRunner(gateway, {
          store: createMemoryStore(),
          poll_ms: poll_ms as number,
          stale_ms: stale_ms as number,
        });
    expect(make(1999)).toThrow(ToolgateError);
    expect(make(1999)).toThrowErrorMatchingInlineSnapshot(
      `[ToolgateError: stale_ms must be a whole number of milliseconds at least twice poll_ms (a running task is written once a poll, so one not written for stale_ms belonged to a process that stopped; the rest is room for the store's latency and the replicas' clock skew); received stale_ms 1999 with poll_ms 1000: set stale_ms to 2000 or more (default 60000), or lower poll_ms]`,
    );
    // One poll and a bit, accepted before: a heartbeat one store round trip late failed the task.
    expect(make(1001)).toThrow("received stale_ms 1001 with poll_ms 1000");
    expect(make(1.5)).toThrow("received stale_ms 1.5 with poll_ms 1000");
    expect(make("60000")).toThrow('received stale_ms "60000" with poll_ms 1000');
    expect(make(60_000, 0)).toThrow(
      "poll_ms must be a whole number of milliseconds, 1 or more (how often a running task is written and read back), e.g. 1000; received 0",
    );
    expect(make(60_000, Number.NaN)).toThrow("poll_ms must be a whole number of milliseconds, 1 or more");
    expect(make(60_000, "1000")).toThrow('received "1000"');
    expect(() => make(2000)().close()).not.toThrow();
  });
});
