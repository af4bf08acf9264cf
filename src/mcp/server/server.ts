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
import {
  CLIENT_CAPABILITIES_META_KEY,
  CLIENT_INFO_META_KEY,
  LOG_LEVEL_META_KEY,
  PROTOCOL_VERSION_META_KEY,
  ProtocolError,
  ProtocolErrorCode,
  Server,
  type CallToolResult,
  type ClientCapabilities,
  type JSONRPCRequest,
  type Result,
  type ServerContext,
  type ServerOptions,
  type Transport,
} from "@modelcontextprotocol/server";
import { z } from "zod";
import type { Gateway, Proposal } from "../../runtime/types.js";
import type { Observation } from "../../core/observation.js";
import { AUTHORITY, isLogLevel, type CallLog, type LogLevel, type ProgressUpdate } from "../../core/tool.js";
import type { ChangeFeed } from "../../core/changes.js";
import type { ApproveVia } from "../../runtime/approvals.js";
import { escapeUntrusted, shownValue } from "../../observation/escape.js";
import { ToolgateError } from "../../core/errors.js";
import { InFlight } from "../../core/in-flight.js";
import {
  approveByElicitation,
  DEFAULT_APPROVAL_PROGRESS_MS,
  DEFAULT_APPROVAL_TIMEOUT_MS,
  pendingApprovalId,
} from "./approval.js";
import { approveByInputRequired } from "./input-required.js";
import { toMcpTool } from "./listing.js";
import { idsFromHeaders, withHeaderIds } from "./call-headers.js";
import { invalidParams } from "./protocol-error.js";
import { bearerToken, idsFromMeta, META_KEYS, SessionIds, type MetaIssue } from "./meta.js";
import { outputCheck } from "./output-check.js";
import { OBSERVATION_META, outputMismatchResult, toCallToolResult } from "./result.js";
import { taskSupport, type TaskRunner } from "../../runtime/tasks.js";
import { registerTaskHandlers, TASKS_CAPABILITY, taskTtl, toMcpTask } from "./tasks.js";
import { traceOf } from "./trace-of.js";
import { passThroughCapabilities, registerPassThrough, type PassThrough } from "./pass-through.js";
import { createTaskResult, declaresTasks, detailedTask, TASKS_EXTENSION } from "./tasks-ext.js";
import { taskRequired, taskForbidden, tasksExtensionRequired } from "./task-support.js";
import type { TaskRecord } from "../../idempotency/tasks.js";

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
  /**
   * How long a 2026-07-28 client may keep this server's tools/list before asking again, ms
   * (`ttlMs`; the scope is `private`: a list may depend on who asks), and its resources/list,
   * resources/templates/list and prompts/list when `passThrough` serves them. Default 300,000: a
   * server's catalog is fixed for its life, and a list that changes is announced
   * (`notifications/…/list_changed`), which tells the client its copy is stale. 0 asks the
   * client to keep nothing. A 2025-11-25 answer carries no cache fields.
   */
  listTtlMs?: number;
  /**
   * Runs calls as tasks: a task-augmented tools/call (2025-11-25 tasks: tasks/get, result, list and
   * cancel), and on 2026-07-28 each call of a tool that may run as one from a client that declares
   * the `io.modelcontextprotocol/tasks` extension (tasks/get, update and cancel). Without it the
   * server advertises no tasks and a call carrying `task` is refused.
   */
  tasks?: TaskRunner;
  /**
   * Resources, prompts and completions served beside the tools (a proxy's upstreams'); each
   * capability is declared only when it is given.
   */
  passThrough?: PassThrough;
  /**
   * Emits when the tools this server lists changed while it runs (a proxy held a tool whose
   * upstream definition changed): the server declares `tools.listChanged`, and the transports
   * tell their clients (`announceListChanges`: each 2025-11-25 session and stdio connection,
   * each 2026-07-28 `subscriptions/listen` stream).
   */
  toolsChanged?: ChangeFeed;
  /**
   * The tools pass log messages on to their callers (a proxy relaying its upstream's): the server
   * declares `logging`, answers `logging/setLevel` (2025-11-25; default `info`) and reads a
   * 2026-07-28 request's level from its `_meta` (none there: no log messages for it).
   */
  logging?: boolean;
}

/** The level a 2025-11-25 session gets log messages at before it sends logging/setLevel. */
export const DEFAULT_LOG_LEVEL: LogLevel = "info";

/** A client may keep tools/list this long by default, ms. */
export const DEFAULT_LIST_TTL_MS = 300_000;

