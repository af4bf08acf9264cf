/**
 * The tasks extension's status push over Streamable HTTP: a 2026-07-28 client that opens
 * `subscriptions/listen` with `notifications.taskIds` hears `notifications/tasks` for its own
 * tasks as their status changes (the task as tasks/get shows it, the result inline once completed),
 * and the stream ends gracefully once none is left to watch. Another principal naming the same id
 * gets the same acknowledgement as for an id that never existed, and nothing else. Raw HTTP, and
 * the SDK v2 client's listen.
 */
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { createGateway } from "../../../src/runtime/gateway.js";
import { openStore } from "../../../src/idempotency/open.js";
import { createTaskRunner } from "../../../src/runtime/tasks.js";
import type { Gateway } from "../../../src/runtime/types.js";
import type { Store } from "../../../src/idempotency/store.js";
import { createRedisStore } from "../../../src/idempotency/stores/redis.js";
import { REDIS_URL, serviceAvailable } from "../../support/require.js";
import { serveHttp } from "../../../src/mcp/transports/http.js";
import { TASKS_EXTENSION } from "../../../src/mcp/server/tasks-ext.js";
import { ChangeSignal } from "../../../src/core/changes.js";
import catalog from "../fixtures/notes-catalog.js";
import { executions, obsOf, tempDir } from "../support.js";
import { request } from "./raw-http.js";

const REVISION = "2026-07-28";
const SUB = "io.modelcontextprotocol/subscriptionId";
const CAPS = { extensions: { [TASKS_EXTENSION]: {} } };
const envelope = (caps: Record<string, unknown> = CAPS) => ({
  "io.modelcontextprotocol/protocolVersion": REVISION,
  "io.modelcontextprotocol/clientCapabilities": caps,
  "io.modelcontextprotocol/clientInfo": { name: "raw-push", version: "1.0.0" },
});

const cleanup: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const done of cleanup.splice(0).reverse()) await done().catch(() => {});
});

async function serve(
  on?: { store: Store; notes: string },
  toolsChanged?: ChangeSignal,
): Promise<{ url: URL; gateway: Gateway; notes: string; close: () => Promise<void> }> {
  const notes = on?.notes ?? tempDir("tasks-push");
  process.env.NOTES_DIR = notes;
  const store = on?.store ?? (await openStore(`sqlite:${join(tempDir("tasks-push-store"), "state.db")}`));
  const gateway = createGateway({ tools: catalog, store, audit: false });
  const tasks = createTaskRunner(gateway, { store, poll_ms: 50 });
  const http = await serveHttp(gateway, {
    port: 0,
    approveVia: "cli",
    warn: () => {},
    tasks,
    ...(toolsChanged ? { toolsChanged } : {}),
  });
  cleanup.push(async () => {
    await http.close();
    tasks.close();
    await gateway.close({ grace_ms: 0 });
  });
  return { url: http.url, gateway, notes, close: () => http.close() };
}

const headers = (method: string, bearer: string, name?: string) => ({
  "content-type": "application/json",
  accept: "application/json, text/event-stream",
  "mcp-protocol-version": REVISION,
  "mcp-method": method,
  ...(name !== undefined ? { "mcp-name": name } : {}),
  authorization: `Bearer ${bearer}`,
});

let id = 0;
const body = (method: string, params: Record<string, unknown>, caps?: Record<string, unknown>) =>
  JSON.stringify({ jsonrpc: "2.0", id: ++id, method, params: { ...params, _meta: envelope(caps) } });

/** Starts an A3 note_delete as a task for `bearer`; its id. */
async function startTask(url: URL, bearer: string): Promise<string> {
  const a = await request(url, {
    headers: headers("tools/call", bearer, "note_delete"),
    body: body("tools/call", { name: "note_delete", arguments: { name: "p" } }),
  });
  const text = a.body.startsWith("{") ? a.body : a.body.replace(/^[\s\S]*?data: /, "");
  return (JSON.parse(text) as { result: { taskId: string } }).result.taskId;
}

/** Approves the one approval `gateway` will have pending (as an operator with the CLI would). */
async function approveOne(gateway: Gateway): Promise<void> {
  for (;;) {
    const [approval] = await gateway.approvals.list({ state: "pending" });
    if (approval) return void (await gateway.approvals.approve(approval.id, { approver: "cli:ops", channel: "cli" }));
    await new Promise((r) => setTimeout(r, 20));
  }
}

type Message = { method?: string; params?: Record<string, unknown>; result?: unknown; error?: unknown; id?: unknown };

