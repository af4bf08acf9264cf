import { randomBytes } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import type { Observation } from "../../src/core/observation.js";
import { ToolgateError } from "../../src/core/errors.js";
import type { Store } from "../../src/idempotency/store.js";
import { createPostgresStore } from "../../src/idempotency/stores/postgres.js";
import { createRedisStore } from "../../src/idempotency/stores/redis.js";
import { createSqliteStore } from "../../src/idempotency/stores/sqlite.js";
import { createGateway } from "../../src/runtime/gateway.js";
import { createTaskRunner, type TaskRunner } from "../../src/runtime/tasks.js";
import type { Proposal } from "../../src/runtime/types.js";
import { createCodingCatalog } from "../../src/tools/catalog.js";
import { markedTree } from "../support/procs.js";
import { binaryAvailable, POSTGRES_URL, REDIS_URL, serviceAvailable } from "../support/require.js";
import { makeWorkspace } from "../tools/fixtures.js";
import { gateways, stable } from "./helpers.js";

const s = makeWorkspace("tasks");
const stateDir = mkdtempSync(join(tmpdir(), "tg-tasks-state-"));
afterAll(() => {
  s.cleanup();
  rmSync(stateDir, { recursive: true, force: true });
});

const POLL_MS = 50;
let n = 0;
const bash = (command: string): Proposal => ({
  trajectory_id: "t-tasks",
  turn: 1,
  call_id: `task-call-${++n}`,
  tool: "bash_execute",
  arguments: { command, timeout_ms: 120_000 },
});

/** One replica: a gateway over the coding catalog and its task runner, on `store`. */
function replica(store: Store) {
  const gateway = createGateway({
    tools: createCodingCatalog({ workspace: s.root, sandbox: { warn: () => {} } }),
    store,
    audit: false,
  });
  const tasks = createTaskRunner(gateway, { store, poll_ms: POLL_MS });
  return {
    gateway,
    tasks,
    async close() {
      tasks.close();
      await gateway.close({ grace_ms: 0 });
    },
  };
}

const observation = (t: { result: unknown }) => t.result as unknown as Observation;