/**
 * tools/call params as they arrive, before anyone judges them: any object passes, unparsed. A
 * missing `arguments` reaches the gateway as `{}` and a missing `name` gets a clear -32602 below.
 */
const CallToolParamsSchema = z.looseObject({});

interface CallToolParams {
  name?: unknown;
  arguments?: unknown;
  _meta?: unknown;
  task?: unknown;
}

/**
 * The SDK's `Server`, but a tools/call whose `name` is not a string or whose `arguments` is not an
 * object reaches toolgate's handler instead of the SDK's request check: a missing name gets a
 * -32602 that says what to send, and arguments of the wrong type a tool result from the gateway's
 * validator that the model can read and correct. Well-formed calls pass through the SDK's own
 * wrapping (result checks, the multi-round-trip seam).
 */
class GatewayServer extends Server {
  /** tools/call requests received and not yet answered on the transport (see `answersSent`). */
  readonly unanswered = new InFlight<object>();
  /** The level this connection's client set with logging/setLevel (2025-11-25), once it has. */
  logLevel: LogLevel | undefined;
  /** A task of this server's caller as tasks/get answers it on 2026-07-28 (set when the server runs tasks). */
  taskDetail: ((t: TaskRecord, elicit: boolean) => Promise<Record<string, unknown>>) | undefined;

  /**
   * Counts each tools/call from its arrival until its answer has been handed to the transport:
   * the SDK validates and sends an answer some time after the handler resolves, and a transport
   * closed in between drops it.
   */
  override async connect(transport: Transport): Promise<void> {
    // The SDK sets its handlers before it awaits the transport's start: they are wrapped at once,
    // so a message delivered right after this call (the stdio opening) is counted.
    const connected = super.connect(transport);
    const open = new Map<string, object[]>();
    const keyOf = (id: unknown) => `${typeof id}:${String(id)}`;
    const onmessage = transport.onmessage;
    transport.onmessage = (message, extra) => {
      const m = message as { id?: unknown; method?: unknown };
      if (m.method === "tools/call" && m.id !== undefined) {
        const token = {};
        const key = keyOf(m.id);
        open.set(key, [...(open.get(key) ?? []), token]);
        this.unanswered.add(token);
      }
      onmessage?.(message, extra);
    };
    const send = transport.send.bind(transport);
    transport.send = async (message, options) => {
      try {
        await send(message, options);
      } finally {
        const m = message as { id?: unknown; method?: unknown };
        const waiting = m.method === undefined && m.id !== undefined ? open.get(keyOf(m.id)) : undefined;
        const token = waiting?.shift();
        if (waiting?.length === 0) open.delete(keyOf(m.id));
        if (token) this.unanswered.delete(token);
      }
    };
    await connected;
  }

  protected override _wrapHandler(
    method: string,
    handler: (request: JSONRPCRequest, ctx: ServerContext) => Promise<Result>,
  ): (request: JSONRPCRequest, ctx: ServerContext) => Promise<Result> {
    const wrapped = super._wrapHandler(method, handler);
    if (method === "logging/setLevel")
      return async (request, ctx) => {
        const answer = await wrapped(request, ctx);
        const level = (request.params as { level?: unknown } | undefined)?.level;
        if (isLogLevel(level)) this.logLevel = level;
        return answer;
      };
    if (method !== "tools/call") return wrapped;
    // A task-augmented call answers with its task, which the SDK's tools/call result check would
    // refuse; so does a 2026-07-28 call that became a task, which leaves that check as a TaskAnswer.
    return async (request, ctx) => {
      if (!wellFormedCall(request.params) || (request.params as CallToolParams).task !== undefined)
        return handler(request, ctx);
      try {
        return await wrapped(request, ctx);
      } catch (thrown) {
        if (thrown instanceof TaskAnswer) return thrown.result;
        throw thrown;
      }
    };
  }
}

/**
 * A 2026-07-28 tools/call answered with the task it became (CreateTaskResult): thrown past the
 * SDK's tools/call result check, which knows no `resultType: "task"`, and returned as the answer
 * by `GatewayServer`.
 */
