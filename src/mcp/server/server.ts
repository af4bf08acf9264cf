/**
 * The MCP face of a Gateway (a thin adapter: it adds no rule of its own). `tools/list` publishes the
 * gateway's catalog; `tools/call` becomes one Proposal, and the Observation becomes the result.
 * Nothing here validates arguments or decides policy: the gateway's validator is the one that
 * answers, which is why `tools/call` is registered with a params schema of its own that accepts
 * any object (the SDK's own parsing would turn `"arguments": "oops"` into a JSON-RPC error; MCP
 * wants a tool result the model can read).
 *
 * One handler serves both protocol revisions. Which one a request came in is read from the
 * request itself: a 2026-07-28 request carries its revision and client capabilities in the
 * `_meta` envelope the SDK lifts into `ctx.mcpReq.envelope`; a 2025-11-25 request has none and
 * its client's capabilities are those declared at `initialize`. That decides how an A3 approval
 * is asked for (`approval.ts` by elicitation, `input-required.ts` by a multi-round-trip result).
 */
import type { Result, Server, ServerContext } from "@modelcontextprotocol/server";
import type { Gateway } from "../../runtime/types.js";
import { ToolgateError } from "../../core/errors.js";
import { shownValue } from "../../observation/escape.js";
import { taskSupport } from "../../runtime/tasks.js";
import { DEFAULT_APPROVAL_PROGRESS_MS } from "./approval.js";
import { callResults } from "./call-answers.js";
import { toolCall } from "./call-tool.js";
import { envelopeOf, requireEnvelope } from "./envelope.js";
import { CallToolParamsSchema, GatewayServer, type CallToolParams } from "./gateway-server.js";
import { listCacheHints } from "./list-changes.js";
import { toMcpTool } from "./listing.js";
import { bearerToken, META_KEYS, SessionIds } from "./meta.js";
import { DEFAULT_LIST_TTL_MS, serverInfoOf, sessionPrincipal, type McpServerOptions } from "./options.js";
import { passThroughCapabilities, registerPassThrough } from "./pass-through.js";
import { registerTaskHandlers, TASKS_CAPABILITY } from "./tasks.js";
import { detailedTask, TASKS_EXTENSION } from "./tasks-ext.js";

export { answersSent, taskDetailOf, taskRoutesOf } from "./gateway-server.js";
export { announceListChanges } from "./list-changes.js";
export {
  DEFAULT_LIST_TTL_MS,
  DEFAULT_LOG_LEVEL,
  serverInfoOf,
  sessionPrincipal,
  type McpServerOptions,
} from "./options.js";

/**
 * An MCP server (low-level SDK `Server`) answering `tools/list` and `tools/call` from `gateway`
 * in either protocol revision. Serve it with `serveStdio` / `serveHttp`, or connect it to a
 * transport yourself (a directly connected server speaks 2025-11-25 only; the SDK's serving
 * entries bind an instance to 2026-07-28).
 */
