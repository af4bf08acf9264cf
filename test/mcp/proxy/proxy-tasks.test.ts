/**
 * `toolgate proxy` runs calls as tasks in its own runner: spawned from source in front of the real
 * server-memory (behind a logging wrapper that records what the upstream receives), a 2026-07-28
 * client declaring the tasks extension gets an A3 call (delete_entities) as a task that waits for
 * its approval, approves it with tasks/update and reads the result in tasks/get; the upstream sees
 * one ordinary tools/call, after the approval. A tool the upstream marks with taskSupport may run
 * as a task too.
 */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { Client, type Tool } from "@modelcontextprotocol/client";
import { getDefaultEnvironment, StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { proxyToolSpec } from "../../../src/mcp/proxy/proxy-tools.js";
import { mayRunAsTask } from "../../../src/runtime/tasks.js";
import { TASKS_EXTENSION } from "../../../src/mcp/server/tasks-ext.js";
import { tempDir } from "../support.js";
import { rawRequest } from "../raw-transport.js";

const root = join(import.meta.dirname, "../../..");
const wrapper = fileURLToPath(new URL("../fixtures/logging-wrapper.mjs", import.meta.url));
const memoryServer = fileURLToPath(import.meta.resolve("@modelcontextprotocol/server-memory/dist/index.js"));

const cleanup: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const done of cleanup.splice(0).reverse()) await done().catch(() => {});
});

const ENVELOPE = {
  "io.modelcontextprotocol/protocolVersion": "2026-07-28",
  "io.modelcontextprotocol/clientCapabilities": { elicitation: { form: {} }, extensions: { [TASKS_EXTENSION]: {} } },
  "io.modelcontextprotocol/clientInfo": { name: "raw", version: "1" },
};

const raw = (c: Client, method: string, params: Record<string, unknown>) => rawRequest(c, method, params, ENVELOPE);

/** `toolgate proxy FLAGS -- server-memory` (behind the logging wrapper), spawned from source, and a 2026 client of it. */
async function proxyClient(flags: string[] = []): Promise<{ c: Client; log: string }> {
  const dir = tempDir("proxy-tasks");
  const log = join(dir, "upstream.jsonl");
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [
      "--import",
      // The proxy runs in its own folder, where "tsx" does not resolve by name.
      import.meta.resolve("tsx"),
      join(root, "src/cli/main.ts"),
      "proxy",
      "--store",
      // Outside the proxy's workspace (its folder), where state is refused.
      `sqlite:${join(tempDir("proxy-tasks-state"), "state.db")}`,
      ...flags,
      "--",
      process.execPath,
      wrapper,
      process.execPath,
      memoryServer,
    ],
    cwd: dir,
    env: {
      ...getDefaultEnvironment(),
      WRAPPER_LOG: log,
      MEMORY_FILE_PATH: join(dir, "memory.jsonl"),
      XDG_STATE_HOME: process.env.XDG_STATE_HOME!,
      XDG_CONFIG_HOME: process.env.XDG_CONFIG_HOME!,
    },
    stderr: "pipe",
  });
  const c = new Client(
    { name: "proxy-tasks", version: "1.0.0" },
    {
      capabilities: { elicitation: { form: {} }, extensions: { [TASKS_EXTENSION]: {} } },
      versionNegotiation: { mode: { pin: "2026-07-28" } },
    },
  );
  await c.connect(transport);
  cleanup.push(() => c.close());
  return { c, log };
}

describe("toolgate proxy runs tasks", { timeout: 90_000 }, () => {
  it("an A3 upstream call as a 2026 task: approved by tasks/update, the upstream called once, ordinarily", async () => {
    const { c, log } = await proxyClient();
    expect(c.getServerCapabilities()?.extensions).toMatchObject({ [TASKS_EXTENSION]: {} });

    const created = await raw(c, "tools/call", { name: "delete_entities", arguments: { entityNames: ["x"] } });
    const task = created.result as { resultType: string; taskId: string; status: string };
    expect(task).toMatchObject({ resultType: "task", status: "working" });
    const Task = z.looseObject({ status: z.string(), inputRequests: z.record(z.string(), z.unknown()).optional() });
    const get = () => c.request({ method: "tasks/get", params: { taskId: task.taskId } } as never, Task);
    let t = await get();
    while (t.status !== "input_required") t = await get();
    const upstreamCalls = () =>
      (existsSync(log) ? readFileSync(log, "utf8").split("\n").filter(Boolean) : [])
        .map((l) => JSON.parse(l) as { method?: string; params?: Record<string, unknown> })
        .filter((m) => m.method === "tools/call");
    expect(upstreamCalls(), "nothing reaches the upstream before the approval").toEqual([]);
    const [key] = Object.keys(t.inputRequests ?? {});
    expect(key).toMatch(/^toolgate\/approval\/ap_/);
    const ack = await raw(c, "tasks/update", { taskId: task.taskId, inputResponses: { [key!]: { action: "accept" } } });
    expect(ack.result).toMatchObject({ resultType: "complete" });
    while (t.status !== "completed") t = await get();
    expect(t).toMatchObject({ result: { structuredContent: { success: true } } });
    const calls = upstreamCalls();
    expect(calls).toHaveLength(1);
    expect(calls[0]!.params).toMatchObject({ name: "delete_entities", arguments: { entityNames: ["x"] } });
    expect(calls[0]!.params).not.toHaveProperty("task");
  });

  it("--max-tasks-per-owner 1: a second task of the same caller is refused while the first waits for its approval", async () => {
    const { c } = await proxyClient(["--max-tasks-per-owner", "1"]);
    const start = (name: string) =>
      raw(c, "tools/call", { name: "delete_entities", arguments: { entityNames: [name] } });
    const first = (await start("a")).result as { resultType: string; taskId: string };
    expect(first).toMatchObject({ resultType: "task" });
    const second = await start("b");
    expect(second.result).toBeUndefined();
    expect(JSON.stringify(second.error)).toMatch(
      /already has 1 tasks running, the most one caller may \(max_live_per_owner 1\); nothing was started: wait for one to end \(tasks\/get\), cancel one \(tasks\/cancel\), then call again/,
    );
    expect((await raw(c, "tasks/cancel", { taskId: first.taskId })).error).toBeUndefined();
    // The cancelled call lets go of its place as it unwinds, which may be a moment after tasks/cancel answers.
    let third = await start("c");
    while (third.error !== undefined && /already has 1 tasks/.test(JSON.stringify(third.error)))
      third = await start("c");
    expect(third.result).toMatchObject({ resultType: "task" });
  });

  it("an upstream tool marked with taskSupport may run as a task; an unmarked non-A3 one may not", () => {
    const tool = (name: string, extra: Partial<Tool> = {}): Tool =>
      ({ name, inputSchema: { type: "object" }, annotations: { readOnlyHint: true }, ...extra }) as Tool;
    const upstream = {} as never;
    expect(mayRunAsTask(proxyToolSpec(upstream, tool("research", { execution: { taskSupport: "required" } })))).toBe(
      true,
    );
    expect(mayRunAsTask(proxyToolSpec(upstream, tool("maybe", { execution: { taskSupport: "optional" } })))).toBe(true);
    expect(mayRunAsTask(proxyToolSpec(upstream, tool("never", { execution: { taskSupport: "forbidden" } })))).toBe(
      false,
    );
    expect(mayRunAsTask(proxyToolSpec(upstream, tool("plain")))).toBe(false);
  });
});