class TaskAnswer {
  constructor(readonly result: Result) {}
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** tools/call params the SDK's request schema accepts. */
function wellFormedCall(params: unknown): boolean {
  return (
    isObject(params) &&
    typeof params.name === "string" &&
    (params.arguments === undefined || isObject(params.arguments)) &&
    (params._meta === undefined || isObject(params._meta))
  );
}

/**
 * How `server` (made by `createMcpServer` with a task runner) shows one of its caller's tasks on
 * 2026-07-28, as tasks/get would: what a listen stream's `notifications/tasks` carries. `elicit`:
 * the listener's client may be asked for an approval. Undefined for a server that runs no tasks.
 */
export function taskDetailOf(
  server: Server,
): ((t: TaskRecord, elicit: boolean) => Promise<Record<string, unknown>>) | undefined {
  return server instanceof GatewayServer ? server.taskDetail : undefined;
}

/** The caller a server's transport authenticated (`McpServerOptions.principal`): it owns the tasks the server starts. */
export function sessionPrincipal(options: Pick<McpServerOptions, "principal">): string {
  return options.principal ?? "stdio client";
}

/**
 * Tells the client of `server()` (the one serving the connection now) each time one of its lists
 * changed: `toolsChanged` as `notifications/tools/list_changed`, the pass-through's
 * `resourcesChanged`/`promptsChanged` as `notifications/resources/list_changed` and
 * `notifications/prompts/list_changed` (on a 2025-11-25 connection unsolicited, on a 2026-07-28
 * stdio connection the SDK's entry puts them on the `subscriptions/listen` streams that asked for
 * them); returns the function that stops. For a server that lives as long as its connection (not
 * one built per 2026-07-28 HTTP request: those hear through the handler's `notify`).
 */
export function announceListChanges(
  server: () => Server | undefined,
  feeds: Pick<McpServerOptions, "toolsChanged" | "passThrough">,
): () => void {
  const told = (send: (s: Server) => Promise<void>) => () => {
    const s = server();
    if (s) void send(s).catch(() => {});
  };
  const stops = [
    feeds.toolsChanged?.subscribe(told((s) => s.sendToolListChanged())),
    feeds.passThrough?.resourcesChanged?.subscribe(told((s) => s.sendResourceListChanged())),
    feeds.passThrough?.promptsChanged?.subscribe(told((s) => s.sendPromptListChanged())),
  ];
  return () => {
    for (const stop of stops) stop?.();
  };
}

/**
 * Resolves once every tools/call this server received has its answer handed to the transport,
 * or after `timeoutMs` (a call may be waiting on a person's elicitation answer). Close a
 * transport only after this: the SDK drops answers of requests still running at close.
 */
export async function answersSent(server: Server, timeoutMs = 2_000): Promise<void> {
  if (!(server instanceof GatewayServer) || server.unanswered.size === 0) return;
  await server.unanswered.idle(timeoutMs);
}

/**
 * An unknown tool is a protocol error (-32602) in both revisions; its message is the gateway's
 * observation text, which names the tools that come closest, since clients show it to the model.
 */
function unknownTool(obs: Observation): Error {
  return new ProtocolError(ProtocolErrorCode.InvalidParams, obs.text, { tool: obs.tool, code: "unknown_tool" });
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
 * The signals for the gateway when the tools/call is gone, each reason saying how. The SDK aborts
 * a request's signal on notifications/cancelled, when an HTTP client drops the request and when
 * the connection closes, and on close it drops the transport right after: so the reason is
 * decided a microtask later. `abandoned` fires for every one; `cancelled` only when the client
 * cancelled: that one aborts the call, as a person pressing Esc expects. A 2026-07-28 request
 * (`stateless`) has no session to come back to, so its request going away is its cancel; a
 * 2025-11-25 connection that closed does not cut the call, so a client that reconnects and
 * repeats it with the same ids gets its result. Only an A3 call (`approvable`) reads `abandoned`
 * (an approval must not run a call whose caller has gone) and its reason: for any other call it
 * is the same signal as `cancelled`.
 */
function requestGone(
  server: Server,
  signal: AbortSignal,
  stateless: boolean,
  approvable: boolean,
): { abandoned: AbortSignal; cancelled: AbortSignal } {
  // An AbortController costs microseconds to make, per call: a stateless call that asks for no
  // approval is cancelled by the request's own signal (nothing reads the reason of `cancelled`).
  if (stateless && !approvable) return { abandoned: signal, cancelled: signal };
  const gone = approvable ? new AbortController() : null;
  // Stateless, both fire together: one signal serves as both.
  const cancelled = stateless ? null : new AbortController();
  const onAbort = () =>
    queueMicrotask(() => {
      const closed = server.transport === undefined;
      if (!closed) cancelled?.abort("request cancelled");
      gone?.abort(closed ? "connection closed" : "request cancelled");
    });
  if (signal.aborted) onAbort();
  else signal.addEventListener("abort", onAbort, { once: true });
  const either = (gone ?? cancelled)!.signal;
  return { abandoned: gone?.signal ?? either, cancelled: cancelled?.signal ?? either };
}

/** The fields of a request's `_meta` envelope (2026-07-28), as the SDK lifted and validated them. */
interface Envelope {
  protocolVersion?: string;
  clientInfo?: { name?: unknown };
  clientCapabilities?: ClientCapabilities;
}

/**
 * A request must be of one revision: of 2026-07-28, carrying the `_meta` envelope, or of
 * 2025-11-25, on a connection that began with initialize. The SDK's stdio entry passes a request
 * with neither through to a connection opened with server/discover, so it is refused here,
 * naming what is missing.
 */
function requireEnvelope(server: Server, ctx: ServerContext, method: string): Envelope {
  const envelope = envelopeOf(ctx);
  if (envelope.protocolVersion === undefined && server.getNegotiatedProtocolVersion() === undefined)
    throw invalidParams(
      `${method} must carry params._meta["${PROTOCOL_VERSION_META_KEY}"] and params._meta["${CLIENT_CAPABILITIES_META_KEY}"] (the 2026-07-28 per-request envelope), or come after initialize (2025-11-25); received neither; send the envelope with every request`,
    );
  return envelope;
}

function envelopeOf(ctx: ServerContext): Envelope {
  const raw = (ctx.mcpReq.envelope ?? {}) as Record<string, unknown>;
  return {
    ...(typeof raw[PROTOCOL_VERSION_META_KEY] === "string" ? { protocolVersion: raw[PROTOCOL_VERSION_META_KEY] } : {}),
    ...(raw[CLIENT_INFO_META_KEY] ? { clientInfo: raw[CLIENT_INFO_META_KEY] as { name?: unknown } } : {}),
    ...(raw[CLIENT_CAPABILITIES_META_KEY]
      ? { clientCapabilities: raw[CLIENT_CAPABILITIES_META_KEY] as ClientCapabilities }
      : {}),
  };
}

/**
 * The cache fields of this server's lists on 2026-07-28 (the SDK stamps them on the results of
 * that revision only): tools/list, and the pass-through's lists when it serves them. They are
 * `private` like tools/list: a shared cache would hand them to callers the server never admitted
 * (with keys, only a grant's holder may read them). Each list's change is announced to the clients
 * (`announceListChanges`, and over HTTP the handler's `notify`), which invalidates what they kept.
 */
function listCacheHints(ttlMs: number, passThrough: PassThrough | undefined): ServerOptions["cacheHints"] {
  const hint = { ttlMs, cacheScope: "private" } as const;
  return {
    "tools/list": hint,
    ...(passThrough?.resources ? { "resources/list": hint, "resources/templates/list": hint } : {}),
    ...(passThrough?.prompts ? { "prompts/list": hint } : {}),
  };
}

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
  const server = new GatewayServer(
    { name: options.name ?? "toolgate", version: options.version ?? "0.1.0" },
    {
      capabilities: {
        tools: { listChanged: options.toolsChanged !== undefined },
        ...(options.logging ? { logging: {} } : {}),
        ...(options.tasks ? { tasks: TASKS_CAPABILITY, extensions: { [TASKS_EXTENSION]: {} } } : {}),
        ...passThroughCapabilities(options.passThrough),
      },
      // The 2026-07-28 revision's cache fields on the list results; a 2025-11-25 result has none.
      cacheHints: listCacheHints(listTtlMs, options.passThrough),
      ...(options.instructions ? { instructions: options.instructions } : {}),
    },
  );
  const session = new SessionIds(options.sessionId);
  const warn = options.warn ?? ((line: string) => void process.stderr.write(line + "\n"));
  let warnedIgnored = false;
  const checkOutput = outputCheck();
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

  server.setRequestHandler("tools/call", { params: CallToolParamsSchema }, (params, ctx): Promise<Result> =>
    callTool(params as CallToolParams, ctx),
  );

  async function callTool(params: CallToolParams, ctx: ServerContext): Promise<Result> {
    const envelope = requireEnvelope(server, ctx, "tools/call");
    const { name, arguments: args, _meta } = params ?? {};
    if (typeof name !== "string" || name === "") {
      throw invalidParams(
        `tools/call params.name must be the name of a tool (a non-empty string); received ${shownValue(name)}; call tools/list for the names`,
      );
    }
    if (_meta !== undefined && (typeof _meta !== "object" || _meta === null || Array.isArray(_meta))) {
      throw invalidParams(
        `tools/call params._meta must be an object; received ${shownValue(_meta)}; e.g. {"toolgate/call_id": "c1"}`,
      );
    }
    const http = ctx.http?.req !== undefined;
    const header = bearerToken(ctx.http?.req?.headers.get("authorization") ?? undefined);
    const bearer = header ?? options.capability;
    // Over HTTP, Idempotency-Key and Toolgate-Call-Id name the call for clients that cannot set _meta.
    const fromHeaders = idsFromHeaders((h) => ctx.http?.req?.headers.get(h));
    if (!fromHeaders.ok) return metaRefusal(name, fromHeaders.issue);
    const meta = withHeaderIds(_meta as Record<string, unknown> | undefined, fromHeaders.ids);
    const parsed = idsFromMeta(meta, session, bearer);
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
    // A client's cancel aborts the call through its signal (a read stops, a shell command's tree
    // is killed, a started write is in doubt, and the observation says which); a connection that
    // closed only marks it `abandoned`: an A3 call is then not run on an approval that arrives
    // after its client gave up, and anything else settles and answers a retry with the same ids.
    const spec = gateway.tools.get(name);
    const { abandoned, cancelled } = requestGone(
      server,
      ctx.mcpReq.signal,
      envelope.protocolVersion !== undefined,
      spec !== undefined && AUTHORITY[spec.effect] === "A3",
    );
    // A long call's progress (elapsed ms, which only grows, and the tool's line) for a request with a progressToken.
    const token = (_meta as Record<string, unknown> | undefined)?.progressToken;
    const progressOf =
      typeof token === "string" || typeof token === "number"
        ? (u: ProgressUpdate) =>
            void ctx.mcpReq
              .notify({
                method: "notifications/progress",
                params: { progressToken: token, progress: u.elapsed_ms, message: u.message },
              })
              .catch(() => {})
        : undefined;
    const trace = traceOf(_meta as Record<string, unknown> | undefined, ctx);
    const log = options.logging ? callLog(ctx, envelope) : undefined;
    // An unknown tool gets the same -32602 with or without a task (nothing is started for it).
    const support = runner && spec ? taskSupport(spec) : null;
    if (params.task !== undefined && spec) {
      if (runner && support === null && envelope.protocolVersion === undefined)
        throw taskForbidden(
          name,
          listing.filter(({ tool }) => tool.execution !== undefined).map(({ tool }) => tool.name),
        );
      return startTask(proposal, params.task, envelope, token);
    }
    const modern = envelope.protocolVersion !== undefined;
    // The server decides (2026-07-28): a call of a tool that may run as a task, from a client that
    // declared the extension, answers in its request when it ends within the runner's task_after_ms,
    // else as the task it goes on as; a tool that runs only as a task is one at once.
    const asTask = support !== null && modern && declaresTasks(envelope.clientCapabilities);
    if (support === "required" && !asTask) throw modern ? tasksExtensionRequired(name) : taskRequired(name);
    const ran = asTask
      ? await runner!
          .run(proposal, {
            owner: principal,
            signal: cancelled,
            ...(support === "required" ? { task_after_ms: 0 } : {}),
            ...(progressOf ? { progress: progressOf } : {}),
            ...(log ? { log } : {}),
            ...(trace ? { trace } : {}),
          })
          .catch((err: unknown) => refusedTask(err, "tools/call"))
      : undefined;
    if (ran && "task" in ran) throw new TaskAnswer(createTaskResult(ran.task));
    const obs = withCapabilityHint(
      ran?.answer ??
        (await gateway.call(proposal, {
          abandoned,
          principal,
          signal: cancelled,
          ...(progressOf ? { progress: progressOf } : {}),
          ...(log ? { log } : {}),
          ...(trace ? { trace } : {}),
        })),
      http,
    );
    if (obs.error?.code === "unknown_tool") throw unknownTool(obs);
    if (pendingApprovalId(obs) === null) return callResult(name, obs);
    // A 2026-07-28 request declares its client's capabilities itself; a 2025-11-25 one did at initialize.
    const capabilities = envelope.protocolVersion ? envelope.clientCapabilities : server.getClientCapabilities();
    const elicit = via !== "cli" && capabilities?.elicitation !== undefined;
    if (envelope.protocolVersion) {
      const label = envelope.clientInfo?.name;
      const answered = await approveByInputRequired(
        {
          gateway,
          elicit,
          cli: via !== "elicitation",
          principal,
          label: typeof label === "string" ? label : undefined,
          inputResponses: ctx.mcpReq.inputResponses,
          requestState: ctx.mcpReq.requestState(),
          abandoned,
          cancelled,
          ...(trace ? { trace } : {}),
        },
        proposal,
        obs,
      );
      return "resultType" in answered ? answered : callResult(name, answered);
    }
    const timeoutMs = options.approvalTimeoutMs ?? DEFAULT_APPROVAL_TIMEOUT_MS;
    const progress =
      typeof token === "string" || typeof token === "number"
        ? (n: number, message: string) =>
            void ctx.mcpReq
              .notify({
                method: "notifications/progress",
                params: { progressToken: token, progress: n, message },
              })
              .catch(() => {})
        : null;
    const answered = await approveByElicitation(
      {
        server,
        gateway,
        requestId: ctx.mcpReq.id,
        timeoutMs,
        elicit,
        cli: via !== "elicitation",
        principal,
        abandoned,
        cancelled,
        ...(trace ? { trace } : {}),
        progress,
        progressMs,
      },
      proposal,
      obs,
    );
    return callResult(name, answered);
  }

  /**
   * Where a call's log messages go: this request's own stream (`mcpReq.log`, which checks the
   * level once more), at the level a 2026-07-28 request names in its `_meta` (none: no log for it)
   * or the one this 2025-11-25 connection set.
   */
  function callLog(ctx: ServerContext, envelope: Envelope): CallLog | undefined {
    const level = envelope.protocolVersion
      ? (ctx.mcpReq.envelope as Record<string, unknown> | undefined)?.[LOG_LEVEL_META_KEY]
      : (server.logLevel ?? DEFAULT_LOG_LEVEL);
    if (!isLogLevel(level)) return undefined;
    return { level, send: (entry) => void ctx.mcpReq.log(entry.level, entry.data, entry.logger).catch(() => {}) };
  }

  /**
   * A task-augmented tools/call (2025-11-25): the task as started; its answer comes from
   * tasks/result. While it runs, the session hears its status changes (notifications/tasks/status)
   * and, when the call carried a progressToken, its progress under that token; a session that has
   * closed (HTTP: the task outlives it) hears nothing.
   */
  async function startTask(proposal: Proposal, task: unknown, envelope: Envelope, token: unknown): Promise<Result> {
    if (!runner || envelope.protocolVersion !== undefined)
      throw invalidParams(
        `tools/call params.task: this server runs no tasks${runner ? " on protocol revision " + envelope.protocolVersion + ` (there, declare the ${TASKS_EXTENSION} extension in the client capabilities of the request's _meta and the server runs the calls that may take long as tasks)` : " (its tools/list marks no tool with execution.taskSupport)"}; call without task`,
      );
    const ttl_ms = taskTtl(task);
    const tell = (method: string, params: Record<string, unknown>) => {
      if (server.transport !== undefined) void server.notification({ method, params } as never).catch(() => {});
    };
    const progress =
      typeof token === "string" || typeof token === "number"
        ? (u: ProgressUpdate) =>
            tell("notifications/progress", { progressToken: token, progress: u.elapsed_ms, message: u.message })
        : undefined;
    try {
      const started = await runner.start(proposal, {
        owner: principal,
        ...(ttl_ms !== undefined ? { ttl_ms } : {}),
        onStatus: (t: TaskRecord) => tell("notifications/tasks/status", { ...toMcpTask(t) }),
        ...(progress ? { progress } : {}),
      });
      return { task: toMcpTask(started) };
    } catch (err) {
      return refusedTask(err);
    }
  }

  /** The runner's refusal to start a task as a -32602, said of `where` (the request's `task`, or the call). */
  function refusedTask(err: unknown, where = "tools/call params.task"): never {
    if (err instanceof ToolgateError && err.code === "invalid_task") throw invalidParams(`${where}: ${err.message}`);
    throw err;
  }

  /** The tools/call result; an output that breaks the tool's own outputSchema is an isError result. */
  function callResult(name: string, obs: Observation): CallToolResult {
    const outputSchema = gateway.tools.get(name)?.outputSchema;
    if (outputSchema === undefined) return toCallToolResult(obs, false);
    const problems = obs.ok ? checkOutput(name, outputSchema, obs.output) : null;
    return problems
      ? outputMismatchResult(obs, problems)
      : server.projectCallToolResult(
          toCallToolResult(obs, true, (cut) => checkOutput(name, outputSchema, cut) === null),
          outputSchema,
        );
  }
  return server;
}
