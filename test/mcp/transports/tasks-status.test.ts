/**
 * What a running task tells its client, with the real SDK v2 client: on 2025-11-25 the session
 * that started a task hears notifications/tasks/status at each status change and the call's
 * progress under the progressToken of the tools/call that started it; on 2026-07-28 (the tasks
 * extension has no progress) tasks/get's statusMessage is the call's latest progress line. Over
 * Streamable HTTP in process and over stdio (`serve --catalog`, spawned from source), both on
 * SQLite; a cancel stops the call.
 */
import { existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { Client, StreamableHTTPClientTransport, type Transport } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { TASKS_EXTENSION } from "../../../src/mcp/server/tasks-ext.js";
import catalog from "../fixtures/tasks-catalog.js";
import { notesServeCommand, tempDir } from "../support.js";
import { rawRequest } from "../raw-transport.js";
import { tasksHttp } from "./tasks-http.js";

const cleanup: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const done of cleanup.splice(0).reverse()) await done().catch(() => {});
});

const Task = z.looseObject({ taskId: z.string(), status: z.string(), statusMessage: z.string().optional() });
const Created = z.looseObject({ task: Task });
const CallResult = z.looseObject({ structuredContent: z.looseObject({}).optional(), isError: z.boolean().optional() });

async function httpServer(): Promise<{ url: URL; notes: string }> {
  const notes = tempDir("tasks-status");
  process.env.NOTES_DIR = notes;
  const served = await tasksHttp(catalog, `sqlite:${join(tempDir("tasks-status-store"), "state.db")}`, 50);
  cleanup.push(served.close);
  return { url: served.url, notes };
}

/** `toolgate serve --catalog` (the tasks catalog) over stdio, spawned from source, on a SQLite store. */
function stdio(notes: string): StdioClientTransport {
  const store = `sqlite:${join(tempDir("tasks-status-stdio"), "state.db")}`;
  return new StdioClientTransport({
    ...notesServeCommand(notes, { catalog: "tasks-catalog.ts", store }),
    stderr: "pipe",
  });
}

interface Heard {
  statuses: string[];
  progress: { progressToken: unknown; message?: string }[];
}

async function legacyClient(transport: Transport): Promise<{ c: Client; heard: Heard; changed: () => Promise<void> }> {
  const c = new Client({ name: "tasks-status", version: "1.0.0" });
  const heard: Heard = { statuses: [], progress: [] };
  let wake = () => {};
  const changed = () => new Promise<void>((r) => (wake = r));
  await c.connect(transport);
  // Heard as they arrive on the wire: the SDK client keeps no progress handler once a call has answered.
  const onmessage = transport.onmessage;
  transport.onmessage = (m, extra) => {
    const n = m as { method?: string; params?: Record<string, unknown> };
    if (n.method === "notifications/tasks/status") heard.statuses.push(n.params!.status as string);
    if (n.method === "notifications/progress") heard.progress.push(n.params as Heard["progress"][number]);
    if (n.method?.startsWith("notifications/")) wake();
    if (n.method !== "notifications/progress") onmessage?.(m, extra);
  };
  cleanup.push(() => c.close());
  return { c, heard, changed };
}

/** Waits, one notification at a time, until `ok` holds. */
async function hear(changed: () => Promise<void>, ok: () => boolean): Promise<void> {
  while (!ok()) await changed();
}

async function legacyFlow(transport: Transport, notes: string) {
  const { c, heard, changed } = await legacyClient(transport);
  const { task } = await c.request(
    {
      method: "tools/call",
      params: { name: "job_wait", arguments: { name: "a" }, task: { ttl: 600_000 }, _meta: { progressToken: "p-1" } },
    } as never,
    Created,
  );
  await hear(changed, () => heard.progress.some((p) => p.message?.startsWith("job a: waiting")));
  expect(heard.progress.every((p) => p.progressToken === "p-1")).toBe(true);
  writeFileSync(join(notes, "go-a"), "");
  const result = await c.request({ method: "tasks/result", params: { taskId: task.taskId } } as never, CallResult, {
    timeout: 60_000,
  });
  expect(result.structuredContent).toMatchObject({ name: "a" });
  await hear(changed, () => heard.statuses.includes("completed"));
  expect(heard.statuses).toEqual(["completed"]);
  return { c, heard, changed };
}

