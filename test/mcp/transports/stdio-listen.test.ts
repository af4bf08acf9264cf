/**
 * 2026-07-28 `subscriptions/listen` over stdio, served as over Streamable HTTP: the real
 * `toolgate serve` and `toolgate proxy` CLIs spawned from source, spoken to in raw JSON-RPC lines
 * and with the SDK v2 client. A listen naming `taskIds` hears `notifications/tasks` for the
 * connection's task through completion (the tasks catalog's job_wait, and a real sandboxed
 * bash_execute); at most 8 listens are open at once; bad params are a -32602 naming the field; a
 * cancelled listen ends and frees its place; a tasks-only listen ends gracefully once each of its
 * tasks is final (one whose acknowledgement honored a core change type too is held until stdin
 * ends); through the proxy an upstream's resources/updated reaches the listen
 * naming the URI, and the upstream is unsubscribed when the listen is cancelled.
 */
import { writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { Client, type Transport } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { TASKS_EXTENSION } from "../../../src/mcp/server/tasks-ext.js";
import { createGateway } from "../../../src/runtime/gateway.js";
import { openStore } from "../../../src/idempotency/open.js";
import { createTaskRunner } from "../../../src/runtime/tasks.js";
import catalog from "../fixtures/tasks-catalog.js";
import { MAX_LISTEN_TASK_IDS } from "../../../src/mcp/server/tasks-push.js";
import { DEFAULT_MAX_LISTENS_PER_CLIENT } from "../../../src/mcp/transports/listen-hold.js";
import { proxyProcess } from "../../support/proxy-process.js";
import { notesServeCommand, tempDir, textOf } from "../support.js";
import { lineClient, type Line, type LineClient } from "./stdio-lines.js";

const SUB = "io.modelcontextprotocol/subscriptionId";
const CAPS = { extensions: { [TASKS_EXTENSION]: {} } };
const envelope = (caps: Record<string, unknown> = CAPS) => ({
  "io.modelcontextprotocol/protocolVersion": "2026-07-28",
  "io.modelcontextprotocol/clientCapabilities": caps,
  "io.modelcontextprotocol/clientInfo": { name: "stdio-listen", version: "1.0.0" },
});
const listing = fileURLToPath(new URL("../fixtures/listing-server.mjs", import.meta.url));

const cleanup: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const done of cleanup.splice(0).reverse()) await done().catch(() => {});
});

function started(command: ReturnType<typeof notesServeCommand>): LineClient {
  const c = lineClient(command);
  cleanup.push(async () => {
    c.child.kill();
  });
  return c;
}

/** `toolgate serve` on the tasks catalog over stdio, on SQLite; the notes dir decides when job_wait ends. */
function serveTasks(): { c: LineClient; notes: string } {
  const notes = tempDir("stdio-listen");
  const store = `sqlite:${join(tempDir("stdio-listen-store"), "state.db")}`;
  return { c: started(notesServeCommand(notes, { catalog: "tasks-catalog.ts", store })), notes };
}

const call = (c: LineClient, name: string, args: Record<string, unknown>) =>
  c.request("tools/call", { name, arguments: args, _meta: envelope() });

/** Starts job_wait `name` as a task; its id. */
async function startJob(c: LineClient, name: string): Promise<string> {
  const created = await call(c, "job_wait", { name });
  expect(created.result).toMatchObject({ resultType: "task", status: "working" });
  return created.result!.taskId as string;
}

const listen = (c: LineClient, id: string, notifications: unknown, caps?: Record<string, unknown>) =>
  c.send({ id, method: "subscriptions/listen", params: { notifications, _meta: envelope(caps) } });
const ackOf = (c: LineClient, id: string) =>
  c.next((m) => m.method === "notifications/subscriptions/acknowledged" && subscription(m) === id);
const subscription = (m: Line) => (m.params?._meta as Record<string, unknown> | undefined)?.[SUB];
const tasksOn = (c: LineClient, id: string) =>
  c.lines.filter((m) => m.method === "notifications/tasks" && subscription(m) === id);
