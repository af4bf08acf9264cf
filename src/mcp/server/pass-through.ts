/**
 * What an MCP server serves beside the gateway's tools when something behind it offers more: the
 * resources, prompts and completions of a proxied upstream (`mcp/proxy/pass-through.ts` implements
 * `PassThrough`; `cli/host` hands it to `createMcpServer` through `McpServerOptions.passThrough`, so
 * this folder never imports the proxy). These are reads of the upstream's data, not tool calls: they
 * do not pass the gateway's pipeline. Each resources/read, prompts/get and completion/complete
 * leaves one line in the gateway's audit trail (`PassThrough.audit`, a runtime `ReadAudit`: the
 * method, the name or URI, the upstream, the caller's principal and grant, the outcome, the
 * answer's size, the trace context), and so does each resources/list, resources/templates/list and
 * prompts/list (no target; no source, since they are answered from what the server holds) and each
 * resources/subscribe and resources/unsubscribe of a 2025-11-25 connection (the URI; the upstream
 * that holds it, for a subscribe).
 * What bears on them is who may reach them: over HTTP the endpoint's bearer and principal rules, as
 * for every request; and when the gateway requires capabilities, a capability that verifies now
 * (the same one a tools/call would carry: `_meta["toolgate/capability"]`, the bearer header or the
 * session's default), any grant's holder being allowed to read them.
 */
import {
  ProtocolError,
  ProtocolErrorCode,
  type CompleteRequestParams,
  type CompleteResult,
  type GetPromptResult,
  type ListPromptsResult,
  type ListResourcesResult,
  type ListResourceTemplatesResult,
  type ReadResourceResult,
  type Server,
  type ServerCapabilities,
  type ServerContext,
} from "@modelcontextprotocol/server";
import type { ChangeFeed } from "../../core/changes.js";
import { READ_REASON_CHARS, type Gateway, type ReadAudit } from "../../runtime/types.js";
import { invalidParams } from "./protocol-error.js";
import { traceOf } from "./trace-of.js";

/** What one pass-through request may use: the client's signal (a cancel or a closed request aborts it). */
export interface PassThroughRequest {
  signal: AbortSignal;
  /**
   * Names who the request goes to (an upstream's name), said before it is asked: its audit line
   * names it, and a failure after it is that source's (`error`), one before it the server's own
   * refusal (`refused`). Absent where nothing is audited.
   */
  routed?(source: string): void;
}

/**
 * Resources, prompts and completions served from elsewhere. Each method answers with the MCP result
 * or throws a `ProtocolError` (-32602 naming the field for a request that names nothing served; the
 * upstream's own error, naming the upstream, otherwise). A list is paged by its `cursor` (absent:
 * the first page); a cursor the implementation did not hand out is a -32602.
 */
export interface PassThrough {
  resources?: {
    list(cursor: string | undefined, request: PassThroughRequest): Promise<ListResourcesResult>;
    templates(cursor: string | undefined, request: PassThroughRequest): Promise<ListResourceTemplatesResult>;
    read(uri: string, request: PassThroughRequest): Promise<ReadResourceResult>;
    /** Subscriptions to resources (`resources.subscribe` is declared when given). */
    subscriptions?: ResourceSubscriptions;
  };
  prompts?: {
    list(cursor: string | undefined, request: PassThroughRequest): Promise<ListPromptsResult>;
    get(name: string, args: Record<string, string>, request: PassThroughRequest): Promise<GetPromptResult>;
  };
  complete?(params: CompleteRequestParams, request: PassThroughRequest): Promise<CompleteResult>;
  /**
   * Emits when what `resources` lists changed (a proxy read an upstream's lists again after its
   * list_changed): the server declares `resources.listChanged`, and the transports tell their
   * clients (`announceListChanges`). Absent: the lists are fixed.
   */
  resourcesChanged?: ChangeFeed;
  /** Emits when what `prompts` lists changed; the server declares `prompts.listChanged`. */
  promptsChanged?: ChangeFeed;
  /** Where each read's audit line goes (`gateway.recordRead` of the gateway whose trail it joins); absent: none is written. */
  audit?: (read: ReadAudit) => void;
}

/** Who hears `notifications/resources/updated` for the URIs it subscribed to: a connection, or every listen stream naming the URI. */
export interface ResourceSubscriber {
  updated(uri: string): void;
}

/**
 * Subscriptions to resources served from elsewhere, counted per URI across subscribers: the first
 * subscriber of a URI subscribes where it lives, the last one leaving unsubscribes there, and an
 * update is told to that URI's subscribers only. `subscribe` throws a `ProtocolError` naming the
 * field for a URI nothing serves or whose owner offers no subscriptions.
 */
