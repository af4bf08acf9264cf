/**
 * The 2026-07-28 tasks extension (`io.modelcontextprotocol/tasks`) on the wire, over Streamable
 * HTTP, driven by raw JSON-RPC (the SDK v2 client 2.4.0 refuses a tools/call answered with
 * `resultType: "task"`, and `@ai-sdk/mcp` has no tasks): a client that declares the extension
 * gets an A3 call as a task that waits as input_required, answers the approval with tasks/update,
 * and reads the result inside tasks/get. A client that does not declare it gets the call as
 * before, and -32021 from the tasks methods. The SDK v2 client (which can send tasks/get, update
 * and cancel on 2026-07-28) reads the same task.
 */
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { createGateway } from "../../../src/runtime/gateway.js";
import { openStore } from "../../../src/idempotency/open.js";
import { createTaskRunner } from "../../../src/runtime/tasks.js";
import type { Gateway } from "../../../src/runtime/types.js";
import type { Store } from "../../../src/idempotency/store.js";
import { createRedisStore } from "../../../src/idempotency/stores/redis.js";
import { REDIS_URL, serviceAvailable } from "../../support/require.js";
import { serveHttp } from "../../../src/mcp/transports/http.js";
import { approvalInputKey, TASKS_EXTENSION } from "../../../src/mcp/server/tasks-ext.js";
import type { ApproveVia } from "../../../src/runtime/approvals.js";
import catalog from "../fixtures/notes-catalog.js";
import { executions, obsOf, tempDir } from "../support.js";

const REVISION = "2026-07-28";
const CAPS = { elicitation: { form: {} }, extensions: { [TASKS_EXTENSION]: {} } };
const envelope = (caps: Record<string, unknown> = CAPS) => ({
  "io.modelcontextprotocol/protocolVersion": REVISION,
  "io.modelcontextprotocol/clientCapabilities": caps,
  "io.modelcontextprotocol/clientInfo": { name: "raw-tasks", version: "1.0.0" },
});

const cleanup: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const done of cleanup.splice(0).reverse()) await done().catch(() => {});
});

interface Served {
  url: URL;
  gateway: Gateway;
  notes: string;
}

async function serve(approveVia: ApproveVia = "both", on?: { store: Store; notes: string }): Promise<Served> {
  const notes = on?.notes ?? tempDir("tasks-ext");
  process.env.NOTES_DIR = notes;
  const store = on?.store ?? (await openStore(`sqlite:${join(tempDir("tasks-ext-store"), "state.db")}`));
  const gateway = createGateway({ tools: catalog, store, audit: false });
  const tasks = createTaskRunner(gateway, { store, poll_ms: 50 });
  const http = await serveHttp(gateway, { port: 0, approveVia, warn: () => {}, tasks });
  cleanup.push(async () => {
    await http.close();
    tasks.close();
    await gateway.close({ grace_ms: 0 });
  });
  return { url: http.url, gateway, notes };
}

interface Answer {
  status: number;
  result?: Record<string, unknown>;
  error?: { code: number; message: string; data?: unknown };
}

let id = 0;
async function rpc(
  url: URL,
  method: string,
  params: Record<string, unknown>,
  opts: { caps?: Record<string, unknown>; bearer?: string } = {},
): Promise<Answer> {
  const name = method === "tools/call" ? params.name : params.taskId;
  const res = await fetch(url, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      "mcp-protocol-version": REVISION,
      "mcp-method": method,
      ...(typeof name === "string" ? { "mcp-name": name } : {}),
      ...(opts.bearer ? { authorization: `Bearer ${opts.bearer}` } : {}),
    },
    body: JSON.stringify({ jsonrpc: "2.0", id: ++id, method, params: { ...params, _meta: envelope(opts.caps) } }),
  });
  const text = await res.text();
  const body = JSON.parse(text.startsWith("{") ? text : text.replace(/^[\s\S]*?data: /, "")) as Answer;
  return { ...body, status: res.status };
}

const callDelete = (url: URL, name: string, opts: Parameters<typeof rpc>[3] = {}) =>
  rpc(url, "tools/call", { name: "note_delete", arguments: { name } }, opts);
const getTask = (url: URL, taskId: unknown, opts: Parameters<typeof rpc>[3] = {}) =>
  rpc(url, "tasks/get", { taskId }, opts);