/** A listen stream, read message by message as it arrives. */
async function listen(
  url: URL,
  bearer: string,
  notifications: Record<string, unknown>,
  caps?: Record<string, unknown>,
) {
  const res = await fetch(url, {
    method: "POST",
    headers: headers("subscriptions/listen", bearer),
    body: body("subscriptions/listen", { notifications }, caps),
  });
  const messages: Message[] = [];
  let ended = false;
  let wake = () => {};
  const reading = (async () => {
    if (!res.body) return;
    const decoder = new TextDecoder();
    let pending = "";
    for await (const chunk of res.body) {
      pending += decoder.decode(chunk as Uint8Array, { stream: true });
      let cut: number;
      while ((cut = pending.indexOf("\n\n")) >= 0) {
        const data = /^data: (.*)$/m.exec(pending.slice(0, cut))?.[1];
        pending = pending.slice(cut + 2);
        if (data !== undefined) messages.push(JSON.parse(data) as Message);
        wake();
      }
    }
  })().finally(() => {
    ended = true;
    wake();
  });
  return {
    status: res.status,
    messages,
    /** Resolves once a message satisfies `ok` (or the stream ended: then with undefined). */
    async next(ok: (m: Message) => boolean): Promise<Message | undefined> {
      for (;;) {
        const found = messages.find(ok);
        if (found || ended) return found;
        await new Promise<void>((r) => (wake = r));
      }
    },
    ended: reading,
  };
}

const tasksHeard = (messages: Message[]) => messages.filter((m) => m.method === "notifications/tasks");

