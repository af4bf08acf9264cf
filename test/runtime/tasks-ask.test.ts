/**
 * A task's questions (`runtime/task-ask.ts`): a tool that asks its caller (`ctx.ask`) while `run`
 * runs it, on SQLite and Redis stores. The question makes the call a task at once; the task waits
 * `input_required` with the questions in its record; another owner's answer reaches nothing; keys
 * not asked are ignored; the owner's answer resumes the call, the task `working` again and then
 * completed with what the tool made of it. A caller that cannot be asked is told why; a cancel
 * ends the wait.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import type { Observation } from "../../src/core/observation.js";
import { toolResult, type ToolSpec } from "../../src/core/tool.js";
import type { Store } from "../../src/idempotency/store.js";
import { createPostgresStore } from "../../src/idempotency/stores/postgres.js";
import { createRedisStore } from "../../src/idempotency/stores/redis.js";
import { createSqliteStore } from "../../src/idempotency/stores/sqlite.js";
import type { TaskRecord } from "../../src/idempotency/tasks.js";
import { createGateway } from "../../src/runtime/gateway.js";
import { createTaskRunner } from "../../src/runtime/tasks.js";
import { POSTGRES_URL, REDIS_URL, serviceAvailable } from "../support/require.js";

const dir = mkdtempSync(join(tmpdir(), "tg-tasks-ask-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const QUESTION = { pick: { method: "elicitation/create", params: { message: "Which?", requestedSchema: {} } } };

/** A read that asks once and answers with the answer it got (or why it got none). */
const asker: ToolSpec = {
  name: "asker",
  description: "Asks its caller which one, then says it.",
  inputSchema: { type: "object", properties: {}, additionalProperties: false },
  effect: "read",
  runsAsTask: true,
  handler: async (_args, ctx) => {
    if (!ctx.ask) return toolResult("no ask");
    try {
      return toolResult(`answered ${JSON.stringify(await ctx.ask(QUESTION, ctx.signal))}`);
    } catch (err) {
      return toolResult(`not answered: ${(err as Error).message}`);
    }
  },
};

let n = 0;
const proposal = () => ({ trajectory_id: "t-ask", turn: 1, call_id: `ask-${++n}`, tool: "asker", arguments: {} });

async function until(read: () => Promise<TaskRecord | null>, ok: (t: TaskRecord) => boolean): Promise<TaskRecord> {
  for (;;) {
    const t = await read();
    if (t !== null && ok(t)) return t;
    await new Promise((r) => setTimeout(r, 20));
  }
}

const stores: [string, () => Promise<boolean>, () => Promise<Store>][] = [
  ["SQLite", async () => true, () => createSqliteStore({ path: join(dir, `s-${++n}.db`) })],
  [
    "Redis",
    () => serviceAvailable("Redis", "127.0.0.1", 6379),
    () => createRedisStore({ url: REDIS_URL, prefix: `tg-ask-${Date.now()}-${++n}:` }),
  ],
  [
    "PostgreSQL",
    () => serviceAvailable("PostgreSQL", new URL(POSTGRES_URL).hostname, Number(new URL(POSTGRES_URL).port || 5432)),
    () => createPostgresStore({ url: POSTGRES_URL, tablePrefix: `tg_ask_${Date.now().toString(36)}_${++n}_` }),
  ],
];

/** Two replicas on `store`: the runner that runs the task, and another running nothing (on `clock`, when given). */
function replicas(store: Store, clock?: () => number) {
  const gateway = createGateway({ tools: [asker], store, audit: false });
  const runner = createTaskRunner(gateway, { store, poll_ms: 20 });
  const other = createTaskRunner(createGateway({ tools: [asker], store, audit: false }), {
    store,
    poll_ms: 20,
    ...(clock ? { clock } : {}),
  });
  const close = async () => {
    runner.close();
    other.close();
    await gateway.close({ grace_ms: 0 });
  };
  return { runner, other, close };
}

