/**
 * The MCP face of a Gateway (a thin adapter: it adds no rule of its own). `tools/list` publishes the
 * gateway's catalog; `tools/call` becomes one Proposal, and the Observation becomes the result.
 * Nothing here validates arguments or decides policy: the gateway's validator is the one that
 * answers, which is why this uses the low-level `Server` and registers `tools/call` beneath the
 * SDK's own argument parsing (that parsing would turn `"arguments": "oops"` into a JSON-RPC
 * error; MCP 2025-11-25 wants a tool result the model can read).
 */
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { Protocol, type RequestHandlerExtra } from "@modelcontextprotocol/sdk/shared/protocol.js";
import {
  ErrorCode,
  ListToolsRequestSchema,
  type CallToolResult,
  type ServerNotification,
  type ServerRequest,
} from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";
import type { Gateway } from "../../runtime/types.js";
import type { Observation } from "../../core/observation.js";
import type { ApproveVia } from "../../runtime/approvals.js";
import { escapeUntrusted } from "../../observation/escape.js";
import { ToolgateError } from "../../core/errors.js";
import { InFlight } from "../../core/in-flight.js";
import {
  approveByElicitation,
  DEFAULT_APPROVAL_PROGRESS_MS,
  DEFAULT_APPROVAL_TIMEOUT_MS,
  pendingApprovalId,
} from "./approval.js";
import { toMcpTool } from "./listing.js";
import { bearerToken, idsFromMeta, jsonOrNote, META_KEYS, SessionIds, type MetaIssue } from "./meta.js";
import { outputCheck } from "./output-check.js";
import { OBSERVATION_META, outputMismatchResult, toCallToolResult } from "./result.js";

export interface McpServerOptions {
  /** Reported in `serverInfo`; default "toolgate". */
  name?: string;
  /** Reported in `serverInfo`; default the package version. */
  version?: string;
  instructions?: string;
  /** Session id the derived trajectory ids are built from (one-way); default a random UUID per server. */
  sessionId?: string;
  /**
   * Who the session's caller is, as authenticated by the transport: recorded as the approver of
   * an A3 call approved through this session's elicitation. Default `stdio client` (the process
   * that started toolgate); over HTTP the bearer credential's digest or the peer address.
   */
  principal?: string;
  /** Capability used when a call carries neither `_meta["toolgate/capability"]` nor a bearer token. */
  capability?: string;
  /**
   * Who may approve A3 calls: `cli` (a person with `toolgate approvals`, or the embedder's own
   * code through `gateway.approvals`; the client is never asked), `elicitation` (the person the
   * client asks through `elicitation/create`) or `both`. Default `both`; `serveHttp` makes it `cli`
   * when the gateway requires no capability.
   */
  approveVia?: ApproveVia;
  /** How long a person has to answer an elicitation, ms. Default 10 minutes. */
  approvalTimeoutMs?: number;
  /**
   * How often a call waiting for a person's answer sends a progress notification, when its
   * request carries a progressToken (clients that reset their timeout on progress then wait), ms.
   * Default 10,000.
   */
  approvalProgressMs?: number;
  /**
   * The gateway enforces no capabilities (no keys): a capability a call carries is ignored, and
   * the first such call of the session prints one warning through `warn`.
   */
  capabilitiesIgnored?: boolean;
  /** Operator warnings; default stderr (never stdout: over stdio that is the protocol). */
  warn?: (line: string) => void;
}

/**
 * tools/call as it arrives, before anyone judges it: only the method is matched here, and the
 * params pass through unparsed (the transport has checked they are an object, or absent). A
 * missing `arguments` reaches the gateway as `{}` and a missing `name` gets a clear -32602 below.
 */
const CallToolSchema = z.looseObject({ method: z.literal("tools/call") });

interface CallToolParams {
  name?: unknown;
  arguments?: unknown;
  _meta?: unknown;
}

/** tools/call handlers still preparing an answer, per server (see `answersSent`). */
const pending = new WeakMap<Server, InFlight<object>>();

/**
 * Resolves once every tools/call this server is answering has handed its result to the
 * transport, or after `timeoutMs` (a call may be waiting on a person's elicitation answer).
 * Close a transport only after this: the SDK drops answers of requests still running at close.
 */
export async function answersSent(server: Server, timeoutMs = 2_000): Promise<void> {
  const inflight = pending.get(server);
  if (!inflight || inflight.size === 0) return;
  await inflight.idle(timeoutMs);
  // The SDK sends an answer a few microtasks after the handler resolves.
  await new Promise((resolve) => setImmediate(resolve));
}

