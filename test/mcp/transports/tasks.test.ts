/**
 * MCP tasks (2025-11-25) with the real SDK v2 client: a task-augmented bash_execute answers with
 * its task at once and runs on; the client reads it through tasks/get, waits for it through
 * tasks/result, lists and cancels it. Over Streamable HTTP the server stays while clients come and
 * go, so a task outlives the session that started it; over stdio (serve spawned from source) one
 * session starts, reads and waits for it.
 */
import { chmodSync, existsSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { Client, StreamableHTTPClientTransport, type Transport } from "@modelcontextprotocol/client";
import { getDefaultEnvironment, StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { createCodingCatalog } from "../../../src/tools/catalog.js";
import { markedTree } from "../../support/procs.js";
import { binaryAvailable } from "../../support/require.js";
import { tempDir } from "../support.js";
import { tasksHttp } from "./tasks-http.js";

const cleanup: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const done of cleanup.splice(0).reverse()) await done().catch(() => {});
});

const TaskSchema = z.looseObject({
  taskId: z.string(),
  status: z.enum(["working", "input_required", "completed", "failed", "cancelled"]),
  ttl: z.number().nullable(),
  createdAt: z.string(),
  lastUpdatedAt: z.string(),
  pollInterval: z.number().optional(),
  statusMessage: z.string().optional(),
});
const CreateTaskResultSchema = z.looseObject({ task: TaskSchema });
const ListTasksResultSchema = z.looseObject({ tasks: z.array(TaskSchema), nextCursor: z.string().optional() });
const ToolResultSchema = z.looseObject({
  isError: z.boolean().optional(),
  content: z.array(z.looseObject({ type: z.string(), text: z.string().optional() })),
  structuredContent: z.looseObject({}).optional(),
  _meta: z.looseObject({}).optional(),
});

/** A workspace the root sandbox's unprivileged user may use. */
function workspace(name: string): string {
  const base = tempDir(`tasks-${name}`);
  const ws = join(base, "ws");
  mkdirSync(ws);
  chmodSync(base, 0o755);
  return ws;
}

async function client(transport: Transport): Promise<Client> {
  const c = new Client({ name: "tasks-test", version: "1.0.0" });
  await c.connect(transport);
  cleanup.push(() => c.close());
  return c;
}

const startTask = (c: Client, command: string, task: unknown = { ttl: 600_000 }) =>
  c.request(
    {
      method: "tools/call",
      params: { name: "bash_execute", arguments: { command, timeout_ms: 120_000 }, task } as never,
    },
    CreateTaskResultSchema,
  );
const getTask = (c: Client, taskId: unknown) =>
  c.request({ method: "tasks/get", params: { taskId } } as never, TaskSchema);
const taskResult = (c: Client, taskId: string) =>
  c.request({ method: "tasks/result", params: { taskId } } as never, ToolResultSchema, { timeout: 120_000 });
const cancelTask = (c: Client, taskId: string) =>
  c.request({ method: "tasks/cancel", params: { taskId } } as never, TaskSchema);
const listTasks = (c: Client) => c.request({ method: "tasks/list", params: {} } as never, ListTasksResultSchema);

async function httpServer(ws: string): Promise<URL> {
  const tools = createCodingCatalog({ workspace: ws, sandbox: { warn: () => {} } });
  const served = await tasksHttp(tools, `sqlite:${join(tempDir("tasks-store"), "state.db")}`);
  cleanup.push(served.close);
  return served.url;
}

const bearer = (url: URL, token: string) =>
  new StreamableHTTPClientTransport(url, { requestInit: { headers: { Authorization: `Bearer ${token}` } } });