const answerTo = (c: LineClient, id: string) => c.next((m) => m.id === id && m.method === undefined);

describe("subscriptions/listen with taskIds over stdio (toolgate serve)", { timeout: 120_000 }, () => {
  it("hears working then completed with the result, each once; naming only tasks, the listen then ends gracefully, as over HTTP", async () => {
    const { c, notes } = serveTasks();
    const taskId = await startJob(c, "a");
    listen(c, "L1", { taskIds: [taskId, taskId] });
    const ack = await ackOf(c, "L1");
    expect(ack.params).toMatchObject({ notifications: { taskIds: [taskId] } });
    const working = await c.next((m) => m.method === "notifications/tasks" && subscription(m) === "L1");
    expect(working.params).toMatchObject({ taskId, status: "working" });
    writeFileSync(join(notes, "go-a"), "");
    const completed = await c.next((m) => m.method === "notifications/tasks" && m.params?.status === "completed");
    expect(subscription(completed)).toBe("L1");
    expect(completed.params).toMatchObject({ taskId, result: { structuredContent: { name: "a" } } });
    // Tasks only, and each final: the listen ends with the graceful result, after the final status.
    const ended = await answerTo(c, "L1");
    // It names the server, as toolgate serve names itself (serverInfoOf's default: no name given).
    expect(ended).toEqual({
      jsonrpc: "2.0",
      id: "L1",
      result: {
        resultType: "complete",
        _meta: { [SUB]: "L1", "io.modelcontextprotocol/serverInfo": { name: "toolgate", version: "0.1.0" } },
      },
    });
    expect(c.lines.indexOf(ended)).toBeGreaterThan(c.lines.indexOf(completed));
    expect(tasksOn(c, "L1").map((m) => m.params!.status)).toEqual(["working", "completed"]);
    // The connection serves on; the id is free for a listen again.
    expect((await c.request("tools/list", { _meta: envelope() })).result).toHaveProperty("tools");
    listen(c, "L1", { taskIds: [taskId] });
    await ackOf(c, "L1");
    const exit = c.end();
    expect(await exit).toBe(0);
    expect(c.lines.filter((m) => m.id === "L1")).toHaveLength(2);
  });

  it("a real bash_execute as a task (toolgate serve's own catalog): working, then completed with its output", async () => {
    const workspace = tempDir("stdio-listen-bash");
    const command = notesServeCommand(workspace, {
      store: `sqlite:${join(tempDir("stdio-listen-bash-store"), "state.db")}`,
    });
    // The default catalog: drop --catalog FILE.
    const at = command.args.indexOf("--catalog");
    command.args.splice(at, 2);
    const c = started(command);
    const created = await call(c, "bash_execute", {
      command: "until [ -e go ]; do sleep 0.05; done; echo finished",
    });
    expect(created.result).toMatchObject({ resultType: "task", status: "working" });
    const taskId = created.result!.taskId as string;
    listen(c, "B", { taskIds: [taskId] });
    await ackOf(c, "B");
    expect((await c.next((m) => m.method === "notifications/tasks")).params).toMatchObject({ status: "working" });
    writeFileSync(join(workspace, "go"), "");
    const completed = await c.next((m) => m.method === "notifications/tasks" && m.params?.status === "completed");
    expect(JSON.stringify(completed.params!.result)).toContain("finished");
    expect(tasksOn(c, "B").map((m) => m.params!.status)).toEqual(["working", "completed"]);
  });

  it("the SDK v2 client's listen with taskIds hears the task's status", async () => {
    const notes = tempDir("stdio-listen-sdk");
    const store = `sqlite:${join(tempDir("stdio-listen-sdk-store"), "state.db")}`;
    const client = new Client(
      { name: "stdio-listen-sdk", version: "1.0.0" },
      { capabilities: CAPS, versionNegotiation: { mode: { pin: "2026-07-28" } } },
    );
    const heard: Record<string, unknown>[] = [];
    let wake = () => {};
    client.fallbackNotificationHandler = async (n) => {
      if (n.method === "notifications/tasks") heard.push(n.params as Record<string, unknown>);
      wake();
    };
    const transport: Transport = new StdioClientTransport({
      ...notesServeCommand(notes, { catalog: "tasks-catalog.ts", store }),
      stderr: "pipe",
    });
    await client.connect(transport);
    cleanup.push(() => client.close());
    // The SDK client refuses a tools/call answered with `resultType: "task"`: read it off the transport.
    const answer = new Promise<Record<string, unknown>>((resolve) => {
      const onmessage = transport.onmessage;
      transport.onmessage = (m, extra) => {
        if ((m as { id?: unknown }).id === "job") {
          transport.onmessage = onmessage;
          resolve((m as { result: Record<string, unknown> }).result);
        } else onmessage?.(m, extra);
      };
    });
    await transport.send({
      jsonrpc: "2.0",
      id: "job",
      method: "tools/call",
      params: { name: "job_wait", arguments: { name: "s" }, _meta: envelope() },
    });
    const taskId = (await answer).taskId as string;
    // The SDK client reads the acknowledgement's filter through its schema, which knows no taskIds.
    const sub = await client.listen({ taskIds: [taskId] } as never);
    while (heard.length === 0) await new Promise<void>((r) => (wake = r));
    expect(heard[0]).toMatchObject({ taskId, status: "working" });
    writeFileSync(join(notes, "go-s"), "");
    while (!heard.some((t) => t.status === "completed")) await new Promise<void>((r) => (wake = r));
    await sub.close();
  });

  it(`at most ${DEFAULT_MAX_LISTENS_PER_CLIENT} listens open at once: one more is refused naming the bound; a cancelled one frees its place`, async () => {
    const { c } = serveTasks();
    // An empty filter is a listen too (the entry holds it open), as is one naming only tasks.
    for (let i = 0; i < DEFAULT_MAX_LISTENS_PER_CLIENT; i++) {
      listen(c, `K${i}`, {});
      await ackOf(c, `K${i}`);
    }
    listen(c, "over", {});
    expect((await answerTo(c, "over")).error).toMatchObject({
      code: -32000,
      message: expect.stringMatching(
        /^too many subscriptions\/listen streams at once on this stdio connection: 8 are open, the most toolgate allows \(8\); cancel one/,
      ),
      data: { limit: 8 },
    });
    c.send({ method: "notifications/cancelled", params: { requestId: "K3" } });
    listen(c, "after", { taskIds: ["tk_unknown"] });
    expect((await ackOf(c, "after")).params).toMatchObject({ notifications: { taskIds: ["tk_unknown"] } });
    // The id of an open listen is not taken again.
    listen(c, "K0", {});
    expect((await answerTo(c, "K0")).error?.message).toMatch(
      /subscriptions\/listen id "K0" names a listen already open/,
    );
  });

  it("bad params are a -32602 naming the field; taskIds from a client without the extension is -32021", async () => {
    const { c } = serveTasks();
    const refused = async (id: string, notifications: unknown, caps?: Record<string, unknown>) => {
      listen(c, id, notifications, caps);
      return (await answerTo(c, id)).error!;
    };
    expect(await refused("n1", undefined)).toMatchObject({
      code: -32602,
      message: expect.stringMatching(
        /^subscriptions\/listen params\.notifications must be an object.*received nothing$/,
      ),
    });
    expect((await refused("n2", { toolsListChanged: "yes" })).message).toBe(
      'subscriptions/listen params.notifications.toolsListChanged must be true or false; received "yes"',
    );
    expect((await refused("n3", { resourceSubscriptions: ["a://x", 7] })).message).toMatch(
      /params\.notifications\.resourceSubscriptions\[1\] must be a resource URI \(a string\); received 7$/,
    );
    const many = Array.from({ length: MAX_LISTEN_TASK_IDS + 1 }, (_, i) => `tk_${i}`);
    expect(await refused("n4", { taskIds: many })).toMatchObject({
      code: -32602,
      message: expect.stringMatching(/params\.notifications\.taskIds holds 33 ids; at most 32/),
    });
    expect((await refused("n5", { taskIds: "tk_a" })).message).toMatch(
      /params\.notifications\.taskIds must be an array/,
    );
    expect((await refused("n6", { taskIds: ["tk_a", ""] })).message).toMatch(/taskIds\[1\] must be a task id/);
    expect(await refused("n7", { taskIds: ["tk_a"] }, {})).toMatchObject({ code: -32021 });
    // None of them holds a place: eight listens open after them.
    for (let i = 0; i < DEFAULT_MAX_LISTENS_PER_CLIENT; i++) {
      listen(c, `ok${i}`, {});
      await ackOf(c, `ok${i}`);
    }
  });

  it("a cancelled listen hears no more of its task; the id may open a listen again", async () => {
    const { c, notes } = serveTasks();
    const taskId = await startJob(c, "c");
    listen(c, "gone", { taskIds: [taskId] });
    await c.next((m) => m.method === "notifications/tasks" && subscription(m) === "gone");
    c.send({ method: "notifications/cancelled", params: { requestId: "gone" } });
    // Messages are served in order: once this answer is read the cancel has been served.
    await c.request("tools/list", { _meta: envelope() });
    const heardBefore = tasksOn(c, "gone").length;
    listen(c, "stays", { taskIds: [taskId] });
    await c.next((m) => m.method === "notifications/tasks" && subscription(m) === "stays");
    writeFileSync(join(notes, "go-c"), "");
    await c.next((m) => m.params?.status === "completed" && subscription(m) === "stays");
    // A third listen's first read of the final task comes after the cancelled watch's next read would have.
    listen(c, "third", { taskIds: [taskId] });
    await c.next((m) => m.params?.status === "completed" && subscription(m) === "third");
    expect(tasksOn(c, "gone")).toHaveLength(heardBefore);
    // The SDK's entry sends no result for a cancelled listen; the id is free again.
    expect(c.lines.some((m) => m.id === "gone")).toBe(false);
    listen(c, "gone", { taskIds: [taskId] });
    expect((await ackOf(c, "gone")).params).toMatchObject({ notifications: { taskIds: [taskId] } });
  });
});

