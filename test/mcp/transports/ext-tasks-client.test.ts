/**
 * A real 2026-07-28 tasks client, `@modelcontextprotocol/ext-tasks` over the SDK v2 client,
 * against `toolgate serve` spawned from source, over stdio and Streamable HTTP: a bash_execute
 * that outlasts `--task-after-ms` comes back as a task, which the package polls to completion and
 * reads the result of; another is cancelled through the package, and its whole process tree is
 * gone. The package drives tools/call and tasks/* itself (`rawDispatch`, `v2RequestFraming`).
 */
import { spawn } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it, onTestFinished } from "vitest";
import { Client, StreamableHTTPClientTransport, type Transport } from "@modelcontextprotocol/client";
import { getDefaultEnvironment, StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { createTaskSessionFromClient } from "@modelcontextprotocol/ext-tasks/client";
import { TASKS_EXTENSION } from "../../../src/mcp/server/tasks-ext.js";
import { binaryAvailable, projectRoot } from "../../support/require.js";
import { markedTree } from "../../support/procs.js";
import { rawDispatch } from "../raw-transport.js";
import { tempDir } from "../support.js";

const CAPABILITIES = { extensions: { [TASKS_EXTENSION]: {} } };
const INFO = { name: "ext-tasks-e2e", version: "1.0.0" };

/** `toolgate serve` on `ws` from source: its arguments (a short window, so a long call is a task). */
const serveArgs = (ws: string) => [
  "--import",
  "tsx",
  join(projectRoot, "src/cli/main.ts"),
  "serve",
  "--workspace",
  ws,
  "--store",
  `sqlite:${join(tempDir("ext-tasks-store"), "state.db")}`,
  "--task-after-ms",
  "100",
];
const env = () => ({
  ...getDefaultEnvironment(),
  XDG_STATE_HOME: process.env.XDG_STATE_HOME!,
  XDG_CONFIG_HOME: process.env.XDG_CONFIG_HOME!,
});

/** `toolgate serve --http` on an ephemeral port; its URL once it listens. */
async function httpServe(ws: string): Promise<URL> {
  const child = spawn(process.execPath, [...serveArgs(ws), "--http", "127.0.0.1:0"], {
    cwd: projectRoot,
    env: env(),
    stdio: ["ignore", "ignore", "pipe"],
  });
  onTestFinished(() => void child.kill("SIGKILL"));
  let stderr = "";
  return new Promise<URL>((resolve, reject) => {
    child.stderr.on("data", (d: Buffer) => {
      stderr += d;
      const m = /on (http:\/\/[^\s;]+)/.exec(stderr);
      if (m) resolve(new URL(m[1]!));
    });
    child.once("exit", (code) => reject(new Error(`serve exited ${code}: ${stderr}`)));
  });
}

async function transport(over: "stdio" | "http", ws: string): Promise<Transport> {
  if (over === "http") return new StreamableHTTPClientTransport(await httpServe(ws));
  return new StdioClientTransport({ command: process.execPath, args: serveArgs(ws), cwd: projectRoot, env: env() });
}

/** An ext-tasks session on a 2026-07-28 SDK v2 client of a fresh serve. */
async function session(over: "stdio" | "http", ws: string) {
  const c = new Client(INFO, { capabilities: CAPABILITIES, versionNegotiation: { mode: { pin: "2026-07-28" } } });
  await c.connect(await transport(over, ws));
  const s = createTaskSessionFromClient(c, {
    endpointId: `toolgate-${over}`,
    rawDispatch: rawDispatch(c),
    v2RequestFraming: { protocolVersion: "2026-07-28", clientInfo: INFO, clientCapabilities: CAPABILITIES },
  });
  onTestFinished(async () => {
    await s.close().catch(() => {});
    await c.close();
  });
  return s;
}

type Result = { structuredContent?: { stdout?: string; exit_code?: number }; isError?: boolean };

describe.runIf(binaryAvailable("bwrap")).each(["stdio", "http"] as const)(
  "ext-tasks against toolgate serve over %s",
  { timeout: 180_000 },
  (over) => {
    it("a long bash_execute becomes a task, polled to completion, its result read once", async () => {
      const ws = tempDir(`ext-tasks-${over}`);
      const s = await session(over, ws);
      const execution = await s.callTool("bash_execute", {
        command: "echo run >> runs.log; while [ ! -e go ]; do sleep 0.05; done; echo finished",
      });
      expect(execution.kind).toBe("task");
      writeFileSync(join(ws, "go"), "");
      const { outcome } = await execution.settle();
      expect(outcome).toMatchObject({
        status: "completed",
        result: { structuredContent: { stdout: "finished\n", exit_code: 0 } },
      });
      expect((outcome as { result: Result }).result.isError).toBeFalsy();
      expect(readFileSync(join(ws, "runs.log"), "utf8"), "the command ran once").toBe("run\n");
    });

    it("a task cancelled through the package takes its whole process tree with it", async () => {
      const ws = tempDir(`ext-tasks-cancel-${over}`);
      const s = await session(over, ws);
      const tree = markedTree();
      const execution = await s.callTool("bash_execute", { command: `${tree.escapee} sleep 300` });
      expect(execution.kind).toBe("task");
      const outcome = execution.result();
      const ns = await tree.running(outcome);
      await execution.cancel();
      await tree.expectGone(ns);
      expect((await outcome).status).toBe("cancelled");
    });
  },
);
