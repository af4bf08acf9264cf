/**
 * When a call becomes a task, over Streamable HTTP with the SDK v2 client in both revisions. On
 * 2026-07-28 the server decides: a call of a tool that may run as a task answers in its request
 * when it ends within the runner's `task_after_ms` (no task is written), goes on as a task when it
 * does not (proposed once: the task's result is that call's), and becomes one at once when it
 * waits for an approval or its tool runs only as a task. On 2025-11-25 the client decides, and a
 * call that does not match its tool's `execution.taskSupport` is refused as that revision says.
 */
import { appendFileSync, existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { createGateway } from "../../../src/runtime/gateway.js";
import { openStore } from "../../../src/idempotency/open.js";
import { createTaskRunner } from "../../../src/runtime/tasks.js";
import type { Store } from "../../../src/idempotency/store.js";
import { defineTool } from "../../../src/schema/define.js";
import { serveHttp } from "../../../src/mcp/transports/http.js";
import { TASKS_EXTENSION } from "../../../src/mcp/server/tasks-ext.js";
import notes from "../fixtures/notes-catalog.js";
import { rawRequest } from "../raw-transport.js";
import { tempDir } from "../support.js";

const cleanup: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const done of cleanup.splice(0).reverse()) await done().catch(() => {});
});

/** A job that logs each run, then waits for `go-NAME` in `dir` (the test decides when it ends). */
const waiting = (name: string, runsAsTask: true | "required", dir: () => string) =>
  defineTool({
    name,
    description: "Waits until the file go-NAME exists; used to test when a call becomes a task.",
    input: z.object({ name: z.string().regex(/^[a-z0-9-]{1,32}$/) }).strict(),
    output: z.object({ name: z.string() }).strict(),
    effect: "read",
    runsAsTask,
    handler: async (args, ctx) => {
      appendFileSync(join(dir(), "runs.log"), `${args.name}\n`);
      while (!existsSync(join(dir(), `go-${args.name}`))) {
        if (ctx.signal.aborted) throw new Error(`job ${args.name} was cancelled`);
        await new Promise((r) => setTimeout(r, 10));
      }
      return { name: args.name };
    },
  });

interface Served {
  url: URL;
  store: Store;
  dir: string;
  runs: () => string[];
}

async function serve(task_after_ms: number, max_live_per_owner?: number): Promise<Served> {
  const dir = tempDir("task-policy");
  process.env.NOTES_DIR = dir;
  const store = await openStore(`sqlite:${join(tempDir("task-policy-store"), "state.db")}`);
  const tools = [...notes, waiting("job", true, () => dir), waiting("job_required", "required", () => dir)];
  const gateway = createGateway({ tools, store, audit: false });
  const tasks = createTaskRunner(gateway, {
    store,
    poll_ms: 50,
    task_after_ms,
    ...(max_live_per_owner !== undefined ? { max_live_per_owner } : {}),
  });
  const http = await serveHttp(gateway, { port: 0, approveVia: "both", warn: () => {}, tasks });
  cleanup.push(async () => {
    await http.close();
    tasks.close();
    await gateway.close({ grace_ms: 0 });
  });
  const runs = () => {
    const log = join(dir, "runs.log");
    return existsSync(log) ? readFileSync(log, "utf8").split("\n").filter(Boolean) : [];
  };
  return { url: http.url, store, dir, runs };
}

async function client(url: URL, era: "2025-11-25" | "2026-07-28"): Promise<Client> {
  const c = new Client(
    { name: `task-policy-${era}`, version: "1.0.0" },
    era === "2026-07-28"
      ? {
          capabilities: { elicitation: { form: {} }, extensions: { [TASKS_EXTENSION]: {} } },
          versionNegotiation: { mode: { pin: "2026-07-28" } },
        }
      : {},
  );
  await c.connect(new StreamableHTTPClientTransport(url));
  cleanup.push(() => c.close());
  return c;
}

const envelope = (extensions: boolean) => ({
  "io.modelcontextprotocol/protocolVersion": "2026-07-28",
  "io.modelcontextprotocol/clientCapabilities": {
    elicitation: { form: {} },
    ...(extensions ? { extensions: { [TASKS_EXTENSION]: {} } } : {}),
  },
  "io.modelcontextprotocol/clientInfo": { name: "raw", version: "1" },
});

/** A 2026-07-28 tools/call as the server answered it (the SDK client refuses `resultType: "task"`). */
const call = (c: Client, name: string, args: Record<string, unknown>, extensions = true) =>
  rawRequest(c, "tools/call", { name, arguments: args }, envelope(extensions));

const Task = z.looseObject({ status: z.string(), result: z.unknown().optional() });

/** Polls tasks/get until the task is no longer working (each poll a real request). */
async function settled(c: Client, taskId: string) {
  for (;;) {
    const t = await c.request({ method: "tasks/get", params: { taskId } } as never, Task);
    if (t.status !== "working") return t;
    await new Promise((r) => setTimeout(r, 20));
  }
}

