/** Shared plumbing for the MCP tests: temp note dirs, counting executions, reading tool results. */
import { existsSync, mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Readable } from "node:stream";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { OBSERVATION_META } from "../../src/mcp/server/result.js";

export function tempDir(prefix: string): string {
  return mkdtempSync(join(tmpdir(), `toolgate-mcp-${prefix}-`));
}

/** Lines of `executions.log` in a notes dir: how often write handlers really ran. */
export function executions(dir: string): string[] {
  const log = join(dir, "executions.log");
  return existsSync(log) ? readFileSync(log, "utf8").split("\n").filter(Boolean) : [];
}

/** Lines of `started.log` in a notes dir: which slow handlers have begun (see note_slow). */
export function started(dir: string): string[] {
  const log = join(dir, "started.log");
  return existsSync(log) ? readFileSync(log, "utf8").split("\n").filter(Boolean) : [];
}

/**
 * Waits until `condition()` holds, checking every 20 ms: for a state another process reaches
 * (a handler started, a file written), instead of sleeping a guessed time. The test's timeout
 * bounds the wait.
 */
export async function until(condition: () => boolean): Promise<void> {
  while (!condition()) await new Promise((r) => setTimeout(r, 20));
}

export interface ObservationMeta {
  ok: boolean;
  tool: string;
  call_id: string;
  authority?: string;
  replay?: boolean;
  error?: { code: string; message: string; detail?: Record<string, unknown> };
}

/** The observation summary a toolgate result carries in `_meta`. */
export function obsOf(result: unknown): ObservationMeta {
  const meta = (result as CallToolResult)._meta?.[OBSERVATION_META];
  if (!meta) throw new Error(`not a toolgate result: ${JSON.stringify(result)}`);
  return meta as ObservationMeta;
}

export function textOf(result: unknown): string {
  return (result as CallToolResult).content.map((c) => (c.type === "text" ? c.text : "")).join("\n");
}

/** Each newline-delimited JSON line `stream` carries, parsed, handed to `take` as it arrives (a stdio server's output). */
export function readLines(stream: Readable, take: (line: unknown) => void): void {
  let buffered = "";
  stream.on("data", (chunk: Buffer) => {
    buffered += chunk.toString("utf8");
    for (let nl = buffered.indexOf("\n"); nl !== -1; nl = buffered.indexOf("\n")) {
      take(JSON.parse(buffered.slice(0, nl)));
      buffered = buffered.slice(nl + 1);
    }
  });
}

/** `_meta` with toolgate ids. */
export function ids(call_id: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { "toolgate/trajectory_id": "traj-test", "toolgate/turn": 1, "toolgate/call_id": call_id, ...extra };
}

/**
 * `toolgate serve` over stdio on the notes catalog, started from source (node + tsx, no build),
 * with an in-memory store and `notes` as its workspace and notes folder: what a stdio client spawns.
 * `catalog` names another fixture in test/mcp/fixtures, `store` another store URL.
 */
export function notesServeCommand(
  notes: string,
  options: { catalog?: string; store?: string } = {},
): {
  command: string;
  args: string[];
  cwd: string;
  env: Record<string, string>;
} {
  const root = join(import.meta.dirname, "../..");
  return {
    command: process.execPath,
    args: [
      "--import",
      "tsx",
      join(root, "src/cli/main.ts"),
      "serve",
      "--catalog",
      join(root, "test/mcp/fixtures", options.catalog ?? "notes-catalog.ts"),
      "--workspace",
      notes,
      "--store",
      options.store ?? "memory:",
    ],
    cwd: root,
    env: {
      PATH: process.env.PATH ?? "",
      HOME: process.env.HOME ?? "",
      // The per-user state folder of the test run, not the real home.
      XDG_STATE_HOME: process.env.XDG_STATE_HOME!,
      XDG_CONFIG_HOME: process.env.XDG_CONFIG_HOME!,
      NOTES_DIR: notes,
    },
  };
}

/** The error a request is refused with, checked to be an instance of `kind` (a protocol error class of either SDK). */
export async function refusal<E extends Error>(
  request: Promise<unknown>,
  kind: new (...args: never[]) => E,
): Promise<E> {
  const err = await request.then(
    () => null,
    (e: unknown) => e,
  );
  if (!(err instanceof kind))
    throw new Error(`expected a ${kind.name}, got ${err === null ? "an answer" : String(err)}`);
  return err;
}
