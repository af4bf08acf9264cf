/**
 * The proxy's side towards a foreign MCP server: start it (stdio) or reach it (Streamable HTTP)
 * with the SDK `Client` (either protocol revision: 2026-07-28 when the upstream answers
 * `server/discover`, else 2025-11-25), and read its whole catalog, paging through `nextCursor`.
 */
import { StreamableHTTPClientTransport, type Client, type Tool } from "@modelcontextprotocol/client";
import { getDefaultEnvironment, StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { ToolgateError } from "../../core/errors.js";
import { reapOnExit, spawnedChild } from "./upstream-reaper.js";
import { tasksCapabilities } from "./upstream-tasks.js";
import { ProxyClient } from "./upstream-call.js";
import { UpstreamLines } from "./upstream-lines.js";
import { inOwnPidNamespace, shellAlters } from "./upstream-pidns.js";
import { spawnedBy, unreachableReason } from "./upstream-unreachable.js";

/** Where the upstream server is: a command to start (stdio) or a URL (Streamable HTTP). */
export type UpstreamTarget =
  | {
      command: string;
      args?: string[];
      /** Added to the SDK's default inherited environment (HOME, PATH, …). */
      env?: Record<string, string>;
      cwd?: string;
    }
  | { url: string; headers?: Record<string, string> };

/**
 * How long a stdio upstream has to answer the revision probe before it is taken for a
 * 2025-11-25 server (some never answer a request that precedes initialize), ms.
 */
const PROBE_TIMEOUT_MS = 5_000;

/** Human-readable name of the target for messages, e.g. `npx server-memory`. */
export function describeTarget(target: UpstreamTarget): string {
  return "url" in target ? target.url : [target.command, ...(target.args ?? [])].join(" ");
}

/**
 * Connects an SDK Client to the upstream. The child's stderr is inherited so its logs reach
 * the operator; its stdout is the protocol. On Linux a child runs in a PID namespace of its own
 * that dies with the proxy (`upstream-pidns.ts`; else it is marked alone, `upstream-pdeathsig.ts`),
 * so even a SIGKILLed proxy leaves nothing of its upstream behind.
 */
export async function connectUpstream(
  target: UpstreamTarget,
  clientName = "toolgate-proxy",
  log?: (line: string) => void,
): Promise<Client> {
  // Either revision: a server/discover probe first, the 2025-11-25 initialize when the server does not know it.
  // The tasks extension is declared, so a 2026-07-28 upstream may answer a call with a task (upstream-tasks.ts);
  // a plain tools/call over stdio goes beside the SDK's request funnel (upstream-call.ts).
  const client = new ProxyClient(
    { name: clientName, version: "0.1.0" },
    { capabilities: tasksCapabilities(), versionNegotiation: { mode: "auto", probe: { timeoutMs: PROBE_TIMEOUT_MS } } },
  );
  const transport = "url" in target ? httpTransport(target) : stdioTransport(target, log);
  const spawned = spawnedBy(transport);
  try {
    await client.connect(transport);
  } catch (err) {
    const child = spawned();
    reapOnExit(child);
    await client.close().catch(() => {});
    throw new ToolgateError(
      "upstream_unavailable",
      `cannot start or reach the upstream MCP server (${describeTarget(target)}): ${unreachableReason(err, child)}`,
      { cause: err },
    );
  }
  // Not outliving the proxy (upstream-reaper.ts): the SDK's close ends it gracefully, this if the proxy exits first.
  reapOnExit(spawnedChild(transport));
  return client;
}

function httpTransport(target: { url: string; headers?: Record<string, string> }) {
  return new StreamableHTTPClientTransport(
    new URL(target.url),
    target.headers ? { requestInit: { headers: target.headers } } : undefined,
  );
}

function stdioTransport(target: Exclude<UpstreamTarget, { url: string }>, log?: (line: string) => void) {
  const env = { ...getDefaultEnvironment(), ...target.env };
  // The one fallback from the PID namespace an operator can mend (the others are the machine's): say so.
  const altered = process.platform === "linux" ? shellAlters(env) : undefined;
  if (altered !== undefined && log)
    log(
      `toolgate proxy: the upstream ${target.command} runs without a PID namespace of its own, since its environment holds ${altered}, which sh would drop or act on: what it starts may outlive a killed proxy; unset ${altered} (and any other SHELLOPTS, BASH* or non-identifier name) in the environment toolgate proxy starts with, or in the upstream's env, to keep the namespace`,
    );
  const spawned = inOwnPidNamespace({ command: target.command, args: target.args ?? [] }, env, target.cwd);
  const transport = new StdioClientTransport({
    ...spawned,
    env,
    stderr: "inherit",
    ...(target.cwd ? { cwd: target.cwd } : {}),
  });
  // The SDK's transport with toolgate's reader of its lines (upstream-lines.ts): the same contract, a direct call's answer read once.
  // (A later SDK without the field keeps its own reader.)
  if ("_readBuffer" in transport) (transport as unknown as { _readBuffer: unknown })._readBuffer = new UpstreamLines();
  return transport;
}

/** Upper bound on pages, so a server that hands out cursors forever cannot hang the proxy. */
const MAX_PAGES = 1000;

/** Every tool of the upstream, following `nextCursor` until it is absent. */
export async function listAllTools(client: Client): Promise<Tool[]> {
  const tools: Tool[] = [];
  const seen = new Set<string>();
  let cursor: string | undefined;
  for (let page = 0; page < MAX_PAGES; page++) {
    const result = await client.listTools(cursor === undefined ? {} : { cursor });
    tools.push(...result.tools);
    if (result.nextCursor === undefined) return tools;
    if (seen.has(result.nextCursor))
      throw new ToolgateError(
        "upstream_paging",
        `upstream tools/list repeated the cursor ${JSON.stringify(result.nextCursor)}; its pagination loops`,
      );
    seen.add(result.nextCursor);
    cursor = result.nextCursor;
  }
  throw new ToolgateError("upstream_paging", `upstream tools/list returned more than ${MAX_PAGES} pages`);
}
