/**
 * A proxied tool the upstream runs only as a task (`execution.taskSupport: "required"`): the real
 * @modelcontextprotocol/server-everything's `simulate-research-query`, behind the logging wrapper
 * that records every line the upstream receives. The proxy calls it task-augmented and reads its
 * result with tasks/result (an ordinary call would be refused), and a cancelled call cancels the
 * upstream task. Through the MCP face, a 2025-11-25 client may call it with or without a task.
 */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { createGateway } from "../../../src/runtime/gateway.js";
import { openStore } from "../../../src/idempotency/open.js";
import { createTaskRunner, type TaskRunner } from "../../../src/runtime/tasks.js";
import { serveHttp, type HttpHandle } from "../../../src/mcp/transports/http.js";
import { createProxy, type Proxy } from "../../../src/mcp/proxy/proxy.js";
import { tempDir } from "../support.js";

const wrapper = fileURLToPath(new URL("../fixtures/logging-wrapper.mjs", import.meta.url));
const everything = fileURLToPath(import.meta.resolve("@modelcontextprotocol/server-everything/dist/index.js"));
const TOOL = "simulate-research-query";

let proxy: Proxy;
let tasks: TaskRunner;
let http: HttpHandle;
let log: string;

beforeAll(async () => {
  log = join(tempDir("upstream-task"), "upstream.jsonl");
  const store = await openStore("memory:");
  proxy = await createProxy({
    upstream: {
      command: process.execPath,
      args: [wrapper, process.execPath, everything, "stdio"],
      env: { WRAPPER_LOG: log },
    },
    gateway: async (tools) => createGateway({ tools, store, audit: false }),
    log: () => {},
  });
  tasks = createTaskRunner(proxy.gateway, { store, poll_ms: 50 });
  http = await serveHttp(proxy.gateway, { port: 0, warn: () => {}, tasks });
}, 60_000);

afterAll(async () => {
  await http?.close();
  tasks?.close();
  await proxy?.close({ grace_ms: 100 });
});

type Received = { id?: unknown; method?: string; params?: Record<string, unknown> };

/** What the upstream received, in order. */
const received = (): Received[] =>
  (existsSync(log) ? readFileSync(log, "utf8").split("\n").filter(Boolean) : []).map((l) => JSON.parse(l) as Received);

let n = 0;
const research = (topic: string) => ({
  trajectory_id: "t-upstream-task",
  turn: 1,
  call_id: `research-${++n}`,
  tool: TOOL,
  arguments: { topic },
});

describe("a proxied tool the upstream runs only as a task", { timeout: 60_000 }, () => {
  it("is called upstream task-augmented and answers with the task's result", async () => {
    const obs = await proxy.gateway.call(research("tides"));
    expect(obs.ok, obs.text).toBe(true);
    expect(obs.text).toContain("# Research Report: tides");
    const calls = received().filter((m) => m.method === "tools/call" && m.params?.name === TOOL);
    expect(calls).toHaveLength(1);
    expect(calls[0]!.params).toMatchObject({ arguments: { topic: "tides" }, task: { ttl: expect.any(Number) } });
    expect(received().filter((m) => m.method === "tasks/result")).toHaveLength(1);
  });

  it("a cancelled call cancels the upstream task it started", async () => {
    const before = received().length;
    const stop = new AbortController();
    const answer = proxy.gateway.call(research("storms"), { signal: stop.signal });
    while (
      !received()
        .slice(before)
        .some((m) => m.method === "tasks/result")
    )
      await new Promise((r) => setTimeout(r, 20));
    stop.abort();
    const obs = await answer;
    expect(obs.error?.code).toBe("cancelled");
    const { taskId } = received()
      .slice(before)
      .find((m) => m.method === "tasks/result")!.params as { taskId: string };
    while (!received().some((m) => m.method === "tasks/cancel" && m.params?.taskId === taskId))
      await new Promise((r) => setTimeout(r, 20));
    expect(received().filter((m) => m.method === "tasks/cancel")).toEqual([
      expect.objectContaining({ params: { taskId } }),
    ]);
  });

  it("a 2025-11-25 client sees it as optional and may call it without a task", async () => {
    const c = new Client({ name: "upstream-task", version: "1.0.0" });
    await c.connect(new StreamableHTTPClientTransport(http.url));
    try {
      const tool = (await c.listTools()).tools.find((t) => t.name === TOOL)!;
      expect(tool.execution).toEqual({ taskSupport: "optional" });
      const r = await c.callTool({ name: TOOL, arguments: { topic: "reefs" } });
      expect(r.isError).toBeFalsy();
      expect(JSON.stringify(r.content)).toContain("# Research Report: reefs");
    } finally {
      await c.close();
    }
  });
});