/**
 * A -32602 whose wire message is exactly `message` (an `McpError` would put its own
 * "MCP error -32602:" prefix into the message, and the client adds another).
 */
function invalidParams(message: string): Error {
  return Object.assign(new Error(message), { code: ErrorCode.InvalidParams });
}

/** A client's value in a JSON-RPC error message: short, and nothing in it a terminal would act on. */
function shownJson(value: unknown): string {
  const json = jsonOrNote(value) ?? "nothing";
  return escapeUntrusted(json.length > 80 ? `${json.slice(0, 77)}…` : json);
}

/**
 * The runtime's denial for a missing capability says "send it with the call"; over MCP the model
 * (and the person configuring the client) needs to know where: `_meta`, or over HTTP the header.
 */
function withCapabilityHint(obs: Observation, http: boolean): Observation {
  if (obs.error?.detail?.code !== "missing_capability") return obs;
  const where = `_meta["${META_KEYS.capability}"] of tools/call${http ? " or an Authorization: Bearer header" : ""}`;
  return { ...obs, text: `${obs.text}\nOver MCP, send the token in ${where}.` };
}

/**
 * A malformed `_meta` is the MCP client's doing (its code or its configuration), not the model's:
 * the text says so, so the model reports it instead of retrying with other arguments.
 */
function metaRefusal(name: string, issue: MetaIssue): CallToolResult {
  const tool = escapeUntrusted(name);
  return {
    isError: true,
    content: [
      {
        type: "text",
        text: `${tool} was not run: the MCP client sent request metadata toolgate cannot use. ${issue.message}. The request's _meta is set by the client, not by the tool's arguments, so calling again will not help: this is for the client's author (or whoever configures it) to fix.`,
      },
    ],
    _meta: {
      [OBSERVATION_META]: {
        ok: false,
        tool,
        call_id: "",
        error: { code: "invalid_meta", message: issue.message, detail: { field: issue.field } },
      },
    },
  };
}

/**
 * A signal for the gateway that fires when the tools/call is gone, its reason saying how. The
 * SDK aborts a request's signal on notifications/cancelled and when the connection closes, and
 * on close it drops the transport right after: so the reason is decided a microtask later.
 */
function requestGone(server: Server, signal: AbortSignal): AbortSignal {
  const gone = new AbortController();
  const onAbort = () =>
    queueMicrotask(() => gone.abort(server.transport === undefined ? "connection closed" : "request cancelled"));
  if (signal.aborted) onAbort();
  else signal.addEventListener("abort", onAbort, { once: true });
  return gone.signal;
}

/**
 * An MCP server (low-level SDK `Server`) answering `tools/list` and `tools/call` from `gateway`.
 * Connect it to a transport yourself, or use `serveStdio` / `serveHttp`.
 */