describe("a toolgate serve that dies mid-task", { timeout: 120_000 }, () => {
  it("leaves the task working only until the stale bound: then any reader on the store reads it failed, saying what is unknown", async () => {
    const notes = tempDir("stdio-listen-dies");
    const file = join(tempDir("stdio-listen-dies-store"), "state.db");
    const c = started(notesServeCommand(notes, { catalog: "tasks-catalog.ts", store: `sqlite:${file}` }));
    const taskId = await startJob(c, "dies");
    listen(c, "D", { taskIds: [taskId] });
    await c.next((m) => m.method === "notifications/tasks" && m.params?.status === "working");
    c.child.kill("SIGKILL");
    await new Promise((r) => c.child.once("exit", r));
    // Another process on the same store: still working within the bound (the dead one wrote it
    // within the last poll), failed once its clock is past it. Its clock is the one thing given.
    const store = await openStore(`sqlite:${file}`);
    cleanup.push(() => store.close());
    const gateway = createGateway({ tools: catalog, store, audit: false });
    cleanup.push(() => gateway.close({ grace_ms: 0 }));
    let now = Date.now();
    const runner = createTaskRunner(gateway, { store, clock: () => now, stale_ms: 60_000 });
    cleanup.push(async () => runner.close());
    expect((await runner.get(taskId, "stdio client"))?.status).toBe("working");
    now += 61_000;
    const failed = await runner.get(taskId, "stdio client");
    expect(failed).toMatchObject({ status: "failed" });
    expect(failed!.status_message).toMatch(
      /^the toolgate process running this task stopped writing it \d+ s ago; whether the call finished is unknown/,
    );
  });
});