describe.each(stores)("a task's questions on %s", (_, available, openStore) => {
  const open = async (skip: () => never) => ((await available()) ? openStore() : skip());
  it("a started task's questions sent to its client are in its record: another replica shows them, and says only the process running it takes their answers", async ({
    skip,
  }) => {
    const { runner, other, close } = replicas(await open(skip));
    let answer!: (a: Record<string, unknown>) => void;
    try {
      const task = await runner.start(proposal(), {
        owner: "alice",
        ask: () => () => new Promise((r) => (answer = r as never)),
      });
      const seen = await until(
        () => other.get(task.id, "alice"),
        (t) => t.status === "input_required",
      );
      expect(other.sent(seen)).toEqual({ requests: QUESTION, here: false });
      expect(runner.sent(seen)).toEqual({ requests: QUESTION, here: true });
      // Not held for tasks/update: its client answers the requests it was sent.
      expect(other.questions(seen)).toBeNull();
      for (const r of [runner, other])
        await expect(r.answer(task.id, "alice", { pick: { action: "accept" } })).rejects.toThrow(
          `task ${task.id} sent its questions to its client as requests naming the task (a 2025-11-25 task), so they are answered by responding to those requests, not here: call tasks/result of the task in the session that started it, on the toolgate process that runs it, to be sent them`,
        );
      expect(await other.answer(task.id, "bob", { pick: { action: "accept" } })).toBeNull();
      answer({ pick: { action: "accept", content: { x: "b" } } });
      const done = await other.result(task.id, "alice");
      expect(done!.status).toBe("completed");
      expect(other.sent(done!)).toBeNull();
      expect((done!.result as unknown as Observation).text).toContain('answered {"pick":{"action":"accept"');
    } finally {
      await close();
    }
  });

  it("a started task cancelled, or failed as stale, while its question waits keeps no question in its record", async ({
    skip,
  }) => {
    let now = Date.now();
    const { runner, other: later, close } = replicas(await open(skip), () => now);
    try {
      const asks = () => () => new Promise<never>(() => {});
      const cancelled = await runner.start(proposal(), { owner: "alice", ask: asks });
      await until(
        () => runner.get(cancelled.id, "alice"),
        (t) => t.status === "input_required",
      );
      const gone = (await later.cancel(cancelled.id, "alice"))!.task;
      expect([gone.status, gone.result]).toEqual(["cancelled", null]);
      // Read by a replica whose clock is past the task's stale bound (60 s) since its last write.
      const stale = await runner.start(proposal(), { owner: "alice", ask: asks });
      const waiting = await until(
        () => runner.get(stale.id, "alice"),
        (t) => t.status === "input_required",
      );
      now = waiting.updated_at + 60_000 + 1000;
      const failed = (await later.get(stale.id, "alice"))!;
      expect([failed.status, failed.result, later.sent(failed)]).toEqual(["failed", null, null]);
    } finally {
      await close();
    }
  });

  it("a question makes the call a task at once, held for its owner only, then answered and completed", async ({
    skip,
  }) => {
    const store = await open(skip);
    const gateway = createGateway({ tools: [asker], store, audit: false });
    const runner = createTaskRunner(gateway, { store, poll_ms: 20, task_after_ms: 60_000 });
    try {
      const ran = await runner.run(proposal(), { owner: "alice", cannotAsk: () => null });
      // Long before task_after_ms: the question made it a task.
      if (!("task" in ran)) throw new Error(`answered inline: ${ran.answer.text}`);
      const id = ran.task.id;
      const waiting = await until(
        () => runner.get(id, "alice"),
        (t) => t.status === "input_required",
      );
      expect(runner.questions(waiting)).toEqual(QUESTION);
      expect(waiting.status_message).toContain("waits for its caller to answer 1 question (elicitation/create)");
      // Another owner's answer names no task; a key not asked is ignored.
      expect(await runner.answer(id, "mallory", { pick: { action: "accept" } })).toBeNull();
      expect(await runner.answer(id, "alice", { other: { action: "accept" } })).toEqual([]);
      expect((await runner.get(id, "alice"))!.status).toBe("input_required");
      expect(await runner.answer(id, "alice", { pick: { action: "accept", content: { v: "b" } } })).toEqual(["pick"]);
      const done = await until(
        () => runner.get(id, "alice"),
        (t) => t.status === "completed",
      );
      expect((done.result as unknown as Observation).text).toContain(
        'answered {"pick":{"action":"accept","content":{"v":"b"}}}',
      );
      // Answered once: a second answer records nothing.
      expect(await runner.answer(id, "alice", { pick: { action: "decline" } })).toEqual([]);
    } finally {
      runner.close();
      await gateway.close({ grace_ms: 0 });
    }
  });

  it("two questions asked at once: the second is refused, one round at a time, and the first is still answered", async ({
    skip,
  }) => {
    const store = await open(skip);
    const twice: ToolSpec = {
      ...asker,
      name: "twice",
      handler: async (_args, ctx) => {
        const first = ctx.ask!(QUESTION, ctx.signal);
        const second = ctx.ask!({ again: QUESTION.pick }, ctx.signal).then(
          () => "second answered",
          (err: unknown) => `second refused: ${(err as Error).message}`,
        );
        return toolResult(`${await second}; first ${JSON.stringify(await first)}`);
      },
    };
    const gateway = createGateway({ tools: [twice], store, audit: false });
    const runner = createTaskRunner(gateway, { store, poll_ms: 20, task_after_ms: 60_000 });
    try {
      const ran = await runner.run({ ...proposal(), tool: "twice" }, { owner: "alice", cannotAsk: () => null });
      if (!("task" in ran)) throw new Error(`answered inline: ${ran.answer.text}`);
      const waiting = await until(
        () => runner.get(ran.task.id, "alice"),
        (t) => t.status === "input_required",
      );
      expect(runner.questions(waiting)).toEqual(QUESTION);
      expect(await runner.answer(ran.task.id, "alice", { pick: { action: "decline" } })).toEqual(["pick"]);
      const done = await until(
        () => runner.get(ran.task.id, "alice"),
        (t) => t.status === "completed",
      );
      expect((done.result as unknown as Observation).text).toContain(
        'second refused: this task already waits for answers; one round at a time; first {"pick":{"action":"decline"}}',
      );
    } finally {
      runner.close();
      await gateway.close({ grace_ms: 0 });
    }
  });

  it("a caller that cannot be asked is told why, and no task waits for it", async ({ skip }) => {
    const store = await open(skip);
    const gateway = createGateway({ tools: [asker], store, audit: false });
    const runner = createTaskRunner(gateway, { store, poll_ms: 20, task_after_ms: 60_000 });
    try {
      const ran = await runner.run(proposal(), { owner: "alice", cannotAsk: () => "it declared no elicitation" });
      if (!("answer" in ran)) throw new Error("became a task");
      expect(ran.answer.text).toContain(
        "not answered: this client cannot be asked elicitation/create: it declared no elicitation",
      );
    } finally {
      runner.close();
      await gateway.close({ grace_ms: 0 });
    }
  });

  it("a cancel ends the wait: the task is cancelled, its question gone", async ({ skip }) => {
    const store = await open(skip);
    const gateway = createGateway({ tools: [asker], store, audit: false });
    const runner = createTaskRunner(gateway, { store, poll_ms: 20, task_after_ms: 0 });
    try {
      const ran = await runner.run(proposal(), { owner: "alice", cannotAsk: () => null });
      if (!("task" in ran)) throw new Error("answered inline");
      await until(
        () => runner.get(ran.task.id, "alice"),
        (t) => t.status === "input_required",
      );
      await runner.cancel(ran.task.id, "alice");
      const ended = await until(
        () => runner.get(ran.task.id, "alice"),
        (t) => t.result !== null && t.status === "cancelled",
      );
      expect(runner.questions(ended)).toBeNull();
      expect(await runner.answer(ran.task.id, "alice", { pick: { action: "accept" } })).toEqual([]);
    } finally {
      runner.close();
      await gateway.close({ grace_ms: 0 });
    }
  });
});