export function createMcpServer(gateway: Gateway, options: McpServerOptions = {}): Server {
  const progressMs = options.approvalProgressMs ?? DEFAULT_APPROVAL_PROGRESS_MS;
  if (typeof progressMs !== "number" || !Number.isFinite(progressMs) || progressMs <= 0) {
    throw new ToolgateError(
      "invalid_config",
      `approvalProgressMs must be a positive number of milliseconds, e.g. 10000; received ${typeof progressMs === "number" ? String(progressMs) : shownValue(progressMs)}`,
    );
  }
  const listTtlMs = options.listTtlMs ?? DEFAULT_LIST_TTL_MS;
  if (!Number.isSafeInteger(listTtlMs) || listTtlMs < 0) {
    throw new ToolgateError(
      "invalid_config",
      `listTtlMs must be a whole number of milliseconds, 0 or more, e.g. 300000; received ${typeof listTtlMs === "number" ? String(listTtlMs) : shownValue(listTtlMs)}`,
    );
  }
  const server = new GatewayServer(serverInfoOf(options), {
    capabilities: {
      tools: { listChanged: options.toolsChanged !== undefined },
      ...(options.logging ? { logging: {} } : {}),
      ...(options.tasks ? { tasks: TASKS_CAPABILITY, extensions: { [TASKS_EXTENSION]: {} } } : {}),
      ...passThroughCapabilities(options.passThrough),
    },
    // The 2026-07-28 revision's cache fields on the list results; a 2025-11-25 result has none.
    cacheHints: listCacheHints(listTtlMs, options.passThrough),
    ...(options.instructions ? { instructions: options.instructions } : {}),
  });
  const session = new SessionIds(options.sessionId, options.requestScoped);
  const warn = options.warn ?? ((line: string) => void process.stderr.write(line + "\n"));
  const callResult = callResults(server, gateway);
  const runner = options.tasks;
  // By name, in code-unit order: the same list whatever order the tools were registered or an
  // upstream listed them in, so a client (and a model's prompt cache) sees the same bytes each time.
  const listing = [...gateway.tools.values()]
    .map((spec) => ({
      spec,
      tool:
        runner && taskSupport(spec) !== null
          ? { ...toMcpTool(spec), execution: { taskSupport: taskSupport(spec)! } }
          : toMcpTool(spec),
    }))
    .sort((a, b) => (a.tool.name < b.tool.name ? -1 : a.tool.name > b.tool.name ? 1 : 0));
  // The caller the transport authenticated; it scopes idempotency keys and owns tasks.
  const principal = sessionPrincipal(options);
  const via = options.approveVia ?? "both";
  if (runner) {
    server.taskDetail = (t, elicit) =>
      detailedTask(t, { runner, callResult: (tool, obs) => callResult(tool, obs) as Record<string, unknown>, elicit });
    registerTaskHandlers(server, {
      runner,
      gateway,
      routes: server.taskRoutes,
      callResult: (tool, obs) => callResult(tool, obs) as Record<string, unknown>,
      request: (ctx, method) => {
        const envelope = requireEnvelope(server, ctx, method);
        const label = envelope.clientInfo?.name;
        return {
          owner: principal,
          modern: envelope.protocolVersion !== undefined,
          capabilities: envelope.clientCapabilities,
          elicit: via !== "cli" && envelope.clientCapabilities?.elicitation !== undefined,
          label: typeof label === "string" ? label : undefined,
        };
      },
    });
  }
  /** The capability a request carries: its `_meta`, else over HTTP its bearer header, else the session's default. */
  function capabilityOf(meta: Record<string, unknown> | undefined, ctx: ServerContext): string | undefined {
    const sent = meta?.[META_KEYS.capability];
    if (typeof sent === "string") return sent;
    return bearerToken(ctx.http?.req?.headers.get("authorization") ?? undefined) ?? options.capability;
  }
  if (options.passThrough)
    registerPassThrough(server, options.passThrough, {
      gateway,
      check: (ctx, method) => void requireEnvelope(server, ctx, method),
      capability: capabilityOf,
      modern: (ctx) => envelopeOf(ctx).protocolVersion !== undefined,
      principal,
    });
  // A tool whose `mcp.hidden` says so (a proxied tool held for review) is left out of this answer, and a caller
  // that sends a capability sees only the tools it could be granted (its view); without one, every tool.
  server.setRequestHandler("tools/list", async (request, ctx) => {
    requireEnvelope(server, ctx, "tools/list");
    const meta = (request as { params?: { _meta?: Record<string, unknown> } }).params?._meta;
    const capability = capabilityOf(meta, ctx);
    const view = capability === undefined ? null : await gateway.visible(capability);
    return {
      tools: listing
        .filter(({ spec }) => spec.mcp?.hidden?.() !== true && (view === null || view.has(spec.name)))
        .map(({ tool }) => tool),
    };
  });

  const callTool = toolCall({
    server,
    gateway,
    options,
    session,
    warn,
    listing,
    principal,
    via,
    progressMs,
    callResult,
  });
  server.setRequestHandler("tools/call", { params: CallToolParamsSchema }, (params, ctx): Promise<Result> =>
    callTool(params as CallToolParams, ctx),
  );
  return server;
}