describe("subscriptions/listen through toolgate proxy over stdio", { timeout: 120_000 }, () => {
  it("an upstream's resources/updated reaches the listen naming the URI only; cancelling it unsubscribes upstream", async () => {
    const c = lineClient(proxyProcess([listing], "stdio-listen-proxy"));
    cleanup.push(async () => {
      c.child.kill();
    });
    const subs = async () => textOf((await call(c, "subs", {})).result);
    listen(c, "R", { resourceSubscriptions: ["listing://item/0"] });
    expect((await ackOf(c, "R")).params).toMatchObject({
      notifications: { resourceSubscriptions: ["listing://item/0"] },
    });
    listen(c, "T", { toolsListChanged: true });
    await ackOf(c, "T");
    expect(await subs()).toContain("subscribed=listing://item/0 subscribes=1");
    // touch sends resources/updated for item/0 and item/1; only item/0 has a listener.
    await call(c, "touch", {});
    const updated = await c.next((m) => m.method === "notifications/resources/updated");
    expect(updated.params).toMatchObject({ uri: "listing://item/0", _meta: { [SUB]: "R" } });
    await call(c, "subs", {});
    const updates = c.lines.filter((m) => m.method === "notifications/resources/updated");
    expect(updates.map((m) => [m.params!.uri, subscription(m)])).toEqual([["listing://item/0", "R"]]);

    c.send({ method: "notifications/cancelled", params: { requestId: "R" } });
    let now = await subs();
    for (let i = 0; i < 200 && !now.includes("subscribed= "); i++) now = await subs();
    expect(now).toContain("subscribed= subscribes=1");
  });

  it("a URI the proxy will not subscribe to is refused naming the field, and holds no place", async () => {
    const c = lineClient(proxyProcess([listing], "stdio-listen-proxy-bad"));
    cleanup.push(async () => {
      c.child.kill();
    });
    listen(c, "X", { resourceSubscriptions: ["listing://item/0", "listing://\u202eitem"] });
    const refused = await answerTo(c, "X");
    expect(refused.error).toMatchObject({
      code: -32602,
      message: expect.stringMatching(
        /^subscriptions\/listen params\.notifications\.resourceSubscriptions: .*control or invisible characters/,
      ),
    });
    // What it had subscribed before the refused URI is given up again.
    let now = textOf((await call(c, "subs", {})).result);
    for (let i = 0; i < 200 && !now.includes("subscribed= "); i++) now = textOf((await call(c, "subs", {})).result);
    expect(now).toContain("subscribed= ");
    listen(c, "X", { resourceSubscriptions: ["listing://item/1"] });
    expect((await ackOf(c, "X")).params).toMatchObject({
      notifications: { resourceSubscriptions: ["listing://item/1"] },
    });
  });

  it("the SDK v2 client's listen hears server-everything's resources/updated", async () => {
    const everything = fileURLToPath(import.meta.resolve("@modelcontextprotocol/server-everything/dist/index.js"));
    const client = new Client(
      { name: "stdio-listen-everything", version: "1.0.0" },
      {
        versionNegotiation: { mode: { pin: "2026-07-28" } },
      },
    );
    await client.connect(new StdioClientTransport(proxyProcess([everything, "stdio"], "stdio-listen-everything")));
    cleanup.push(() => client.close());
    const uri = (await client.listResources()).resources[0]!.uri;
    const heard: string[] = [];
    let wake = () => {};
    client.setNotificationHandler("notifications/resources/updated", (n) => {
      heard.push(n.params.uri);
      wake();
    });
    const sub = await client.listen({ resourceSubscriptions: [uri] });
    expect(sub.honoredFilter).toMatchObject({ resourceSubscriptions: [uri] });
    await client.callTool({ name: "toggle-subscriber-updates", arguments: {} });
    while (heard.length === 0) await new Promise<void>((r) => (wake = r));
    expect(heard[0]).toBe(uri);
    await sub.close();
  });
});