describe("a started task's questions put by its caller's own ask (StartTask.ask)", () => {
  it("the ask is given the task; the task is input_required while it waits, then working and completed", async () => {
    const store = await createSqliteStore({ path: join(dir, `direct-${++n}.db`) });
    const gateway = createGateway({ tools: [asker], store, audit: false });
    const runner = createTaskRunner(gateway, { store, poll_ms: 20 });
    const statuses: string[] = [];
    let answer!: (a: Record<string, unknown>) => void;
    const asked: { task: string; requests: unknown }[] = [];
    try {
      const task = await runner.start(proposal(), {
        owner: "alice",
        onStatus: (t) => statuses.push(t.status),
        ask: (t) => (requests) => {
          asked.push({ task: t.id, requests });
          return new Promise((r) => (answer = r as never));
        },
      });
      const waiting = await until(
        () => runner.get(task.id, "alice"),
        (t) => t.status === "input_required",
      );
      expect(waiting.status_message).toBe(
        "waits for its caller to answer 1 question (elicitation/create): sent to its client as requests of this task",
      );
      expect(asked).toEqual([{ task: task.id, requests: QUESTION }]);
      // Not held in the record: its caller answers through its own ask, not tasks/update.
      expect(runner.questions(waiting)).toBeNull();
      answer({ pick: { action: "accept", content: { x: "b" } } });
      const done = await runner.result(task.id, "alice");
      expect((done!.result as unknown as Observation).text).toContain('answered {"pick":{"action":"accept"');
      expect(statuses).toEqual(["input_required", "working", "completed"]);
    } finally {
      runner.close();
      await gateway.close({ grace_ms: 0 });
    }
  });

  it("an ask that rejects is the tool's to handle: the call answers and the task completes", async () => {
    const store = await createSqliteStore({ path: join(dir, `direct-${++n}.db`) });
    const gateway = createGateway({ tools: [asker], store, audit: false });
    const runner = createTaskRunner(gateway, { store, poll_ms: 20 });
    try {
      const task = await runner.start(proposal(), {
        owner: "alice",
        ask: () => () => Promise.reject(new Error("this client cannot be asked elicitation/create: no")),
      });
      const done = await runner.result(task.id, "alice");
      expect(done!.status).toBe("completed");
      expect((done!.result as unknown as Observation).text).toContain(
        "not answered: this client cannot be asked elicitation/create: no",
      );
    } finally {
      runner.close();
      await gateway.close({ grace_ms: 0 });
    }
  });

  it("a round the ask rejects leaves the task working, and the tool's next question is asked", async () => {
    const twice: ToolSpec = {
      ...asker,
      name: "asker_twice",
      handler: async (_args, ctx) => {
        const first = await ctx.ask!(QUESTION, ctx.signal).catch((err: Error) => err.message);
        return toolResult(
          `first ${JSON.stringify(first)}, then ${JSON.stringify(await ctx.ask!(QUESTION, ctx.signal))}`,
        );
      },
    };
    const store = await createSqliteStore({ path: join(dir, `direct-${++n}.db`) });
    const gateway = createGateway({ tools: [twice], store, audit: false });
    const runner = createTaskRunner(gateway, { store, poll_ms: 20 });
    const statuses: string[] = [];
    let rounds = 0;
    try {
      const task = await runner.start(
        { ...proposal(), tool: "asker_twice" },
        {
          owner: "alice",
          onStatus: (t) => statuses.push(t.status),
          ask: () => async () => {
            if (++rounds === 1) throw new Error("the client did not answer");
            return { pick: { action: "accept", content: { x: "b" } } };
          },
        },
      );
      const done = await runner.result(task.id, "alice");
      expect(done!.status).toBe("completed");
      expect((done!.result as unknown as Observation).text).toContain(
        'first "the client did not answer", then {"pick":{"action":"accept","content":{"x":"b"}}}',
      );
      expect(statuses).toEqual(["input_required", "working", "input_required", "working", "completed"]);
    } finally {
      runner.close();
      await gateway.close({ grace_ms: 0 });
    }
  });

  it("tasks/cancel while a question waits aborts the ask, and the task stays cancelled", async () => {
    const store = await createSqliteStore({ path: join(dir, `direct-${++n}.db`) });
    const gateway = createGateway({ tools: [asker], store, audit: false });
    const runner = createTaskRunner(gateway, { store, poll_ms: 20 });
    let stopped!: (why: string) => void;
    const aborted = new Promise<string>((r) => (stopped = r));
    try {
      const task = await runner.start(proposal(), {
        owner: "alice",
        ask: () => (_requests, signal) =>
          new Promise((_resolve, reject) =>
            signal.addEventListener("abort", () => {
              stopped("aborted");
              reject(signal.reason as Error);
            }),
          ),
      });
      await until(
        () => runner.get(task.id, "alice"),
        (t) => t.status === "input_required",
      );
      expect((await runner.cancel(task.id, "alice"))?.task.status).toBe("cancelled");
      expect(await aborted).toBe("aborted");
      const done = await runner.result(task.id, "alice");
      expect(done!.status).toBe("cancelled");
    } finally {
      runner.close();
      await gateway.close({ grace_ms: 0 });
    }
  });
});
