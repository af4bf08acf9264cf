/**
 * A stdio MCP server process spoken to in raw JSON-RPC lines: each message written to its stdin,
 * each line of its stdout kept as it arrives, for the tests that need what no SDK client hands
 * over (a listen's own request id, its acknowledgement as sent, notifications/tasks).
 */
import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import { expect } from "vitest";

export type Line = {
  id?: unknown;
  method?: string;
  params?: Record<string, unknown>;
  result?: Record<string, unknown>;
  error?: { code: number; message: string; data?: unknown };
};

export interface LineClient {
  /** Every line read so far, in order. */
  lines: Line[];
  send(message: Record<string, unknown>): void;
  /** Resolves with the first line (from index `from` on) satisfying `ok`; rejects if the process exits first. */
  next(ok: (m: Line) => boolean, from?: number): Promise<Line>;
  /** A request and its answer. */
  request(method: string, params: Record<string, unknown>, id?: string | number): Promise<Line>;
  /** Closes stdin; resolves with the exit code. */
  end(): Promise<number | null>;
  child: ChildProcessWithoutNullStreams;
  stderr(): string;
}

let nextId = 0;

export function lineClient(command: { command: string; args: string[]; cwd: string; env: Record<string, string> }) {
  const child = spawn(command.command, command.args, { cwd: command.cwd, env: command.env, stdio: "pipe" });
  const lines: Line[] = [];
  let err = "";
  let pending = "";
  const waiting = new Set<() => void>();
  const wake = () => {
    for (const w of waiting) w();
    waiting.clear();
  };
  let exited = false;
  const exit = new Promise<number | null>((resolve) =>
    child.once("exit", (code) => {
      exited = true;
      wake();
      resolve(code);
    }),
  );
  child.stderr.on("data", (chunk: Buffer) => (err += chunk.toString("utf8")));
  child.stdout.on("data", (chunk: Buffer) => {
    pending += chunk.toString("utf8");
    let nl: number;
    while ((nl = pending.indexOf("\n")) >= 0) {
      const text = pending.slice(0, nl);
      pending = pending.slice(nl + 1);
      if (text.trim() !== "") lines.push(JSON.parse(text) as Line);
    }
    wake();
  });
  const client: LineClient = {
    lines,
    child,
    stderr: () => err,
    send: (message) => void child.stdin.write(JSON.stringify({ jsonrpc: "2.0", ...message }) + "\n"),
    async next(ok, from = 0) {
      for (;;) {
        const found = lines.slice(from).find(ok);
        if (found) return found;
        if (exited) throw new Error(`the server exited before the line awaited; stderr: ${err}`);
        await new Promise<void>((r) => waiting.add(r));
      }
    },
    request(method, params, id = `r-${++nextId}`) {
      client.send({ id, method, params });
      return client.next((m) => m.id === id && m.method === undefined);
    },
    end() {
      child.stdin.end();
      return exit;
    },
  };
  return client;
}

/** The 2025-11-25 opening over `c`: initialize as `clientName`, checked to succeed, then notifications/initialized. */
export async function openSession(c: LineClient, clientName: string): Promise<Line> {
  const init = await c.request("initialize", {
    protocolVersion: "2025-11-25",
    capabilities: {},
    clientInfo: { name: clientName, version: "1.0.0" },
  });
  expect(init.error).toBeUndefined();
  c.send({ method: "notifications/initialized" });
  return init;
}