/** Reads until `ok` holds (or 20 s pass: a failure); the bound keeps a failing test from hanging. */
async function eventually<T>(read: () => Promise<T>, ok: (v: T) => boolean, what: string): Promise<T> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const v = await read();
    if (ok(v)) return v;
    if (Date.now() >= deadline) throw new Error(`${what} did not happen; last read: ${JSON.stringify(v)}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

const until = (runner: TaskRunner, id: string, owner: string, status: string) =>
  eventually(
    () => runner.get(id, owner),
    (t) => t?.status === status,
    `task ${id} reaching ${status}`,
  );

describe.runIf(binaryAvailable("bwrap"))("bash_execute as a task", () => {
  it("outlives the request that started it: another gateway on the same store reads its progress and its result", async () => {
    const path = join(stateDir, "outlive.db");
    const a = replica(await createSqliteStore({ path }));
    const started = await a.tasks.start(bash("echo built; while [ ! -e go-outlive ]; do sleep 0.05; done; echo done"), {
      owner: "alice",
    });
    expect(started).toMatchObject({ tool: "bash_execute", owner: "alice", status: "working", poll_ms: POLL_MS });
    expect(started.id).toMatch(/^tk_[0-9a-z]{9}_[A-Za-z0-9_-]{22}$/);
    // The client reconnects: a fresh store handle and gateway, as another process would open them.
    const b = replica(await createSqliteStore({ path }));
    await eventually(
      () => b.tasks.get(started.id, "alice"),
      (t) => /^running for \d+ s; 6 B of stdout and 0 B of stderr so far$/.test(t?.status_message ?? ""),
      "the running task's progress line reaching the store",
    );
    writeFileSync(join(s.root, "go-outlive"), "");
    const done = await b.tasks.result(started.id, "alice");
    expect(done).toMatchObject({ status: "completed", status_message: null });
    expect(observation(done!)).toMatchObject({ ok: true, output: { exit_code: 0, stdout: "built\ndone\n" } });
    await Promise.all([a.close(), b.close()]);
  });

  it("is its owner's alone: another principal can neither read, list, wait for nor cancel it", async () => {
    const a = replica(await createSqliteStore({ path: join(stateDir, "owner.db") }));
    const t = await a.tasks.start(bash("true"), { owner: "alice" });
    expect(await a.tasks.get(t.id, "mallory")).toBeNull();
    expect(await a.tasks.result(t.id, "mallory")).toBeNull();
    expect(await a.tasks.cancel(t.id, "mallory")).toBeNull();
    expect(await a.tasks.list("mallory")).toEqual([]);
    expect((await a.tasks.list("alice")).map((x) => x.id)).toEqual([t.id]);
    expect((await a.tasks.result(t.id, "alice"))?.status).toBe("completed");
    const again = await a.tasks.cancel(t.id, "alice");
    expect(again).toMatchObject({ already_final: true, task: { status: "completed" } });
    await a.close();
  });

  it("refuses a tool that may not run as a task, and an owner that names nobody", async () => {
    const a = replica(await createSqliteStore({ path: join(stateDir, "refuse.db") }));
    const view = { ...bash("x"), tool: "file_view", arguments: { path: join(s.root, "x"), offset: 1, limit: 1 } };
    const err = await a.tasks.start(view, { owner: "alice" }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ToolgateError);
    expect((err as Error).message).toMatchInlineSnapshot(
      `"file_view cannot run as a task: only tools that may run long or wait for an approval can (bash_execute); call it without a task"`,
    );
    const noOwner = await a.tasks.start(bash("true"), { owner: "" }).catch((e: unknown) => e);
    expect((noOwner as Error).message).toMatchInlineSnapshot(
      `"owner must be a non-empty string naming the caller (a bearer's holder, a peer address); received ""; pass the principal the transport authenticated"`,
    );
    await a.close();
  });
});

const shared: Array<[string, () => Promise<boolean>, (tag: string) => Promise<Store>]> = [
  [
    "redis",
    () => serviceAvailable("Redis", "127.0.0.1", 6379),
    (tag) => createRedisStore({ url: REDIS_URL, prefix: `tg-tasks-${tag}:` }),
  ],
  [
    "postgres",
    () => serviceAvailable("PostgreSQL", "127.0.0.1", 5432),
    (tag) => createPostgresStore({ url: POSTGRES_URL, tablePrefix: `tg_tasks_${tag}_` }),
  ],
];

describe.runIf(binaryAvailable("bwrap")).each(shared)("two replicas on one %s store", (_name, available, open) => {
  it("a task started on one is seen on the other, and cancelling it there kills its process tree here", async ({
    skip,
  }) => {
    if (!(await available())) return skip();
    const tag = randomBytes(4).toString("hex");
    const [a, b] = [replica(await open(tag)), replica(await open(tag))];
    const tree = markedTree();
    const t = await a.tasks.start(bash(`${tree.escapee} sleep 300`), { owner: "alice" });
    const ns = await tree.running(a.tasks.result(t.id, "alice"));
    expect((await b.tasks.get(t.id, "alice"))?.status).toBe("working");
    expect((await b.tasks.list("alice")).map((x) => x.id)).toEqual([t.id]);
    const cancelled = await b.tasks.cancel(t.id, "alice");
    expect(cancelled).toMatchObject({ already_final: false, task: { status: "cancelled" } });
    await tree.expectGone(ns);
    // The process that ran it leaves what the call left: a write in doubt.
    const last = (await eventually(
      () => b.tasks.get(t.id, "alice"),
      (x) => x?.result !== null,
      "the cancelled task getting its call's answer",
    ))!;
    expect(last.status).toBe("cancelled");
    expect(observation(last).error).toMatchObject({ code: "cancelled", detail: { cancelled: "in_doubt" } });
    await Promise.all([a.close(), b.close()]);
  });
});

describe.runIf(binaryAvailable("bwrap"))("run: a call answers in its request, or goes on as a task", () => {
  it("cancelled while it answers in its request (its request went away), its tree is gone and no task was written", async () => {
    const r = replica(await createSqliteStore({ path: join(stateDir, `run-${randomBytes(4).toString("hex")}.db`) }));
    const tree = markedTree();
    const gone = new AbortController();
    const ran = r.tasks.run(bash(`${tree.escapee} sleep 300`), {
      owner: "alice",
      signal: gone.signal,
      task_after_ms: 600_000,
    });
    const ns = await tree.running(ran);
    gone.abort();
    const outcome = await ran;
    expect(outcome).toMatchObject({ answer: { ok: false, error: { code: "cancelled" } } });
    await tree.expectGone(ns);
    expect(await r.tasks.list("alice")).toEqual([]);
    await r.close();
  });

  it("a call still running after task_after_ms is a task; the request's going away after that does not stop it", async () => {
    const r = replica(await createSqliteStore({ path: join(stateDir, `run-${randomBytes(4).toString("hex")}.db`) }));
    const gone = new AbortController();
    const go = join(s.root, `go-${randomBytes(4).toString("hex")}`);
    const outcome = await r.tasks.run(
      bash(`while [ ! -e ${go} ]; do sleep 0.02; done; echo once >> ${go}.runs; echo done`),
      {
        owner: "alice",
        signal: gone.signal,
        task_after_ms: 20,
      },
    );
    if (!("task" in outcome)) throw new Error(`expected a task, got ${JSON.stringify(outcome)}`);
    gone.abort();
    writeFileSync(go, "");
    const t = await r.tasks.result(outcome.task.id, "alice");
    expect(t?.status).toBe("completed");
    expect(observation(t!).ok).toBe(true);
    expect(observation(t!).text).toContain("done");
    expect(readFileSync(`${go}.runs`, "utf8"), "the command ran once").toBe("once\n");
    await r.close();
  });
});

describe("an A3 call as a task", () => {
  const make = gateways();
  const REFUND = { order_id: "o_007", amount_cents: 1259 };
  const proposal = (call_id: string): Proposal => ({
    trajectory_id: "traj-1",
    turn: 1,
    call_id,
    tool: "refund_order",
    arguments: REFUND,
  });

  it("waits as input_required for the approval, then runs once it is approved", async () => {
    const { gateway, store, clock, catalog } = make();
    const tasks = createTaskRunner(gateway, { store, clock: () => clock.now, poll_ms: POLL_MS });
    const t = await tasks.start(proposal("c-approve"), { owner: "alice" });
    await until(tasks, t.id, "alice", "input_required");
    const waiting = (await tasks.get(t.id, "alice"))!;
    expect(stable(waiting.status_message!)).toBe(
      "waits for a person to decide approval ap_<id> (toolgate approvals approve ap_<id>, or deny)",
    );
    const [pending] = await gateway.approvals.list({ state: "pending" });
    await gateway.approvals.approve(pending!.id, { approver: "bob" });
    const done = (await tasks.result(t.id, "alice"))!;
    expect(done.status).toBe("completed");
    expect(observation(done)).toMatchObject({ ok: true, output: { refunded_cents: 1259 } });
    expect(catalog.calls.refund_order).toBe(1);
    tasks.close();
  });

  it("a denied approval completes the task with the denial; a cancelled wait runs nothing", async () => {
    const { gateway, store, clock, catalog } = make();
    const tasks = createTaskRunner(gateway, { store, clock: () => clock.now, poll_ms: POLL_MS });
    const denied = await tasks.start(proposal("c-deny"), { owner: "alice" });
    await until(tasks, denied.id, "alice", "input_required");
    const [pending] = await gateway.approvals.list({ state: "pending" });
    await gateway.approvals.deny(pending!.id, { approver: "bob", reason: "not this customer" });
    const done = (await tasks.result(denied.id, "alice"))!;
    expect(done.status).toBe("completed");
    expect(observation(done).error?.code).toBe("approval_denied");

    const waiting = await tasks.start(
      { ...proposal("c-cancel"), arguments: { ...REFUND, amount_cents: 5 } },
      { owner: "alice" },
    );
    await until(tasks, waiting.id, "alice", "input_required");
    expect((await tasks.cancel(waiting.id, "alice"))?.task.status).toBe("cancelled");
    const [again] = await gateway.approvals.list({ state: "pending" });
    await gateway.approvals.approve(again!.id, { approver: "bob" });
    const final = (await tasks.result(waiting.id, "alice"))!;
    expect(final.status).toBe("cancelled");
    expect(catalog.calls.refund_order ?? 0).toBe(0);
    tasks.close();
  });

  it("a task cancelled while it waits for its approval keeps no answer: the approval it waited on is none, once its process has ended the call", async () => {
    const { gateway, store, clock } = make();
    // One place per owner: a second start succeeds only once the first task's process is done with it.
    const tasks = createTaskRunner(gateway, { store, clock: () => clock.now, poll_ms: POLL_MS, max_live_per_owner: 1 });
    const waiting = await tasks.start(proposal("c-cancel-result"), { owner: "alice" });
    expect(observation((await until(tasks, waiting.id, "alice", "input_required"))!).error?.code).toBe(
      "approval_required",
    );
    expect((await tasks.cancel(waiting.id, "alice"))?.task.result).toBeNull();
    await eventually(
      () =>
        tasks.start(proposal("c-cancel-next"), { owner: "alice" }).then(
          () => true,
          () => false,
        ),
      (started) => started,
      "the cancelled task's process ending its call",
    );
    const final = (await tasks.get(waiting.id, "alice"))!;
    expect([final.status, final.status_message, final.result]).toEqual(["cancelled", "cancelled by its owner", null]);
    tasks.close();
  });

  it("one owner has at most max_live_per_owner tasks running; another owner is not held back, and an ended one frees its place", async () => {
    const { gateway, store, clock } = make();
    const tasks = createTaskRunner(gateway, {
      store,
      clock: () => clock.now,
      poll_ms: POLL_MS,
      max_live_per_owner: 3,
    });
    // Started at once: the check cannot be passed by starts that all await the store together.
    const started = await Promise.allSettled(
      Array.from({ length: 5 }, (_, i) => tasks.start(proposal(`c-live-${i}`), { owner: "mallory" })),
    );
    const ok = started.filter((r) => r.status === "fulfilled").map((r) => r.value);
    const refused = started.filter((r) => r.status === "rejected").map((r) => r.reason as ToolgateError);
    expect(ok).toHaveLength(3);
    expect(refused.map((e) => e.code)).toEqual(["invalid_task", "invalid_task"]);
    expect(refused[0]!.message).toBe(
      "mallory already has 3 tasks running, the most one caller may (max_live_per_owner 3); nothing was started: wait for one to end (tasks/get), cancel one (tasks/cancel), or call without a task (the operator can raise max_live_per_owner: toolgate's --max-tasks-per-owner)",
    );
    expect((await tasks.start(proposal("c-live-other"), { owner: "alice" })).status).toBe("working");
    await until(tasks, ok[0]!.id, "mallory", "input_required");
    await tasks.cancel(ok[0]!.id, "mallory");
    await eventually(
      () =>
        tasks.start(proposal("c-live-again"), { owner: "mallory" }).then(
          (t) => t.status,
          () => "refused",
        ),
      (status) => status === "working",
      "a place freed by the cancelled task",
    );
    tasks.close();
  });

  it("ids an attacker picks find nothing and break nothing; a page is at most 100 tasks", async () => {
    const { gateway, store, clock } = make();
    const tasks = createTaskRunner(gateway, { store, clock: () => clock.now, poll_ms: POLL_MS });
    const t = await tasks.start(proposal("c-ids"), { owner: "alice" });
    for (const id of [
      "",
      "x'; DROP TABLE tasks; --",
      "tk_\u0000",
      "../../etc/passwd",
      "a".repeat(100_000),
      "__proto__",
      t.id + " ",
    ]) {
      expect(await tasks.get(id, "alice")).toBeNull();
      expect(await tasks.cancel(id, "alice")).toBeNull();
      expect(await tasks.result(id, "alice")).toBeNull();
    }
    expect((await tasks.get(t.id, "alice"))?.id).toBe(t.id);
    for (let i = 0; i < 105; i++) await tasks.start(proposal(`c-page-${i}`), { owner: "bob" });
    expect(await tasks.list("bob", { limit: 1_000_000 })).toHaveLength(100);
    expect(await tasks.list("bob", { limit: -5 })).toHaveLength(1);
    // Closing the runner ends the waits here: each task says what is left, its approval kept.
    tasks.close();
    const ended = await eventually(
      () => tasks.get(t.id, "alice"),
      (x) => x?.status === "failed",
      "the waiting task failing at close",
    );
    expect(stable(ended!.status_message!)).toBe(
      'toolgate shut down while this task waited for approval ap_<id>; nothing was run, and the approval stays: propose the same call again with approval_id "ap_<id>"',
    );
    await expect(tasks.start(proposal("c-late"), { owner: "alice" })).rejects.toThrow("the task runner is closed");
  });

  it("a task its process stopped writing reads as failed, saying what is unknown", async () => {
    const { gateway, store, clock } = make();
    const tasks = createTaskRunner(gateway, { store, clock: () => clock.now, stale_ms: 60_000 });
    const orphan = {
      id: "tk_orphan",
      tool: "refund_order",
      owner: "alice",
      status: "working" as const,
      status_message: null,
      result: null,
      created_at: clock.now,
      updated_at: clock.now,
      ttl_ms: 3_600_000,
      expires_at: clock.now + 3_600_000,
      poll_ms: 1000,
    };
    await store.tasks.create(orphan);
    expect((await tasks.get("tk_orphan", "alice"))?.status).toBe("working");
    clock.now += 61_000;
    const failed = (await tasks.get("tk_orphan", "alice"))!;
    expect(failed.status).toBe("failed");
    expect(failed.status_message).toMatchInlineSnapshot(
      `"the toolgate process running this task stopped writing it 61 s ago; whether the call finished is unknown: ask for its record (toolgate records) before running it again"`,
    );
    tasks.close();
  });
});
