/**
 * `toolgate proxy FLAGS -- tasks-upstream` (`fixtures/tasks-upstream.mjs`, behind the logging
 * wrapper that records what the upstream receives), spawned from source, and real SDK v2 clients
 * of it over stdio or, with `--http`, Streamable HTTP: what the suites of the upstream task bridge
 * share (`upstream-tasks.test.ts`, `upstream-questions.test.ts`).
 */
import { spawn } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { Client, StreamableHTTPClientTransport, type ClientCapabilities } from "@modelcontextprotocol/client";
import { getDefaultEnvironment, StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { TASKS_EXTENSION } from "../../../src/mcp/proxy/upstream-tasks.js";
import { tempDir } from "../support.js";

const root = join(import.meta.dirname, "../../..");
const wrapper = fileURLToPath(new URL("../fixtures/logging-wrapper.mjs", import.meta.url));
const upstream = fileURLToPath(new URL("../fixtures/tasks-upstream.mjs", import.meta.url));

export const cleanup: (() => Promise<unknown>)[] = [];
/** Ends every client and proxy the suite opened (its afterAll). */
export async function closeAll(): Promise<void> {
  for (const done of cleanup.splice(0).reverse()) await done().catch(() => {});
}

/** A 2026-07-28 request's `_meta` envelope declaring the tasks extension (and `extra` capabilities). */
export const envelope = (extra: ClientCapabilities = {}) => ({
  "io.modelcontextprotocol/protocolVersion": "2026-07-28",
  "io.modelcontextprotocol/clientCapabilities": { ...extra, extensions: { [TASKS_EXTENSION]: {} } },
  "io.modelcontextprotocol/clientInfo": { name: "raw", version: "1" },
});
export const ENVELOPE = envelope();

export type Era = "2026" | "2026+tasks" | "2026+elicit" | "2026+sampling" | "2025" | "2025+elicit" | "2025+sampling";
export type Received = { method?: string; params?: Record<string, unknown> };

/** `toolgate proxy FLAGS -- tasks-upstream` behind the logging wrapper, spawned from source. */
export function proxyCommand(flags: string[]) {
  const dir = tempDir("upstream-tasks");
  const log = join(dir, "upstream.jsonl");
  const state = tempDir("upstream-tasks-state");
  const audit = join(state, "audit.jsonl");
  const args = (http: boolean) => [
    "--import",
    import.meta.resolve("tsx"),
    join(root, "src/cli/main.ts"),
    "proxy",
    "--store",
    `sqlite:${join(state, "state.db")}`,
    "--audit",
    audit,
    ...flags,
    ...(http ? ["--http", "127.0.0.1:0"] : []),
    "--",
    process.execPath,
    wrapper,
    process.execPath,
    upstream,
  ];
  const env = () => ({
    ...getDefaultEnvironment(),
    WRAPPER_LOG: log,
    XDG_STATE_HOME: process.env.XDG_STATE_HOME!,
    XDG_CONFIG_HOME: process.env.XDG_CONFIG_HOME!,
  });
  const received = (): Received[] =>
    (existsSync(log) ? readFileSync(log, "utf8").split("\n").filter(Boolean) : []).map(
      (l) => JSON.parse(l) as Received,
    );
  const audited = () =>
    (existsSync(audit) ? readFileSync(audit, "utf8").split("\n").filter(Boolean) : []).map(
      (l) => JSON.parse(l) as Record<string, unknown>,
    );
  let url: Promise<URL> | undefined;
  /** The proxy served over Streamable HTTP (one process for the suite), its URL once it listens. */
  const httpUrl = () =>
    (url ??= new Promise<URL>((resolve, reject) => {
      const child = spawn(process.execPath, args(true), { cwd: dir, env: env(), stdio: ["ignore", "ignore", "pipe"] });
      cleanup.push(async () => void child.kill("SIGKILL"));
      let stderr = "";
      child.stderr.on("data", (d: Buffer) => {
        stderr += d;
        const m = /on (http:\/\/[^\s;]+)/.exec(stderr);
        if (m) resolve(new URL(m[1]!));
      });
      child.once("exit", (code) => reject(new Error(`proxy exited ${code}: ${stderr}`)));
    }));
  const capabilitiesOf = (era: Era) =>
    era === "2025+elicit"
      ? { capabilities: { elicitation: { form: {} } } }
      : era === "2025+sampling"
        ? { capabilities: { sampling: {} } }
        : era === "2025"
          ? {}
          : {
              capabilities:
                era === "2026+tasks"
                  ? { extensions: { [TASKS_EXTENSION]: {} } }
                  : era === "2026+elicit"
                    ? { elicitation: { form: {} } }
                    : era === "2026+sampling"
                      ? { sampling: {} }
                      : {},
              versionNegotiation: { mode: { pin: "2026-07-28" as const } },
            };
  /** A client of the proxy: over stdio a proxy process of its own, over HTTP the suite's (with `bearer`, its principal). */
  const connect = async (era: Era, over: "stdio" | "http" = "stdio", bearer?: string): Promise<Client> => {
    const transport =
      over === "http"
        ? new StreamableHTTPClientTransport(await httpUrl(), {
            ...(bearer ? { requestInit: { headers: { authorization: `Bearer ${bearer}` } } } : {}),
          })
        : new StdioClientTransport({
            command: process.execPath,
            args: args(false),
            cwd: dir,
            env: env(),
            stderr: "pipe",
          });
    const c = new Client({ name: `upstream-tasks-${era}`, version: "1.0.0" }, capabilitiesOf(era));
    await c.connect(transport);
    cleanup.push(() => c.close());
    return c;
  };
  return { connect, received, audited, httpUrl };
}

export const text = (r: { content?: unknown }) => JSON.stringify(r.content);

export const until = async (done: () => boolean) => {
  while (!done()) await new Promise((r) => setTimeout(r, 20));
};

/** The id of the first upstream task the proxy polls after the `before`th line the upstream received, once it does. */
export async function polledTask(received: () => Received[], before: number): Promise<unknown> {
  const poll = () =>
    received()
      .slice(before)
      .find((m) => m.method === "tasks/get");
  await until(() => poll() !== undefined);
  return poll()!.params!.taskId;
}

/** Waits until the upstream received a tasks/cancel after its `before`th line. */
export const upstreamCancelled = (received: () => Received[], before: number) =>
  until(() =>
    received()
      .slice(before)
      .some((m) => m.method === "tasks/cancel"),
  );

/** The tasks/update requests the upstream received after its `before`th line (the answers sent upstream). */
export const updatesSince = (received: () => Received[], before: number) =>
  received()
    .slice(before)
    .filter((m) => m.method === "tasks/update");