export function createMcpServer(gateway: Gateway, options: McpServerOptions = {}): Server {
  const progressMs = options.approvalProgressMs ?? DEFAULT_APPROVAL_PROGRESS_MS;
  if (typeof progressMs !== "number" || !Number.isFinite(progressMs) || progressMs <= 0) {
    throw new ToolgateError(
      "invalid_config",
      `approvalProgressMs must be a positive number of milliseconds, e.g. 10000; received ${typeof progressMs === "number" ? String(progressMs) : shownJson(progressMs)}`,
    );
  }
  const server = new Server(
    { name: options.name ?? "toolgate", version: options.version ?? "0.1.0" },
    {
      capabilities: { tools: { listChanged: false } },
      ...(options.instructions ? { instructions: options.instructions } : {}),
    },
  );
  const session = new SessionIds(options.sessionId);
  const warn = options.warn ?? ((line: string) => void process.stderr.write(line + "\n"));
  let warnedIgnored = false;
  const checkOutput = outputCheck();
  const listing = [...gateway.tools.values()].map((spec) => ({ spec, tool: toMcpTool(spec) }));
  const inflight = new InFlight<object>();
  pending.set(server, inflight);
  // A tool whose `mcp.hidden` says so (a proxied tool held for review) is left out of this answer, and a caller
  // that sends a capability sees only the tools it could be granted (its view); without one, every tool.
  server.setRequestHandler(ListToolsRequestSchema, async (request, extra) => {
    const meta = request.params?._meta as Record<string, unknown> | undefined;
    const sent = meta?.[META_KEYS.capability];
    const capability =
      typeof sent === "string" ? sent : (bearerToken(extra.requestInfo?.headers?.authorization) ?? options.capability);
    const view = capability === undefined ? null : await gateway.visible(capability);
    return {
      tools: listing
        .filter(({ spec }) => spec.mcp?.hidden?.() !== true && (view === null || view.has(spec.name)))
        .map(({ tool }) => tool),
    };
  });

  // Registered through Protocol, beneath Server's override that re-parses tools/call params.
  Protocol.prototype.setRequestHandler.call(server, CallToolSchema, async (request, extra): Promise<CallToolResult> => {
    // A token of its own per call: request ids come from the client and may repeat.
    const call = {};
    inflight.add(call);
    try {
      return await callTool(request.params as CallToolParams | undefined, extra);
    } finally {
      inflight.delete(call);
    }
  });

  async function callTool(
    params: CallToolParams | undefined,
    extra: RequestHandlerExtra<ServerRequest, ServerNotification>,
  ): Promise<CallToolResult> {
    const { name, arguments: args, _meta } = params ?? {};
    if (typeof name !== "string" || name === "") {
      throw invalidParams(
        `tools/call params.name must be the name of a tool (a non-empty string); received ${shownJson(name)}; call tools/list for the names`,
      );
    }
    if (_meta !== undefined && (typeof _meta !== "object" || _meta === null || Array.isArray(_meta))) {
      throw invalidParams(
        `tools/call params._meta must be an object; received ${shownJson(_meta)}; e.g. {"toolgate/call_id": "c1"}`,
      );
    }
    const header = bearerToken(extra.requestInfo?.headers?.authorization);
    const bearer = header ?? options.capability;
    const parsed = idsFromMeta(_meta as Record<string, unknown> | undefined, session, bearer);
    if (!parsed.ok) return metaRefusal(name, parsed.issue);
    if (
      options.capabilitiesIgnored &&
      !warnedIgnored &&
      (header !== undefined || (_meta as Record<string, unknown> | undefined)?.[META_KEYS.capability] !== undefined)
    ) {
      warnedIgnored = true;
      warn(
        `toolgate: a call in session ${session.trajectory_id} carries a capability, but this server has no capability keys (--keys or TOOLGATE_KEYS), so capabilities are ignored and every call is allowed; this warning is printed once per session`,
      );
    }
    // MCP makes `arguments` optional: absent means a call without arguments.
    const proposal = { ...parsed.ids, tool: name, arguments: args === undefined ? {} : args };
    // The request's signal does not abort the call: a client that goes away mid-call does not cut
    // a write in half; the call settles (bounded by the tool's timeout) and a retry with the same
    // ids receives the stored result. It tells the gateway the request is gone (`abandoned`): an
    // A3 call is then not run on an approval that arrives after its client gave up.
    const abandoned = requestGone(server, extra.signal);
    const obs = withCapabilityHint(await gateway.call(proposal, { abandoned }), extra.requestInfo !== undefined);
    if (pendingApprovalId(obs) === null) return callResult(name, obs);
    const via = options.approveVia ?? "both";
    const timeoutMs = options.approvalTimeoutMs ?? DEFAULT_APPROVAL_TIMEOUT_MS;
    const principal = options.principal ?? "stdio client";
    const token = (_meta as Record<string, unknown> | undefined)?.progressToken;
    const progress =
      typeof token === "string" || typeof token === "number"
        ? (n: number, message: string) =>
            void extra
              .sendNotification({
                method: "notifications/progress",
                params: { progressToken: token, progress: n, message },
              })
              .catch(() => {})
        : null;
    const answered = await approveByElicitation(
      {
        server,
        gateway,
        requestId: extra.requestId,
        timeoutMs,
        elicit: via !== "cli",
        cli: via !== "elicitation",
        principal,
        abandoned,
        progress,
        progressMs,
      },
      proposal,
      obs,
    );
    return callResult(name, answered);
  }

  /** The tools/call result; an output that breaks the tool's own outputSchema is an isError result. */
  function callResult(name: string, obs: Observation): CallToolResult {
    const outputSchema = gateway.tools.get(name)?.outputSchema;
    if (outputSchema === undefined) return toCallToolResult(obs, false);
    const problems = obs.ok ? checkOutput(name, outputSchema, obs.output) : null;
    return problems
      ? outputMismatchResult(obs, problems)
      : toCallToolResult(obs, true, (cut) => checkOutput(name, outputSchema, cut) === null);
  }
  return server;
}