describe.runIf(binaryAvailable("bwrap"))("MCP tasks with the SDK v2 client (2025-11-25)", { timeout: 90_000 }, () => {
  describe("over Streamable HTTP", () => {
    it("advertises tasks and marks the tools that may run as one", async () => {
      const c = await client(new StreamableHTTPClientTransport(await httpServer(workspace("list"))));
      expect(c.getServerCapabilities()?.tasks).toEqual({ list: {}, cancel: {}, requests: { tools: { call: {} } } });
      const { tools } = await c.listTools();
      const support = Object.fromEntries(tools.map((t) => [t.name, t.execution?.taskSupport ?? null]));
      expect(support).toMatchObject({ bash_execute: "optional", file_view: null, grep_search: null });
    });

    it("a task outlives the session that started it: another session reads its status and result", async () => {
      const ws = workspace("outlive");
      const url = await httpServer(ws);
      const first = await client(bearer(url, "alice"));
      const { task } = await startTask(first, "echo started; while [ ! -e go ]; do sleep 0.05; done; echo done");
      expect(task).toMatchObject({ status: "working", ttl: 600_000 });
      await first.close();

      const again = await client(bearer(url, "alice"));
      expect(await getTask(again, task.taskId)).toMatchObject({ taskId: task.taskId, status: "working" });
      expect((await listTasks(again)).tasks.map((t) => t.taskId)).toEqual([task.taskId]);
      writeFileSync(join(ws, "go"), "");
      const result = await taskResult(again, task.taskId);
      expect(result.isError).toBeFalsy();
      expect(result.structuredContent).toMatchObject({ exit_code: 0, stdout: "started\ndone\n" });
      expect(result._meta?.["io.modelcontextprotocol/related-task"]).toEqual({ taskId: task.taskId });
      expect(await getTask(again, task.taskId)).toMatchObject({ status: "completed" });
    });

    it("tasks/cancel kills the command's whole process tree", async () => {
      const url = await httpServer(workspace("cancel"));
      const c = await client(bearer(url, "alice"));
      const tree = markedTree();
      const { task } = await startTask(c, `${tree.escapee} sleep 300`);
      const ns = await tree.running(new Promise(() => {}));
      expect(await cancelTask(c, task.taskId)).toMatchObject({ taskId: task.taskId, status: "cancelled" });
      await tree.expectGone(ns);
      expect(await getTask(c, task.taskId)).toMatchObject({ status: "cancelled" });
      await expect(cancelTask(c, task.taskId)).rejects.toThrow(/already cancelled and cannot be cancelled/);
    });

    it("another caller cannot see, wait for, list or cancel a task: it reads as an id never issued", async () => {
      const ws = workspace("owner");
      const url = await httpServer(ws);
      const alice = await client(bearer(url, "alice"));
      const { task } = await startTask(alice, "while [ ! -e go ]; do sleep 0.05; done");
      const mallory = await client(bearer(url, "mallory"));
      const theirs = await getTask(mallory, task.taskId).then(JSON.stringify, (e: Error) => e.message);
      const never = await getTask(mallory, "tk_000000000_never").then(JSON.stringify, (e: Error) => e.message);
      expect(theirs).toMatch(/no task .* for this caller \(unknown, expired, or started by someone else\)/);
      expect(theirs.replace(task.taskId, "ID")).toBe(never.replace("tk_000000000_never", "ID"));
      await expect(taskResult(mallory, task.taskId)).rejects.toThrow(/no task/);
      await expect(cancelTask(mallory, task.taskId)).rejects.toThrow(/no task/);
      expect((await listTasks(mallory)).tasks).toEqual([]);
      expect(await getTask(alice, task.taskId)).toMatchObject({ status: "working" });
      writeFileSync(join(ws, "go"), "");
      expect((await taskResult(alice, task.taskId)).isError).toBeFalsy();
    });

    it("refuses bad task params, naming the field and what to send", async () => {
      const c = await client(bearer(await httpServer(workspace("bad")), "alice"));
      await expect(startTask(c, "true", "soon")).rejects.toThrow(/params\.task must be an object .*received "soon"/);
      await expect(startTask(c, "true", { ttl: -5 })).rejects.toThrow(
        /params\.task\.ttl must be a positive whole number of milliseconds.*received -5/,
      );
      await expect(startTask(c, "true", { ttl: "1h" })).rejects.toThrow(/task\.ttl .*received "1h"/);
      await expect(
        c.request(
          { method: "tools/call", params: { name: "file_view", arguments: { path: "x" }, task: {} } as never },
          CreateTaskResultSchema,
        ),
      ).rejects.toMatchObject({
        code: -32601,
        message: expect.stringMatching(
          /file_view cannot run as a task \(.*"forbidden"; those that can: bash_execute\); received a task-augmented call; call it without params\.task/,
        ),
      });
      await expect(
        c.request(
          { method: "tools/call", params: { name: "bash_exec", arguments: {}, task: {} } as never },
          CreateTaskResultSchema,
        ),
      ).rejects.toThrow(/bash_exec/);
      expect((await listTasks(c)).tasks, "nothing was started for an unknown tool").toEqual([]);
      await expect(getTask(c, 42)).rejects.toThrow(/tasks\/get params\.taskId must be .*received 42/);
      await expect(getTask(c, undefined)).rejects.toThrow(/params\.taskId .*received nothing/);
      await expect(
        c.request({ method: "tasks/list", params: { cursor: 7 } } as never, ListTasksResultSchema),
      ).rejects.toThrow(/tasks\/list params\.cursor .*received 7/);
      expect((await listTasks(c)).tasks).toEqual([]);
    });
  });

  it("a 2026-07-28 call carrying the 2025 task param is told to declare the extension instead, and nothing starts", async () => {
    const ws = workspace("modern");
    const c = new Client(
      { name: "tasks-modern", version: "1.0.0" },
      { versionNegotiation: { mode: { pin: "2026-07-28" } } },
    );
    await c.connect(new StreamableHTTPClientTransport(await httpServer(ws)));
    cleanup.push(() => c.close());
    const { tools } = await c.listTools();
    expect(tools.find((t) => t.name === "bash_execute")?.execution).toBeUndefined();
    await expect(startTask(c, "touch started", { ttl: 1000 })).rejects.toThrow(
      /params\.task: this server runs no tasks on protocol revision 2026-07-28 \(there, declare the io\.modelcontextprotocol\/tasks extension in the client capabilities/,
    );
    expect(existsSync(join(ws, "started"))).toBe(false);
  });

  /** `toolgate serve` over stdio, spawned from source, on the SQLite store at `store`. */
  const stdio = (ws: string, store: string) => {
    const root = join(import.meta.dirname, "../../..");
    return new StdioClientTransport({
      command: process.execPath,
      args: ["--import", "tsx", join(root, "src/cli/main.ts"), "serve", "--workspace", ws, "--store", store],
      cwd: root,
      env: {
        ...getDefaultEnvironment(),
        XDG_STATE_HOME: process.env.XDG_STATE_HOME!,
        XDG_CONFIG_HOME: process.env.XDG_CONFIG_HOME!,
      },
      stderr: "pipe",
    });
  };

  it("over stdio: a task started, read and waited for in one session", async () => {
    const ws = workspace("stdio");
    const c = await client(stdio(ws, `sqlite:${join(tempDir("tasks-stdio-store"), "state.db")}`));
    expect(c.getServerCapabilities()?.tasks).toBeDefined();
    const { task } = await startTask(c, "while [ ! -e go ]; do sleep 0.05; done; echo ok");
    expect(await getTask(c, task.taskId)).toMatchObject({ status: "working" });
    writeFileSync(join(ws, "go"), "");
    expect((await taskResult(c, task.taskId)).structuredContent).toMatchObject({ stdout: "ok\n" });
    expect(await getTask(c, task.taskId)).toMatchObject({ status: "completed" });
  });
});