/** Polls tasks/get until `done` holds (each poll a real request; the runner moves it along). */
async function until(
  url: URL,
  taskId: string,
  done: (t: Record<string, unknown>) => boolean,
  opts: Parameters<typeof rpc>[3] = {},
) {
  for (;;) {
    const a = await getTask(url, taskId, opts);
    if (a.error) throw new Error(a.error.message);
    if (done(a.result!)) return a.result!;
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe("the 2026-07-28 tasks extension over Streamable HTTP", { timeout: 60_000 }, () => {
  it("advertises the extension in server/discover", async () => {
    const { url } = await serve();
    const c = new Client({ name: "discover", version: "1.0.0" }, { versionNegotiation: { mode: { pin: REVISION } } });
    await c.connect(new StreamableHTTPClientTransport(url));
    cleanup.push(() => c.close());
    expect(c.getServerCapabilities()?.extensions).toMatchObject({ [TASKS_EXTENSION]: {} });
  });

  it("an A3 call runs as a task: input_required with the approval, approved by tasks/update, the result in tasks/get", async () => {
    const { url, gateway, notes } = await serve();
    const created = await callDelete(url, "x");
    expect(created.result).toMatchObject({ resultType: "task", status: "working", pollIntervalMs: 50 });
    const taskId = created.result!.taskId as string;
    expect(taskId).toMatch(/^tk_/);
    const waiting = await until(url, taskId, (t) => t.status === "input_required");
    expect(waiting.resultType).toBe("complete");
    const pending = await gateway.approvals.list({ state: "pending" });
    expect(pending).toHaveLength(1);
    const key = approvalInputKey(pending[0]!.id);
    const asked = (waiting.inputRequests as Record<string, { method: string; params: { message: string } }>)[key]!;
    expect(asked.method).toBe("elicitation/create");
    expect(asked.params.message).toContain(`approval id: ${pending[0]!.id}`);
    expect(asked.params.message).toContain(`"name": "x"`);
    expect(executions(notes)).toEqual([]);

    // An answer under any other key approves nothing.
    const other = await rpc(url, "tasks/update", {
      taskId,
      inputResponses: {
        [approvalInputKey("ap_other")]: { action: "accept" },
        "toolgate/approval": { action: "accept" },
      },
    });
    expect(other.result).toMatchObject({ resultType: "complete" });
    expect((await gateway.approvals.list({ state: "pending" })).map((a) => a.id)).toEqual([pending[0]!.id]);

    const ack = await rpc(url, "tasks/update", {
      taskId,
      inputResponses: { [key]: { action: "accept", content: { note: "ok by me" } } },
    });
    expect(ack.result).toMatchObject({ resultType: "complete" });
    const done = await until(url, taskId, (t) => t.status === "completed");
    expect(obsOf(done.result).ok).toBe(true);
    expect((done.result as { structuredContent: unknown }).structuredContent).toEqual({ name: "x", deleted: false });
    expect(executions(notes)).toEqual(["note_delete x"]);
    const decided = (await gateway.approvals.list()).find((a) => a.id === pending[0]!.id)!;
    expect(decided).toMatchObject({ approver: expect.stringContaining("127.0.0.1"), note: "ok by me" });
  });

  it("a declined approval completes the task with the denial, and nothing runs", async () => {
    const { url, gateway, notes } = await serve();
    const taskId = (await callDelete(url, "y")).result!.taskId as string;
    await until(url, taskId, (t) => t.status === "input_required");
    const [approval] = await gateway.approvals.list({ state: "pending" });
    await rpc(url, "tasks/update", {
      taskId,
      inputResponses: { [approvalInputKey(approval!.id)]: { action: "decline" } },
    });
    const done = await until(url, taskId, (t) => t.status === "completed");
    expect(obsOf(done.result).error?.code).toBe("approval_denied");
    expect(executions(notes)).toEqual([]);
  });

  it("with approvals by the CLI only, the waiting task reads working and says what it waits for", async () => {
    const { url, gateway, notes } = await serve("cli");
    const taskId = (await callDelete(url, "z")).result!.taskId as string;
    const waiting = await until(url, taskId, (t) => typeof t.statusMessage === "string");
    expect(waiting).toMatchObject({
      status: "working",
      statusMessage: expect.stringMatching(/toolgate approvals approve ap_/),
    });
    expect(waiting.inputRequests).toBeUndefined();
    const [approval] = await gateway.approvals.list({ state: "pending" });
    await gateway.approvals.approve(approval!.id, { approver: "cli:ops", channel: "cli" });
    const done = await until(url, taskId, (t) => t.status === "completed");
    expect(obsOf(done.result).ok).toBe(true);
    expect(executions(notes)).toEqual(["note_delete z"]);
  });

  it("tasks/cancel acknowledges with an empty result and the waiting call never runs", async () => {
    const { url, notes } = await serve();
    const taskId = (await callDelete(url, "c")).result!.taskId as string;
    await until(url, taskId, (t) => t.status === "input_required");
    expect((await rpc(url, "tasks/cancel", { taskId })).result).toMatchObject({ resultType: "complete" });
    expect((await getTask(url, taskId)).result).toMatchObject({ status: "cancelled" });
    // Cancelling again is acknowledged too (the extension's cancel is a request, not a state check).
    expect((await rpc(url, "tasks/cancel", { taskId })).result).toMatchObject({ resultType: "complete" });
    expect(executions(notes)).toEqual([]);
  });

  it("another caller's task and an unknown id answer the same -32602, on get, update and cancel", async () => {
    const { url } = await serve();
    const taskId = (await callDelete(url, "o", { bearer: "alice" })).result!.taskId as string;
    for (const method of ["tasks/get", "tasks/update", "tasks/cancel"]) {
      const params = method === "tasks/update" ? { inputResponses: {} } : {};
      const theirs = await rpc(url, method, { taskId, ...params }, { bearer: "mallory" });
      const never = await rpc(url, method, { taskId: "tk_000000000_never", ...params }, { bearer: "mallory" });
      expect(theirs.error?.code).toBe(-32602);
      expect(theirs.error!.message.replace(taskId, "ID")).toBe(
        never.error!.message.replace("tk_000000000_never", "ID"),
      );
    }
    expect((await getTask(url, taskId, { bearer: "alice" })).result).toMatchObject({ taskId });
  });

  it("refuses bad params naming the field, and the tasks methods of a client that did not declare the extension", async () => {
    const { url } = await serve();
    expect((await getTask(url, 42)).error).toMatchObject({
      code: -32602,
      message: expect.stringMatching(/params\.taskId .*received 42/),
    });
    expect((await getTask(url, "t".repeat(300))).error?.message).toMatch(
      /at most 256 characters.*a string of 300 characters/,
    );
    const taskId = (await callDelete(url, "b")).result!.taskId as string;
    const bad = await rpc(url, "tasks/update", { taskId });
    expect(bad.error).toMatchObject({
      code: -32602,
      message: expect.stringMatching(/params\.inputResponses must be an object.*received nothing/),
    });
    const many = Object.fromEntries(Array.from({ length: 17 }, (_, i) => [`k${i}`, { action: "accept" }]));
    expect((await rpc(url, "tasks/update", { taskId, inputResponses: many })).error?.message).toMatch(
      /17 answers; at most 16/,
    );

    const plain = { elicitation: { form: {} } };
    const undeclared = await getTask(url, taskId, { caps: plain });
    expect(undeclared.error).toMatchObject({
      code: -32021,
      data: { requiredCapabilities: { extensions: { [TASKS_EXTENSION]: {} } } },
    });
    expect((await rpc(url, "tasks/result", { taskId })).error?.code).toBe(-32601);
    // Without the extension the call is the ordinary input-required approval, no task.
    expect((await callDelete(url, "b", { caps: plain })).result?.resultType).toBe("input_required");
    // A read-only tool is never a task, declared or not.
    expect((await rpc(url, "tools/call", { name: "note_read", arguments: { name: "b" } })).result?.resultType).toBe(
      "complete",
    );
  });

  it("the SDK v2 client reads and cancels a task on 2026-07-28 with tasks/get and tasks/cancel", async () => {
    const { url } = await serve();
    const taskId = (await callDelete(url, "sdk")).result!.taskId as string;
    const c = new Client(
      { name: "sdk-tasks", version: "1.0.0" },
      { capabilities: { extensions: { [TASKS_EXTENSION]: {} } }, versionNegotiation: { mode: { pin: REVISION } } },
    );
    await c.connect(new StreamableHTTPClientTransport(url));
    cleanup.push(() => c.close());
    const Task = z.looseObject({ taskId: z.string(), status: z.string() });
    expect(await c.request({ method: "tasks/get", params: { taskId } } as never, Task)).toMatchObject({ taskId });
    await c.request({ method: "tasks/cancel", params: { taskId } } as never, z.looseObject({}));
    expect(await c.request({ method: "tasks/get", params: { taskId } } as never, Task)).toMatchObject({
      status: "cancelled",
    });
  });

  it.runIf(serviceAvailable("Redis", "127.0.0.1", 6379))(
    "on Redis, a task started through one replica is read, approved and finished through another",
    async () => {
      const prefix = `tg-tasks-ext-${Date.now().toString(36)}-${Math.random().toString(36).slice(2)}:`;
      const notes = tempDir("tasks-ext-replicas");
      const a = await serve("both", { store: await createRedisStore({ url: REDIS_URL, prefix }), notes });
      const b = await serve("both", { store: await createRedisStore({ url: REDIS_URL, prefix }), notes });
      const taskId = (await callDelete(a.url, "r", { bearer: "alice" })).result!.taskId as string;
      const waiting = await until(b.url, taskId, (t) => t.status === "input_required", { bearer: "alice" });
      const [key] = Object.keys(waiting.inputRequests as object);
      expect(key).toMatch(/^toolgate\/approval\/ap_/);
      expect((await getTask(b.url, taskId, { bearer: "mallory" })).error?.code).toBe(-32602);
      await rpc(
        b.url,
        "tasks/update",
        { taskId, inputResponses: { [key!]: { action: "accept" } } },
        { bearer: "alice" },
      );
      const done = await until(b.url, taskId, (t) => t.status === "completed", { bearer: "alice" });
      expect(obsOf(done.result).ok).toBe(true);
      expect(executions(notes)).toEqual(["note_delete r"]);
    },
  );
});
