/**
 * The audit line of a call outlives the process: `toolgate serve` over stdio, a real child
 * process, a client that leaves right after its answer — by closing stdin and signalling (as MCP
 * clients do), or by killing the server outright.
 */
import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { projectRoot } from "../support/require.js";
import { tempDir, until } from "../mcp/support.js";

interface Server {
  child: ChildProcessWithoutNullStreams;
  /** Sends a JSON-RPC request and resolves with its response. */
  request(
    id: number,
    method: string,
    params: unknown,
  ): Promise<{ result?: { isError?: boolean; content?: { text: string }[] } }>;
  notify(method: string): void;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

const running: ChildProcessWithoutNullStreams[] = [];
afterEach(() => {
  for (const child of running.splice(0))
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
});

/** `toolgate serve` from source over stdio, speaking newline-delimited JSON-RPC by hand. */
function serve(args: string[]): Server {
  const child = spawn(process.execPath, ["--import", "tsx", join(projectRoot, "src/cli/main.ts"), "serve", ...args], {
    cwd: projectRoot,
    stdio: ["pipe", "pipe", "pipe"],
  });
  running.push(child);
  const responses = new Map<number, unknown>();
  let pending = "";
  child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
    pending += chunk;
    for (let i = pending.indexOf("\n"); i !== -1; i = pending.indexOf("\n")) {
      const message = JSON.parse(pending.slice(0, i)) as { id?: number };
      pending = pending.slice(i + 1);
      if (typeof message.id === "number") responses.set(message.id, message);
    }
  });
  child.stderr.resume();
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once("exit", (code, signal) => resolve({ code, signal })),
  );
  return {
    child,
    exited,
    async request(id, method, params) {
      child.stdin.write(JSON.stringify({ jsonrpc: "2.0", id, method, params }) + "\n");
      await until(() => responses.has(id) || child.exitCode !== null);
      return responses.get(id) as never;
    },
    notify(method) {
      child.stdin.write(JSON.stringify({ jsonrpc: "2.0", method }) + "\n");
    },
  };
}

async function started(args: string[]): Promise<Server> {
  const s = serve(args);
  await s.request(1, "initialize", {
    protocolVersion: "2025-06-18",
    capabilities: {},
    clientInfo: { name: "audit-exit-test", version: "1.0.0" },
  });
  s.notify("notifications/initialized");
  return s;
}

/** A refused call whose argument is one 200 KB run: quadratic to count whole, bounded now. */
const hostileCall = (call_id: string) => ({
  name: "file_view",
  arguments: { path: ".".repeat(200_000), offset: 1, limit: 10 },
  _meta: { "toolgate/trajectory_id": "traj-exit", "toolgate/turn": 1, "toolgate/call_id": call_id },
});

const auditLines = (path: string) =>
  existsSync(path)
    ? readFileSync(path, "utf8")
        .trimEnd()
        .split("\n")
        .filter(Boolean)
        .map((l) => JSON.parse(l) as { call_id: string; outcome: string; argument_tokens: number })
    : [];

describe("the audit line is written before the process exits", { timeout: 120_000 }, () => {
  it("a client that closes stdin and sends SIGTERM right after the answer: the server exits cleanly and the line is there", async () => {
    const ws = tempDir("audit-exit");
    const audit = join(ws, "trail", "audit.jsonl");
    const s = await started(["--workspace", ws, "--store", "memory:", "--audit", audit]);
    const answer = await s.request(2, "tools/call", hostileCall("exit-term-1"));
    expect(answer.result?.isError).toBe(true);
    s.child.stdin.end();
    s.child.kill("SIGTERM");
    expect(await s.exited).toEqual({ code: 0, signal: null });
    expect(auditLines(audit)).toEqual([
      expect.objectContaining({ call_id: "exit-term-1", outcome: "invalid_arguments" }),
    ]);
    expect(auditLines(audit)[0]!.argument_tokens).toBeGreaterThan(3000);
  });

  it("a server killed (SIGKILL) right after its answer already has the line on disk", async () => {
    const ws = tempDir("audit-kill");
    // A state file may not sit directly in the workspace root: the trail gets its own folder.
    const audit = join(ws, "trail", "audit.jsonl");
    const s = await started(["--workspace", ws, "--store", "memory:", "--audit", audit]);
    const answer = await s.request(2, "tools/call", hostileCall("exit-kill-1"));
    expect(answer.result?.isError).toBe(true);
    s.child.kill("SIGKILL");
    expect(await s.exited).toEqual({ code: null, signal: "SIGKILL" });
    expect(auditLines(audit)).toEqual([
      expect.objectContaining({ call_id: "exit-kill-1", outcome: "invalid_arguments" }),
    ]);
  });
});