/**
 * The ids of every task the caller has in the store, read after starting one more (an A3 call,
 * a task at once) to learn who the caller is to the store: a call answered in its request wrote none.
 */
async function storedTasks(c: Client, store: Store): Promise<{ ids: string[]; probe: string }> {
  const probe = ((await call(c, "note_delete", { name: "probe" })).result as { taskId: string }).taskId;
  const { owner } = (await store.tasks.get(probe, Date.now()))!;
  return { ids: (await store.tasks.list({ owner, now: Date.now(), limit: 100 })).map((t) => t.id), probe };
}

describe("2026-07-28: the server decides whether a call becomes a task", { timeout: 60_000 }, () => {
  it("a call that ends within task_after_ms is answered as an ordinary call, and no task is written", async () => {
    const s = await serve(600_000);
    const c = await client(s.url, "2026-07-28");
    writeFileSync(join(s.dir, "go-quick"), "");
    const answer = await call(c, "job", { name: "quick" });
    expect(answer.error).toBeUndefined();
    expect(answer.result).toMatchObject({ resultType: "complete", structuredContent: { name: "quick" } });
    expect(answer.result).not.toHaveProperty("taskId");
    expect(s.runs()).toEqual(["quick"]);
    const { ids, probe } = await storedTasks(c, s.store);
    expect(ids).toEqual([probe]);
  });

  it("a call still running after task_after_ms goes on as a task, and its result is that one run's", async () => {
    const s = await serve(50);
    const c = await client(s.url, "2026-07-28");
    const created = (await call(c, "job", { name: "long" })).result as { resultType: string; taskId: string };
    expect(created).toMatchObject({ resultType: "task", status: "working" });
    expect(s.runs()).toEqual(["long"]);
    writeFileSync(join(s.dir, "go-long"), "");
    const t = await settled(c, created.taskId);
    // The result inside is the tools/call's own, as 2026-07-28 shapes it (ext-tasks refuses one without resultType).
    expect(t).toMatchObject({
      status: "completed",
      result: { resultType: "complete", structuredContent: { name: "long" } },
    });
    expect(s.runs(), "the call ran once: in its request's window and on as the task alike").toEqual(["long"]);
  });

  it("an A3 call waiting for its approval is a task at once, however long task_after_ms is", async () => {
    const s = await serve(600_000);
    const c = await client(s.url, "2026-07-28");
    const created = (await call(c, "note_delete", { name: "x" })).result as { resultType: string; taskId: string };
    expect(created).toMatchObject({ resultType: "task" });
    expect(await settled(c, created.taskId)).toMatchObject({ status: "input_required" });
  });

  it("a tool that runs only as a task is one at once; without the extension the call is -32021 naming it", async () => {
    const s = await serve(600_000);
    const c = await client(s.url, "2026-07-28");
    writeFileSync(join(s.dir, "go-r"), "");
    const created = (await call(c, "job_required", { name: "r" })).result as { resultType: string; taskId: string };
    expect(created).toMatchObject({ resultType: "task" });
    expect(await settled(c, created.taskId)).toMatchObject({ status: "completed" });
    const refused = await call(c, "job_required", { name: "r" }, false);
    expect(refused.result).toBeUndefined();
    expect(refused.error).toMatchObject({
      code: -32021,
      message: `tools/call: job_required runs only as a task, and this request's client did not declare the ${TASKS_EXTENSION} extension; add "extensions": {"${TASKS_EXTENSION}": {}} to params._meta["io.modelcontextprotocol/clientCapabilities"] and poll the task it answers with tasks/get`,
      data: { requiredCapabilities: { extensions: { [TASKS_EXTENSION]: {} } } },
    });
    expect(s.runs(), "the refused call did not run").toEqual(["r"]);
  });

  it("a client without the extension gets a long call answered in its request, never a task", async () => {
    const s = await serve(0);
    const c = await client(s.url, "2026-07-28");
    const answer = call(c, "job", { name: "plain" }, false);
    while (!s.runs().includes("plain")) await new Promise((r) => setTimeout(r, 10));
    writeFileSync(join(s.dir, "go-plain"), "");
    expect((await answer).result).toMatchObject({ resultType: "complete", structuredContent: { name: "plain" } });
    const { ids, probe } = await storedTasks(c, s.store);
    expect(ids).toEqual([probe]);
  });
});