describe("task status and progress", { timeout: 90_000 }, () => {
  it("2025-11-25 over HTTP: progress under the call's token, then notifications/tasks/status completed", async () => {
    const { url, notes } = await httpServer();
    await legacyFlow(new StreamableHTTPClientTransport(url), notes);
  });

  it("2025-11-25 over HTTP: a cancelled task's session hears cancelled once, and the call stops", async () => {
    const { url } = await httpServer();
    const { c, heard, changed } = await legacyClient(new StreamableHTTPClientTransport(url));
    const { task } = await c.request(
      { method: "tools/call", params: { name: "job_wait", arguments: { name: "b" }, task: {} } } as never,
      Created,
    );
    expect(await c.request({ method: "tasks/cancel", params: { taskId: task.taskId } } as never, Task)).toMatchObject({
      status: "cancelled",
    });
    await hear(changed, () => heard.statuses.includes("cancelled"));
    const done = await c.request({ method: "tasks/result", params: { taskId: task.taskId } } as never, CallResult);
    expect(JSON.stringify(done)).toMatch(/cancel/);
    expect(heard.statuses).toEqual(["cancelled"]);
  });

  it("2025-11-25 over stdio: the same notifications from `toolgate serve --catalog`", async () => {
    const notes = tempDir("tasks-status-stdio-notes");
    await legacyFlow(stdio(notes), notes);
  });

  it("2026-07-28 over stdio: a job runs as a task, its progress line in tasks/get, the result inside it", async () => {
    const notes = tempDir("tasks-status-stdio-modern");
    const c = new Client(
      { name: "tasks-modern", version: "1.0.0" },
      { capabilities: { extensions: { [TASKS_EXTENSION]: {} } }, versionNegotiation: { mode: { pin: "2026-07-28" } } },
    );
    await c.connect(stdio(notes));
    cleanup.push(() => c.close());
    // The SDK client refuses `resultType: "task"` on tools/call: that answer is read raw off its transport.
    const created = await rawCall(c, { name: "job_wait", arguments: { name: "m" } });
    expect(created).toMatchObject({ resultType: "task", status: "working" });
    const get = () => c.request({ method: "tasks/get", params: { taskId: created.taskId } } as never, Task);
    let t = await get();
    while (!t.statusMessage?.startsWith("job m: waiting")) t = await get();
    expect(t.status).toBe("working");
    writeFileSync(join(notes, "go-m"), "");
    while (t.status === "working") t = await get();
    expect(t).toMatchObject({ status: "completed", result: { structuredContent: { name: "m" } } });
    expect(existsSync(join(notes, "go-m"))).toBe(true);
  });
});

describe("serve --max-tasks-per-owner", { timeout: 90_000 }, () => {
  it("1 over stdio: a second running task of the same caller is refused, naming the bound; once the first ends, one starts", async () => {
    const notes = tempDir("tasks-bound-stdio");
    const command = notesServeCommand(notes, {
      catalog: "tasks-catalog.ts",
      store: `sqlite:${join(tempDir("tasks-bound-store"), "state.db")}`,
    });
    command.args.push("--max-tasks-per-owner", "1");
    const c = new Client({ name: "tasks-bound", version: "1.0.0" });
    await c.connect(new StdioClientTransport({ ...command, stderr: "pipe" }));
    cleanup.push(() => c.close());
    const start = (name: string) =>
      c.request(
        { method: "tools/call", params: { name: "job_wait", arguments: { name }, task: { ttl: 600_000 } } } as never,
        Created,
      );
    const first = await start("one");
    expect(first.task.status).toBe("working");
    const refused = await start("two").then(
      () => null,
      (err: Error) => err.message,
    );
    expect(refused).toMatch(/already has 1 tasks running, the most one caller may \(max_live_per_owner 1\)/);
    writeFileSync(join(notes, "go-one"), "");
    await c.request({ method: "tasks/result", params: { taskId: first.task.taskId } } as never, CallResult, {
      timeout: 60_000,
    });
    // The call lets go of its place as it unwinds, which may be a moment after its result is stored.
    let next = await start("three").catch((err: Error) => err);
    while (next instanceof Error && next.message.includes("already has 1 tasks"))
      next = await start("three").catch((err: Error) => err);
    if (next instanceof Error) throw next;
    expect(next.task.status).toBe("working");
    writeFileSync(join(notes, "go-three"), "");
  });
});

/** A 2026-07-28 tools/call declaring the tasks extension, its answer as sent. */
async function rawCall(c: Client, params: Record<string, unknown>) {
  const answer = await rawRequest(c, "tools/call", params, {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": { extensions: { [TASKS_EXTENSION]: {} } },
    "io.modelcontextprotocol/clientInfo": { name: "raw", version: "1" },
  });
  return answer.result as Record<string, unknown> & { taskId: string };
}