export interface ResourceSubscriptions {
  subscribe(uri: string, subscriber: ResourceSubscriber, request: PassThroughRequest): Promise<void>;
  unsubscribe(uri: string, subscriber: ResourceSubscriber): void;
}

/** Resources one connection (a 2025-11-25 session or stdio connection, or one listen stream) may subscribe to at once. */
export const MAX_SUBSCRIPTIONS_PER_CLIENT = 100;

/** The capabilities a server declares for `passThrough` (listChanged where a change feed is given, subscribe where subscriptions are). */
export function passThroughCapabilities(passThrough: PassThrough | undefined): ServerCapabilities {
  if (!passThrough) return {};
  return {
    ...(passThrough.resources
      ? {
          resources: {
            ...(passThrough.resourcesChanged ? { listChanged: true } : {}),
            ...(passThrough.resources.subscriptions ? { subscribe: true } : {}),
          },
        }
      : {}),
    ...(passThrough.prompts ? { prompts: passThrough.promptsChanged ? { listChanged: true } : {} } : {}),
    ...(passThrough.complete ? { completions: {} } : {}),
  };
}

export interface PassThroughHooks {
  gateway: Gateway;
  /** Refuses a request of neither revision (server.ts `requireEnvelope`). */
  check: (ctx: ServerContext, method: string) => void;
  /** The capability the request carries: `_meta`, bearer header, or the session's default. */
  capability: (meta: Record<string, unknown> | undefined, ctx: ServerContext) => string | undefined;
  /** Whether the request is of the 2026-07-28 revision (which subscribes through subscriptions/listen). */
  modern: (ctx: ServerContext) => boolean;
  /** Who asks, as the transport authenticated it (the audit line's principal). */
  principal: string;
}

function params(request: unknown): Record<string, unknown> {
  const p = (request as { params?: unknown }).params;
  return typeof p === "object" && p !== null && !Array.isArray(p) ? (p as Record<string, unknown>) : {};
}

function cursorOf(method: string, p: Record<string, unknown>): string | undefined {
  if (p.cursor === undefined) return undefined;
  if (typeof p.cursor !== "string")
    throw invalidParams(
      `${method} params.cursor must be a string from the last page's nextCursor; received ${typeof p.cursor}; omit it for the first page`,
    );
  return p.cursor;
}

/** Registers the handlers of what `passThrough` offers on `server` (declared by `passThroughCapabilities`). */
export function registerPassThrough(server: Server, passThrough: PassThrough, hooks: PassThroughHooks): void {
  /**
   * The request's checks: its revision, then (when the gateway has keys) a capability that
   * verifies; the issued grant it verified as, when it did.
   */
  async function admit(method: string, request: unknown, ctx: ServerContext, caller?: { grant: string | null }) {
    hooks.check(ctx, method);
    if (hooks.gateway.requiresCapability) {
      const capability = hooks.capability(params(request)._meta as Record<string, unknown> | undefined, ctx);
      if (capability === undefined)
        throw new ProtocolError(
          ProtocolErrorCode.InvalidRequest,
          `${method} needs a capability on this server: send it in params._meta["toolgate/capability"]${ctx.http?.req ? " or an Authorization: Bearer header" : ""} (any grant the server verifies may read)`,
        );
      const holder = await hooks.gateway.holder(capability);
      if (holder === null)
        throw new ProtocolError(
          ProtocolErrorCode.InvalidRequest,
          `${method}: the capability sent does not verify on this server (expired, revoked or not issued by its keys); ask its operator for a grant`,
        );
      if (caller) caller.grant = holder.grant;
    }
    return { signal: ctx.mcpReq.signal } satisfies PassThroughRequest;
  }

  /** Answers one read with `answer` and writes its audit line, whatever the outcome (`PassThrough.audit`). */
  async function audited<T extends object>(
    method: string,
    target: string | null,
    request: unknown,
    ctx: ServerContext,
    answer: (r: PassThroughRequest) => Promise<T>,
  ): Promise<T> {
    const started = performance.now();
    const caller = { grant: null as string | null };
    let source: string | null = null;
    const record = (outcome: ReadAudit["outcome"], answer_chars: number, reason?: string) => {
      const trace = traceOf(params(request)._meta as Record<string, unknown> | undefined, ctx);
      passThrough.audit?.({
        operation: method,
        target,
        source,
        principal: hooks.principal,
        grant: caller.grant,
        outcome,
        ...(reason !== undefined ? { reason: reason.slice(0, READ_REASON_CHARS) } : {}),
        answer_chars,
        latency_ms: Math.round(performance.now() - started),
        ...(trace !== undefined ? { trace } : {}),
      });
    };
    try {
      const admitted = await admit(method, request, ctx, caller);
      const result = await answer({ signal: admitted.signal, routed: (s) => void (source = s) });
      record("ok", JSON.stringify(result).length);
      return result;
    } catch (err) {
      record(source === null ? "refused" : "error", 0, String((err as Error)?.message ?? err));
      throw err;
    }
  }

  const { resources, prompts, complete } = passThrough;
  if (resources) {
    server.setRequestHandler("resources/list", (request, ctx) =>
      audited("resources/list", null, request, ctx, (r) =>
        resources.list(cursorOf("resources/list", params(request)), r),
      ),
    );
    server.setRequestHandler("resources/templates/list", (request, ctx) =>
      audited("resources/templates/list", null, request, ctx, (r) =>
        resources.templates(cursorOf("resources/templates/list", params(request)), r),
      ),
    );
    server.setRequestHandler("resources/read", (request, ctx) =>
      audited("resources/read", request.params.uri, request, ctx, (r) => resources.read(request.params.uri, r)),
    );
    if (resources.subscriptions) registerSubscriptions(server, resources.subscriptions, audited, hooks);
  }
  if (prompts) {
    server.setRequestHandler("prompts/list", (request, ctx) =>
      audited("prompts/list", null, request, ctx, (r) => prompts.list(cursorOf("prompts/list", params(request)), r)),
    );
    server.setRequestHandler("prompts/get", (request, ctx) =>
      audited("prompts/get", request.params.name, request, ctx, (r) =>
        prompts.get(request.params.name, request.params.arguments ?? {}, r),
      ),
    );
  }
  if (complete) {
    server.setRequestHandler("completion/complete", (request, ctx) => {
      const ref = request.params.ref as { name?: unknown; uri?: unknown };
      const target = typeof ref.name === "string" ? ref.name : typeof ref.uri === "string" ? ref.uri : null;
      return audited("completion/complete", target, request, ctx, (r) => complete(request.params, r));
    });
  }
}