describe(
  "2026-07-28 at the per-owner task bound: a write is refused before it starts, a read only once it would become a task",
  { timeout: 60_000 },
  () => {
    // Over HTTP without a bearer the caller is its peer address.
    const bound =
      "tools/call: this machine's clients (every loopback client counts as one peer) already has 1 tasks running, the most one caller may (max_live_per_owner 1); ";
    const fix =
      "wait for one to end (tasks/get), cancel one (tasks/cancel), then call again (the operator can raise max_live_per_owner: toolgate's --max-tasks-per-owner)";
    const refusal = (a: { error?: { code: number; message: string } }) => {
      expect(a.error?.code).toBe(-32602);
      return a.error!.message;
    };

    it("a quick read is answered in its request; a write (an A3 call) and a task-only tool are refused, nothing run", async () => {
      const s = await serve(600_000, 1);
      const c = await client(s.url, "2026-07-28");
      const hold = (await call(c, "job_required", { name: "hold" })).result as { resultType: string; taskId: string };
      expect(hold).toMatchObject({ resultType: "task" });
      writeFileSync(join(s.dir, "go-quick"), "");
      const quick = await call(c, "job", { name: "quick" });
      expect(quick.error).toBeUndefined();
      expect(quick.result).toMatchObject({ resultType: "complete", structuredContent: { name: "quick" } });
      // A write is refused before it starts (stopped past task_after_ms it would be in doubt): no approval is asked.
      const approval = await call(c, "note_delete", { name: "x" });
      expect(refusal(approval)).toBe(`${bound}nothing was started: ${fix}`);
      expect(await s.store.approvals.list({ state: "pending" })).toEqual([]);
      const required = await call(c, "job_required", { name: "r2" });
      expect(refusal(required)).toBe(`${bound}nothing was started: ${fix}`);
      expect(s.runs(), "the refused calls did not run").toEqual(["hold", "quick"]);
      // Once the task ends, its place is free again: a task-only call is a task.
      writeFileSync(join(s.dir, "go-hold"), "");
      expect(await settled(c, hold.taskId)).toMatchObject({ status: "completed" });
      let next = await call(c, "job_required", { name: "r3" });
      // The ended task lets go of its place as it unwinds, which may be a moment after its status is stored.
      while (next.error?.message.includes("already has 1 tasks")) next = await call(c, "job_required", { name: "r3" });
      expect(next.result).toMatchObject({ resultType: "task" });
    });

    it("a read still running after task_after_ms is stopped and refused, saying so; its request held no place", async () => {
      const s = await serve(50, 1);
      const c = await client(s.url, "2026-07-28");
      const hold = (await call(c, "job_required", { name: "hold" })).result as { resultType: string; taskId: string };
      expect(hold).toMatchObject({ resultType: "task" });
      const slow = await call(c, "job", { name: "slow" });
      expect(refusal(slow)).toBe(
        "tools/call: this machine's clients (every loopback client counts as one peer) had 1 tasks running, the most one caller may (max_live_per_owner 1), when this call did not end within task_after_ms (50 ms), so it would have had to go on as one, and was stopped (it only reads or is idempotent, so calling again is safe): " +
          fix,
      );
      expect(s.runs()).toEqual(["hold", "slow"]);
      expect((await c.request({ method: "tasks/get", params: { taskId: hold.taskId } } as never, Task)).status).toBe(
        "working",
      );
    });
  },
);

describe("2025-11-25: a call must match its tool's execution.taskSupport", { timeout: 60_000 }, () => {
  const Created = z.looseObject({ task: z.looseObject({ taskId: z.string() }) });
  const Result = z.looseObject({ structuredContent: z.unknown().optional() });

  it("tools/list names each tool's taskSupport: required, optional, or none (forbidden)", async () => {
    const s = await serve(1000);
    const c = await client(s.url, "2025-11-25");
    const { tools } = await c.listTools();
    const support = Object.fromEntries(tools.map((t) => [t.name, t.execution?.taskSupport ?? null]));
    expect(support).toMatchObject({ job: "optional", job_required: "required", note_delete: "optional" });
    expect(support.note_read).toBeNull();
  });

  it("a required tool called without task is -32601 saying to add it; with task it runs", async () => {
    const s = await serve(1000);
    const c = await client(s.url, "2025-11-25");
    const plain = c.request(
      { method: "tools/call", params: { name: "job_required", arguments: { name: "a" } } } as never,
      Result,
    );
    await expect(plain).rejects.toMatchObject({
      code: -32601,
      message: expect.stringContaining(
        `job_required runs only as a task (its tools/list entry has execution.taskSupport "required"); received a call without params.task; add "task": {"ttl": 600000} to the params and read the answer with tasks/result`,
      ),
    });
    expect(s.runs()).toEqual([]);
    const { task } = await c.request(
      { method: "tools/call", params: { name: "job_required", arguments: { name: "a" }, task: {} } } as never,
      Created,
    );
    writeFileSync(join(s.dir, "go-a"), "");
    const result = await c.request({ method: "tasks/result", params: { taskId: task.taskId } } as never, Result);
    expect(result.structuredContent).toEqual({ name: "a" });
  });

  it("a tool without taskSupport called with task is -32601, and does not run", async () => {
    const s = await serve(1000);
    const c = await client(s.url, "2025-11-25");
    const asTask = c.request(
      { method: "tools/call", params: { name: "note_append", arguments: { name: "n", text: "t" }, task: {} } } as never,
      Created,
    );
    await expect(asTask).rejects.toMatchObject({
      code: -32601,
      message: expect.stringMatching(
        /note_append cannot run as a task \(.*"forbidden"; those that can: job, job_required, note_delete\); received a task-augmented call; call it without params\.task/,
      ),
    });
    expect(existsSync(join(s.dir, "n.txt"))).toBe(false);
  });
});