describe("notifications/tasks on a 2026-07-28 subscriptions/listen stream", { timeout: 60_000 }, () => {
  it("the owner hears working then completed with the result, and the stream ends gracefully", async () => {
    const { url, gateway, notes } = await serve();
    const taskId = await startTask(url, "alice");
    const stream = await listen(url, "alice", { taskIds: [taskId, taskId] });
    expect(stream.status).toBe(200);
    const ack = await stream.next((m) => m.method === "notifications/subscriptions/acknowledged");
    expect(ack?.params).toMatchObject({ notifications: { taskIds: [taskId] } });
    const working = await stream.next((m) => m.method === "notifications/tasks");
    expect(working?.params).toMatchObject({ taskId, status: "working" });
    const subscription = (working!.params!._meta as Record<string, unknown>)[SUB];
    expect(subscription).toBe((ack!.params!._meta as Record<string, unknown>)[SUB]);

    await approveOne(gateway);
    const completed = await stream.next((m) => m.params?.status === "completed");
    expect(completed?.method).toBe("notifications/tasks");
    expect(obsOf(completed!.params!.result).ok).toBe(true);
    expect(executions(notes)).toEqual(["note_delete p"]);
    await stream.ended;
    // Each status once, and the listen request's own result last.
    expect(tasksHeard(stream.messages).map((m) => m.params!.status)).toEqual(["working", "completed"]);
    expect(stream.messages.at(-1)).toMatchObject({ result: { resultType: "complete" } });
  });

  it("beside toolsListChanged, the stream hears both and stays open after the task is final, until shutdown", async () => {
    const changes = new ChangeSignal();
    const { url, gateway, close } = await serve(undefined, changes);
    const taskId = await startTask(url, "alice");
    const stream = await listen(url, "alice", { toolsListChanged: true, taskIds: [taskId] });
    const ack = await stream.next((m) => m.method === "notifications/subscriptions/acknowledged");
    expect(ack?.params).toMatchObject({ notifications: { toolsListChanged: true, taskIds: [taskId] } });
    await stream.next((m) => m.method === "notifications/tasks");
    changes.emit();
    expect(await stream.next((m) => m.method === "notifications/tools/list_changed")).toBeDefined();
    await approveOne(gateway);
    await stream.next((m) => m.params?.status === "completed");
    // After the task's final status the stream still carries the tool list's changes.
    changes.emit();
    const changed = () => stream.messages.filter((m) => m.method === "notifications/tools/list_changed").length;
    await stream.next(() => changed() === 2);
    expect(stream.messages.some((m) => "result" in m)).toBe(false);
    await close();
    await stream.ended;
    expect(stream.messages.at(-1)).toMatchObject({ result: { resultType: "complete" } });
  });

  it("another principal naming the task hears nothing, with the acknowledgement an unknown id gets", async () => {
    const { url } = await serve();
    const taskId = await startTask(url, "alice");
    const theirs = await listen(url, "mallory", { taskIds: [taskId] });
    const never = await listen(url, "mallory", { taskIds: ["tk_000000000_never"] });
    await Promise.all([theirs.ended, never.ended]);
    // The same bytes but for the id named and the listen request's own id.
    const shape = (s: typeof theirs, named: string) =>
      JSON.stringify(s.messages)
        .replaceAll(named, "ID")
        .replace(/"id":\d+/g, "")
        .replace(/"io.modelcontextprotocol\/subscriptionId":\d+/g, "");
    expect(tasksHeard(theirs.messages)).toEqual([]);
    expect(theirs.messages[0]).toMatchObject({ params: { notifications: { taskIds: [taskId] } } });
    expect(shape(theirs, taskId)).toBe(shape(never, "tk_000000000_never"));
    // The owner still hears it.
    const own = await listen(url, "alice", { taskIds: [taskId] });
    expect((await own.next((m) => m.method === "notifications/tasks"))?.params).toMatchObject({ taskId });
  });

  it("refuses a filter of 10,000 ids, a bad id, and taskIds from a client without the extension", async () => {
    const { url } = await serve();
    const refusal = async (notifications: Record<string, unknown>, caps?: Record<string, unknown>) => {
      const a = await request(url, {
        headers: headers("subscriptions/listen", "alice"),
        body: body("subscriptions/listen", { notifications }, caps),
      });
      return (JSON.parse(a.body) as { error: { code: number; message: string; data?: unknown } }).error;
    };
    const many = Array.from({ length: 10_000 }, (_, i) => `tk_${i}`);
    expect(await refusal({ taskIds: many })).toMatchObject({
      code: -32602,
      message: expect.stringMatching(/params\.notifications\.taskIds holds 10000 ids; at most 32/),
    });
    expect((await refusal({ taskIds: ["tk_a", 7] })).message).toMatch(
      /taskIds\[1\] must be a task id.*received number/,
    );
    expect((await refusal({ taskIds: "tk_a" })).message).toMatch(/taskIds must be an array/);
    expect(await refusal({ taskIds: ["tk_a"] }, {})).toMatchObject({
      code: -32021,
      data: { requiredCapabilities: { extensions: { [TASKS_EXTENSION]: {} } } },
    });
  });

  it("the SDK v2 client's listen with taskIds hears the task's status", async () => {
    const { url } = await serve();
    const c = new Client(
      { name: "sdk-push", version: "1.0.0" },
      { capabilities: { extensions: { [TASKS_EXTENSION]: {} } }, versionNegotiation: { mode: { pin: REVISION } } },
    );
    const heard: Record<string, unknown>[] = [];
    let wake = () => {};
    c.fallbackNotificationHandler = async (n) => {
      if (n.method === "notifications/tasks") heard.push(n.params as Record<string, unknown>);
      wake();
    };
    await c.connect(new StreamableHTTPClientTransport(url));
    cleanup.push(() => c.close());
    // Without a bearer the SDK client is its peer's principal: start the task as that principal.
    const started = await fetch(url, {
      method: "POST",
      headers: { ...headers("tools/call", "x", "note_delete"), authorization: "" },
      body: body("tools/call", { name: "note_delete", arguments: { name: "q" } }),
    });
    const text = await started.text();
    const taskId = (
      JSON.parse(text.startsWith("{") ? text : text.replace(/^[\s\S]*?data: /, "")) as {
        result: { taskId: string };
      }
    ).result.taskId;
    const sub = await c.listen({ taskIds: [taskId] } as never);
    cleanup.push(() => sub.close());
    while (heard.length === 0) await new Promise<void>((r) => (wake = r));
    expect(heard[0]).toMatchObject({ taskId, status: "working" });
  });

  it.runIf(serviceAvailable("Redis", "127.0.0.1", 6379))(
    "on Redis, a stream on one replica hears a task another replica runs",
    async () => {
      const prefix = `tg-tasks-push-${Date.now().toString(36)}-${Math.random().toString(36).slice(2)}:`;
      const notes = tempDir("tasks-push-replicas");
      const a = await serve({ store: await createRedisStore({ url: REDIS_URL, prefix }), notes });
      const b = await serve({ store: await createRedisStore({ url: REDIS_URL, prefix }), notes });
      const taskId = await startTask(a.url, "alice");
      const stream = await listen(b.url, "alice", { taskIds: [taskId] });
      expect((await stream.next((m) => m.method === "notifications/tasks"))?.params).toMatchObject({
        taskId,
        status: "working",
      });
      await approveOne(a.gateway);
      await stream.ended;
      expect(tasksHeard(stream.messages).map((m) => m.params!.status)).toEqual(["working", "completed"]);
      expect(executions(notes)).toEqual(["note_delete p"]);
    },
  );
});