/** Answers one pass-through request and writes its audit line (`registerPassThrough`'s `audited`). */
type Audited = <T extends object>(
  method: string,
  target: string | null,
  request: unknown,
  ctx: ServerContext,
  answer: (r: PassThroughRequest) => Promise<T>,
) => Promise<T>;

/**
 * resources/subscribe and resources/unsubscribe of one connection (2025-11-25): at most
 * `MAX_SUBSCRIPTIONS_PER_CLIENT` URIs, each told to this connection only, all given up when it
 * closes; each request leaves its audit line (what the connection gives up as it closes, none).
 */
function registerSubscriptions(
  server: Server,
  subscriptions: ResourceSubscriptions,
  audited: Audited,
  hooks: PassThroughHooks,
): void {
  const mine = new Set<string>();
  const subscriber: ResourceSubscriber = {
    updated: (uri) => void server.sendResourceUpdated({ uri }).catch(() => {}),
  };
  const viaListen = (method: string) =>
    new ProtocolError(
      ProtocolErrorCode.MethodNotFound,
      `${method} is not a method of the 2026-07-28 revision: name the URIs in subscriptions/listen params.notifications.resourceSubscriptions`,
    );
  server.setRequestHandler("resources/subscribe", (request, ctx) =>
    audited("resources/subscribe", request.params.uri, request, ctx, async (r) => {
      if (hooks.modern(ctx)) throw viaListen("resources/subscribe");
      const uri = request.params.uri;
      if (mine.has(uri)) return {};
      if (mine.size >= MAX_SUBSCRIPTIONS_PER_CLIENT)
        throw invalidParams(
          `resources/subscribe params.uri: this connection already holds ${MAX_SUBSCRIPTIONS_PER_CLIENT} subscriptions, the most it may; resources/unsubscribe one it no longer needs first`,
        );
      mine.add(uri);
      try {
        await subscriptions.subscribe(uri, subscriber, r);
      } catch (err) {
        mine.delete(uri);
        throw err;
      }
      return {};
    }),
  );
  server.setRequestHandler("resources/unsubscribe", (request, ctx) =>
    audited("resources/unsubscribe", request.params.uri, request, ctx, async () => {
      if (hooks.modern(ctx)) throw viaListen("resources/unsubscribe");
      const uri = request.params.uri;
      if (mine.delete(uri)) subscriptions.unsubscribe(uri, subscriber);
      return {};
    }),
  );
  // A connection that closes gives up what it held, so the last one leaving unsubscribes upstream.
  const prior = server.onclose;
  server.onclose = () => {
    prior?.();
    for (const uri of mine) subscriptions.unsubscribe(uri, subscriber);
    mine.clear();
  };
}
