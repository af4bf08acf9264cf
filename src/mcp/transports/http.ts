/**
 * `toolgate serve --http`: MCP Streamable HTTP, both protocol revisions on one endpoint, all
 * sharing one Gateway. A 2025-11-25 client (no `_meta` envelope: `initialize`, then requests with
 * `Mcp-Session-Id`, the GET stream) gets one SDK session transport and one MCP server per session.
 * A 2026-07-28 request (its envelope names the revision) is served on its own by the SDK's
 * per-request handler (`createMcpHandler`), which checks the revision headers (`MCP-Protocol-Version`,
 * `Mcp-Method`, `Mcp-Name`) against the body, answers `server/discover` and `subscriptions/listen`,
 * and builds one MCP server for the request. Which of the two a POST is, is read from its body
 * (`isLegacyRequest`), read once here under the body bound (413 beyond it). The SDK answers
 * malformed JSON (400 / -32700) itself; this file owns routing, which requests
 * are answered at all (`http-guard.ts`: Host and Origin), sessions bound to their caller and
 * bounded in number (`http-sessions.ts`), 2026-07-28 requests and listen streams bounded per
 * principal (`http-admission.ts`), bounds on connections (in total and per peer) and on
 * the time to send a request, the refusal to serve a network without authentication, and a shutdown that drains
 * in-flight calls.
 *
 * Idle sessions expire: one with no request open for `sessionIdleMs` (default 30 minutes) is
 * closed like at shutdown — answers still being prepared are sent first, and a call whose client
 * went away finishes in the gateway, so a retry with the same ids gets its stored result. A request
 * naming an expired, unknown or another caller's session then gets HTTP 404, on which the spec has
 * the client start a new session (MCP 2025-11-25, "Transports", Session Management). An open GET
 * stream or a call in progress is a request open; TCP keep-alive lets a vanished peer's connections close.
 */
import http from "node:http";
import { randomUUID } from "node:crypto";
import type net from "node:net";
import type { AddressInfo } from "node:net";
import {
  createMcpHandler,
  isLegacyRequest,
  WebStandardStreamableHTTPServerTransport,
  type Server,
} from "@modelcontextprotocol/server";
import type { Gateway } from "../../runtime/types.js";
import { ToolgateError } from "../../core/errors.js";
import { escapeUntrusted } from "../../observation/escape.js";
import { createGuard, isLoopback } from "./http-guard.js";
import { peerOf, principalOf, SessionTable, type Principal, type Tracked } from "./http-sessions.js";
import { PrincipalSlots, type Slot } from "./http-admission.js";
import { bearerToken } from "../server/meta.js";
import {
  announceListChanges,
  answersSent,
  createMcpServer,
  taskDetailOf,
  type McpServerOptions,
} from "../server/server.js";
import { withListenStream } from "./listen-stream.js";
import {
  DEFAULT_MAX_LISTENS_PER_CLIENT,
  ListenResources,
  listenLifetime,
  readListen,
  watchListenTasks,
  type ListenCaller,
  type ListenOptions,
  type ListenTaskIds,
  type TaskListener,
} from "./listen-hold.js";
import { MAX_MESSAGE_BYTES } from "./stdio-transport.js";
import { readBody, sendWebResponse, toWebRequest } from "./node-web.js";

export interface HttpOptions extends McpServerOptions, ListenOptions {
  /** Default 127.0.0.1 (loopback). */
  host?: string;
  /** Default 0: an ephemeral port (read it from the handle). */
  port?: number;
  /** Endpoint path; default `/mcp`. */
  path?: string;
  /** Bound on one POST body, bytes; default 4 MiB. */
  maxRequestBytes?: number;
  /** A session with no request open for this long is closed, ms; default 30 minutes. */
  sessionIdleMs?: number;
  /** How often idle sessions are looked for, ms; default and most min(sessionIdleMs, 60 s); 0: only when `expireIdle()`
   * is called. */
  sweepMs?: number;
  /** The clock idle time is measured on; default `Date.now`. */
  now?: () => number;
  /** Sessions open at once, in all; default 256. */
  maxSessions?: number;
  /**
   * Sessions open at once per principal (with keys the grant a bearer token verifies as, else the
   * peer; every loopback client is one peer); default 32.
   */
  maxSessionsPerClient?: number;
  /**
   * 2026-07-28 requests in flight at once per principal (counted as `maxSessionsPerClient` counts
   * sessions); default 64. One more is answered 429 at once (`http-admission.ts`).
   */
  maxRequestsPerClient?: number;
  /** TCP connections open at once; default 1024 (a session uses one or two). */
  maxConnections?: number;
  /** TCP connections open at once from one peer (every loopback client is one peer; IPv6 by /64); default 128. */
  maxConnectionsPerPeer?: number;
  /** Time a client has to send a request's headers, ms; default 10 s. */
  headersTimeoutMs?: number;
  /** Time a client has to send a whole request, body included, ms; default 60 s. Answers (SSE streams) are not bounded
   * by it. */
  requestTimeoutMs?: number;
  /** Browser origins allowed besides the endpoint's own (`http://localhost:6274`); a request with another Origin gets
   * 403. */
  allowOrigins?: readonly string[];
  /** Host names (or `name:port`) answered besides the listener's own addresses. */
  allowHosts?: readonly string[];
  /**
   * Serve a non-loopback address although the gateway requires no capability, so that anyone who
   * can reach it runs the tools. Without it such a bind is refused at start.
   */
  noAuth?: boolean;
  onError?: (error: Error) => void;
}

export interface HttpHandle {
  /** e.g. `http://127.0.0.1:41234/mcp`. */
  url: URL;
  http: http.Server;
  /** Open sessions. */
  readonly sessions: number;
  /** Refuses new requests (503) from now on; sessions stay open so in-flight answers arrive. */
  drain(): void;
  /** Closes every session idle for at least `sessionIdleMs` now; resolves with how many, once they are closed. */
  expireIdle(): Promise<number>;
  /** Closes every session and the listener. */
  close(): Promise<void>;
}

/** How long a session may go without a request before it is closed, ms. */
export const DEFAULT_SESSION_IDLE_MS = 30 * 60 * 1000;
export const DEFAULT_MAX_SESSIONS = 256;
export const DEFAULT_MAX_SESSIONS_PER_CLIENT = 32;
export const DEFAULT_MAX_REQUESTS_PER_CLIENT = 64;
const DEFAULT_MAX_CONNECTIONS = 1024;
const DEFAULT_MAX_CONNECTIONS_PER_PEER = 128;
const DEFAULT_HEADERS_TIMEOUT_MS = 10_000;
const DEFAULT_REQUEST_TIMEOUT_MS = 60_000;

/** How long `close()` waits for answers still being written to their clients, ms. */
const WRITE_DRAIN_MS = 2_000;

/** Idle sessions are looked for at least this often, ms. */
const MAX_SWEEP_MS = 60_000;

/** Probes a silent peer's connection after this long, ms, so a vanished client's streams close. */
const TCP_KEEPALIVE_MS = 60_000;

interface Session extends Tracked {
  transport: WebStandardStreamableHTTPServerTransport;
  server: Server;
}

type JsonRpcId = string | number | null;

const errorBody = (code: number, message: string, id: JsonRpcId = null, data?: Record<string, unknown>) =>
  JSON.stringify({ jsonrpc: "2.0", id, error: { code, message, ...(data ? { data } : {}) } });

function jsonError(
  res: http.ServerResponse,
  status: number,
  code: number,
  message: string,
  headers: Record<string, string> = {},
  id: JsonRpcId = null,
  data?: Record<string, unknown>,
): void {
  res.writeHead(status, { "content-type": "application/json", ...headers }).end(errorBody(code, message, id, data));
}

/** The id of one JSON-RPC message, to echo in an error: only one MCP allows (a string or a safe integer), else null. */
function echoedId(json: unknown): JsonRpcId {
  if (typeof json !== "object" || json === null || Array.isArray(json)) return null;
  const { id } = json as { id?: unknown };
  return typeof id === "string" || (typeof id === "number" && Number.isSafeInteger(id)) ? id : null;
}

/** What a 2026-07-28 POST body asks for, as admission counts it: a request (its id), a listen stream, or neither. */
function requestOf(json: unknown): { id: JsonRpcId; listen: boolean } | null {
  const method = messageMethod(json);
  if (typeof method !== "string" || (json as { id?: unknown }).id === undefined) return null;
  return { id: echoedId(json), listen: method === "subscriptions/listen" };
}

/**
 * `gateway`, whose calls hold `slot` until they end: a client that goes away mid-call frees its
 * request's slot only once the call it started is over, not when its connection closes.
 */
function holding(gateway: Gateway, slot: Slot): Gateway {
  return {
    get tools() {
      return gateway.tools;
    },
    get requiresCapability() {
      return gateway.requiresCapability;
    },
    get approvals() {
      return gateway.approvals;
    },
    call: (proposal, options) => gateway.call(proposal, options).finally(slot.hold()),
    holder: (capability) => gateway.holder(capability),
    visible: (capability) => gateway.visible(capability),
    close: (options) => gateway.close(options),
  };
}

/** The method of one JSON-RPC message (null for a response), undefined for anything else (a batch, no JSON). */
function messageMethod(json: unknown): string | null | undefined {
  if (typeof json !== "object" || json === null || Array.isArray(json)) return undefined;
  const { method } = json as { method?: unknown };
  return typeof method === "string" ? method : method === undefined ? null : undefined;
}

/** How long a client over its request bound waits before it retries, s. */
const REQUEST_RETRY_AFTER_S = "1";
/** How long a client over its listen bound waits before it retries, s. */
const LISTEN_RETRY_AFTER_S = "5";

function positive(name: string, value: number | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  if (!Number.isSafeInteger(value) || value < 1)
    throw new ToolgateError(
      "invalid_input",
      `${name} must be a whole number of at least 1; received ${String(value)}; e.g. ${fallback}`,
    );
  return value;
}

/** Starts a Streamable HTTP endpoint for `gateway`. */
export async function serveHttp(gateway: Gateway, options: HttpOptions = {}): Promise<HttpHandle> {
  const host = options.host ?? "127.0.0.1";
  const path = options.path ?? "/mcp";
  const idleMs = options.sessionIdleMs ?? DEFAULT_SESSION_IDLE_MS;
  if (!(idleMs > 0))
    throw new ToolgateError(
      "invalid_input",
      `sessionIdleMs must be a number of milliseconds greater than 0; received ${String(idleMs)}; e.g. ${DEFAULT_SESSION_IDLE_MS}`,
    );
  const loopback = isLoopback(host);
  if (!loopback && !gateway.requiresCapability && !options.noAuth) {
    throw new ToolgateError(
      "auth_required",
      `refusing to serve ${host} without capability keys: anyone who can reach that address could run every tool. Pass --keys FILE (calls then need a capability), bind a loopback address such as 127.0.0.1, or pass --no-auth to serve it unauthenticated on purpose`,
    );
  }
  const limits = {
    total: positive("maxSessions", options.maxSessions, DEFAULT_MAX_SESSIONS),
    perClient: positive("maxSessionsPerClient", options.maxSessionsPerClient, DEFAULT_MAX_SESSIONS_PER_CLIENT),
  };
  const now = options.now ?? Date.now;
  const requestSlots = new PrincipalSlots(
    positive("maxRequestsPerClient", options.maxRequestsPerClient, DEFAULT_MAX_REQUESTS_PER_CLIENT),
    {
      noun: "2026-07-28 requests",
      state: "in flight",
      flag: "--max-requests-per-client",
      advice: "wait for an answer before sending another request",
    },
  );
  const listenSlots = new PrincipalSlots(
    positive("maxListensPerClient", options.maxListensPerClient, DEFAULT_MAX_LISTENS_PER_CLIENT),
    {
      noun: "subscriptions/listen streams",
      state: "open",
      flag: "--max-listens-per-client",
      advice:
        "close a stream you no longer read (a stream ends when its connection closes) or ask for several notification types on one stream",
    },
  );
  const listenMs = listenLifetime(options.maxListenMs);
  /** The slot each 2026-07-28 request holds, by the AuthInfo its server is built with. */
  const slots = new WeakMap<object, Slot>();
  const maxBytes = positive("maxRequestBytes", options.maxRequestBytes, MAX_MESSAGE_BYTES);
  const sessions = new SessionTable<Session>(limits);
  /** Sessions still closing (expired, evicted); `close()` waits for them. */
  const closing = new Set<Promise<void>>();
  let draining = false;
  /** Made once the port is known (listening); until then requests get 503. */
  const started: { guard?: ReturnType<typeof createGuard> } = {};
  // Over HTTP without capabilities the client asking is not known to be a person: by default the
  // person approves A3 calls from the console (toolgate approvals), never through the client.
  const serverOptions: McpServerOptions = {
    ...options,
    ...(options.approveVia === undefined && !gateway.requiresCapability ? { approveVia: "cli" } : {}),
  };

  /** Counts `res` as open on `session` until it ends; the idle time starts when the last one does. */
  function track(session: Session, res: http.ServerResponse): void {
    session.open++;
    session.lastActive = now();
    res.once("close", () => {
      session.open--;
      session.lastActive = now();
    });
  }

  async function shut(session: Session): Promise<void> {
    await answersSent(session.server);
    await session.server.close();
  }

  /** Closes `list` (already out of the table); resolves with how many, once they are closed. */
  function closeAll(list: Session[]): Promise<number> {
    if (list.length === 0) return Promise.resolve(0);
    const done = Promise.all(list.map((s) => shut(s).catch((err: unknown) => options.onError?.(err as Error)))).then(
      () => {},
    );
    closing.add(done);
    return done.then(() => {
      closing.delete(done);
      return list.length;
    });
  }

  const expireIdle = () => closeAll(sessions.takeIdle(now() - idleMs));

  /**
   * The caller of `req` as the session bounds count it: the grant its bearer token verifies as,
   * when the gateway has keys; otherwise its peer. A store that cannot be read counts it as its peer.
   */
  async function verified(req: http.IncomingMessage): Promise<Principal> {
    const bearer = bearerToken(req.headers.authorization);
    if (bearer === undefined || !gateway.requiresCapability) return principalOf(req);
    const holder = await gateway.holder(bearer).catch((err: unknown) => {
      options.onError?.(err as Error);
      return null;
    });
    return principalOf(req, holder);
  }

  async function open(principal: Principal): Promise<Session> {
    const id = randomUUID();
    const server = createMcpServer(gateway, { ...serverOptions, sessionId: id, principal: principal.label });
    const transport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: () => id,
      onsessioninitialized: (sid) => sessions.initialised(session, sid),
      onsessionclosed: () => sessions.remove(session),
      maxRequestBodySize: maxBytes,
    });
    const session: Session = { transport, server, principal, open: 0, lastActive: now() };
    sessions.add(session);
    // A change of the tool list goes to this session's GET stream while the session lives.
    const stopAnnouncing = announceListChanges(() => server, options);
    transport.onclose = () => {
      stopAnnouncing();
      sessions.remove(session);
    };
    if (options.onError) server.onerror = options.onError;
    await server.connect(transport);
    return session;
  }

  async function route(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const url = new URL(req.url ?? "/", "http://local");
    if (!started.guard) return jsonError(res, 503, -32000, "server is starting; retry in a moment");
    const refused = started.guard.check(req.headers);
    if (refused) return jsonError(res, refused.status, -32000, refused.message);
    if (url.pathname !== path) return jsonError(res, 404, -32601, `not found: the MCP endpoint is ${path}`);
    if (draining)
      return jsonError(
        res,
        503,
        -32000,
        "server is shutting down; reconnect to another instance or retry later with the same call ids",
      );
    const principal = principalOf(req);
    const sid = req.headers["mcp-session-id"];
    if (typeof sid === "string") {
      // Another caller's session answers exactly like an unknown one: its id opens nothing.
      const session = sessions.lookup(sid, principal);
      if (!session)
        return jsonError(
          res,
          404,
          -32001,
          `Session not found: ${escapeUntrusted(sid.slice(0, 100))} is unknown, expired or closed; start a new session with initialize`,
        );
      track(session, res);
      const read = await body(req, res);
      if (read === null) return;
      const request = toWebRequest(req, res, read.bytes);
      // A session is 2025-11-25's; a request of the 2026-07-28 revision in it is another era's.
      if (read.json !== undefined && !(await isLegacyRequest(request, read.json, { maxRequestBodySize: maxBytes })))
        return jsonError(
          res,
          400,
          -32600,
          `this request is of the 2026-07-28 revision (its _meta envelope or MCP-Protocol-Version header says so), but it names session ${escapeUntrusted(sid.slice(0, 100))}, which speaks 2025-11-25: send a 2026-07-28 request without Mcp-Session-Id, or a 2025-11-25 one (no io.modelcontextprotocol/protocolVersion in _meta, MCP-Protocol-Version: 2025-11-25) in the session`,
          {},
          echoedId(read.json),
        );
      return respond(res, await session.transport.handleRequest(request, parsed(read)));
    }
    const read = await body(req, res);
    if (read === null) return;
    const request = toWebRequest(req, res, read.bytes);
    const caller = await verified(req);
    if (read.json !== undefined && !(await isLegacyRequest(request, read.json, { maxRequestBodySize: maxBytes })))
      return serveModern(request, read.json, caller, res);
    // No session header: only an initialize may open one.
    const method = messageMethod(read.json);
    if (method !== undefined && method !== "initialize")
      return jsonError(
        res,
        400,
        -32000,
        `Bad Request: ${method === null ? "a JSON-RPC response" : escapeUntrusted(JSON.stringify(method.slice(0, 100)))} without a session: a 2025-11-25 request needs the Mcp-Session-Id of a session its initialize opened, and a 2026-07-28 request needs the _meta envelope (io.modelcontextprotocol/protocolVersion, clientCapabilities, clientInfo) with MCP-Protocol-Version, Mcp-Method and Mcp-Name headers`,
        {},
        echoedId(read.json),
      );
    const admitted = sessions.admit(caller);
    if (!admitted.ok) return jsonError(res, admitted.status, -32000, admitted.message, { "retry-after": "5" });
    void closeAll(admitted.evict);
    const session = await open(caller);
    track(session, res);
    const response = await session.transport.handleRequest(request, parsed(read));
    if (session.transport.sessionId === undefined) {
      sessions.remove(session);
      await session.server.close();
    }
    await respond(res, response);
  }

  /** Answers being written to their clients; `close()` lets them finish before the connections close. */
  const writing = new Set<Promise<void>>();
  function respond(res: http.ServerResponse, response: Response): Promise<void> {
    const written = sendWebResponse(res, response);
    writing.add(written);
    return written.finally(() => writing.delete(written));
  }

  /** Servers answering a 2026-07-28 request now; `close()` lets them send their answers first. */
  const modernServers = new Set<Server>();
  const modern = createMcpHandler(
    (ctx) => {
      const label = ctx.authInfo?.clientId ?? "unknown peer";
      const slot = ctx.authInfo ? slots.get(ctx.authInfo) : undefined;
      const server = createMcpServer(slot ? holding(gateway, slot) : gateway, {
        ...serverOptions,
        sessionId: `principal ${label}`,
        principal: label,
      });
      if (options.onError) server.onerror = options.onError;
      modernServers.add(server);
      const prior = server.onclose;
      server.onclose = () => {
        prior?.();
        modernServers.delete(server);
      };
      return server;
    },
    { legacy: "reject", maxRequestBodySize: maxBytes, ...(options.onError ? { onerror: options.onError } : {}) },
  );
  // A 2026-07-28 client hears of a list change on its subscriptions/listen stream (when it asked for that list).
  const modernFeeds = [
    options.toolsChanged?.subscribe(() => modern.notify.toolsChanged()),
    options.passThrough?.resourcesChanged?.subscribe(() => modern.notify.resourcesChanged()),
    options.passThrough?.promptsChanged?.subscribe(() => modern.notify.promptsChanged()),
  ];
  const stopAnnouncingModern = () => {
    for (const stop of modernFeeds) stop?.();
  };

  /** A POST's body (null when it was refused, the answer already sent) and its JSON, when it parses. */
  async function body(
    req: http.IncomingMessage,
    res: http.ServerResponse,
  ): Promise<{ bytes: Buffer | undefined; json: unknown } | null> {
    if (req.method !== "POST") return { bytes: undefined, json: undefined };
    const read = await readBody(req, maxBytes);
    if (!read.ok) {
      jsonError(res, read.status, -32000, read.message);
      return null;
    }
    let json: unknown;
    try {
      json = JSON.parse(read.bytes.toString("utf8"));
    } catch {
      // The SDK transport answers it: 400 with a JSON-RPC parse error.
    }
    return { bytes: read.bytes, json };
  }

  function parsed(read: { json: unknown }): { parsedBody: unknown } | undefined {
    return read.json === undefined ? undefined : { parsedBody: read.json };
  }

  // A listen stream's resourceSubscriptions: one upstream subscription per URI across every stream
  // naming it, each update published once for the handler to put on those streams.
  const listenResources = new ListenResources(
    options.passThrough?.resources?.subscriptions,
    { updated: (uri) => modern.notify.resourceUpdated(uri) },
    { gateway, ...(options.passThrough?.audit ? { audit: options.passThrough.audit } : {}) },
  );

  /**
   * Reads a listen request and holds its `resourceSubscriptions` until its stream closes; what it
   * asks of tasks, or null when it was refused (answered here).
   */
  async function holdListen(
    json: unknown,
    res: http.ServerResponse,
    id: JsonRpcId,
    caller: ListenCaller,
  ): Promise<{ tasks: ListenTaskIds | null } | null> {
    const asked = readListen((json as { params?: unknown }).params, options.tasks !== undefined);
    if (!asked.ok) {
      jsonError(res, 200, asked.code, asked.message, {}, id, asked.data);
      return null;
    }
    const signal = new AbortController();
    res.once("close", () => signal.abort());
    const held = await listenResources.hold(asked.uris, signal.signal, (json as { params?: unknown }).params, caller);
    if (!held.ok) {
      jsonError(res, 200, held.code, held.message, {}, id);
      return null;
    }
    if (signal.signal.aborted) held.release();
    else res.once("close", held.release);
    return { tasks: asked.tasks };
  }

  /**
   * One 2026-07-28 request. Its server is built for it alone; the caller's principal names the
   * trajectory, so a retry that carries an approval's answer (a new request) is the same caller's
   * call to the gateway, and the approval the gateway finds for it is the one it was asked about.
   */
  async function serveModern(
    request: Request,
    json: unknown,
    caller: Principal,
    res: http.ServerResponse,
  ): Promise<void> {
    const authInfo = { token: "", clientId: caller.label, scopes: [] };
    const asked = requestOf(json);
    if (asked) {
      const kind = asked.listen ? listenSlots : requestSlots;
      const taken = kind.take(caller.quota);
      if (!taken.ok)
        return jsonError(
          res,
          429,
          -32000,
          taken.message,
          { "retry-after": asked.listen ? LISTEN_RETRY_AFTER_S : REQUEST_RETRY_AFTER_S },
          asked.id,
          { limit: taken.limit, flag: kind.kind.flag },
        );
      res.once("close", taken.slot.hold());
      slots.set(authInfo, taken.slot);
    }
    const listener = {
      capability: bearerToken(request.headers.get("authorization") ?? undefined),
      principal: caller.label,
      http: true,
    };
    const listen = asked?.listen === true ? await holdListen(json, res, asked.id, listener) : undefined;
    if (listen === null) return;
    const response = await modern.fetch(request, { parsedBody: json, authInfo });
    if (!listen) return respond(res, response);
    await respond(res, listenStream(response, listen.tasks, asked!.id ?? 0, caller));
  }

  /** Listen streams open now: `close()` ends them gracefully. */
  const listenStreams = new Set<() => void>();
  /**
   * `response` (the SDK's listen stream), ended gracefully after `listenMs`, with
   * `notifications/tasks` for `caller`'s tasks among `asked`'s ids when it names any.
   */
  function listenStream(
    response: Response,
    asked: ListenTaskIds | null,
    subscriptionId: string | number,
    caller: Principal,
  ): Response {
    const listener: TaskListener | null = asked && {
      runner: options.tasks!,
      owner: caller.label,
      // The detail as tasks/get shows it to this caller (an unconnected server, only for its results' shape).
      detail: taskDetailOf(createMcpServer(gateway, { ...serverOptions, principal: caller.label }))!,
      approveVia: serverOptions.approveVia,
      ...(options.onError ? { onError: options.onError } : {}),
    };
    const wrapped = withListenStream(response, {
      subscriptionId,
      maxMs: listenMs,
      ...(asked && listener
        ? {
            tasks: {
              ids: asked.ids,
              watch: (send, done) => watchListenTasks(listener, asked, subscriptionId, send, done),
            },
          }
        : {}),
      ended: () => listenStreams.delete(wrapped.end),
    });
    listenStreams.add(wrapped.end);
    return wrapped.response;
  }

  const perPeer = positive("maxConnectionsPerPeer", options.maxConnectionsPerPeer, DEFAULT_MAX_CONNECTIONS_PER_PEER);
  /** Connections open per peer (`peerOf`), and those refused for being over it. */
  const connections = new Map<string, number>();
  const refused = new WeakSet<net.Socket>();
  // Bad --allow-host / --allow-origin values are refused before anything is bound.
  createGuard({
    host,
    port: options.port ?? 0,
    ...(options.allowHosts ? { allowHosts: options.allowHosts } : {}),
    ...(options.allowOrigins ? { allowOrigins: options.allowOrigins } : {}),
  });
  const listener = http.createServer(
    {
      headersTimeout: positive("headersTimeoutMs", options.headersTimeoutMs, DEFAULT_HEADERS_TIMEOUT_MS),
      requestTimeout: positive("requestTimeoutMs", options.requestTimeoutMs, DEFAULT_REQUEST_TIMEOUT_MS),
      // How often the two bounds above are checked: a tenth of the smaller, at most Node's 30 s.
      connectionsCheckingInterval: Math.max(
        10,
        Math.min(
          30_000,
          Math.floor(
            Math.min(
              options.headersTimeoutMs ?? DEFAULT_HEADERS_TIMEOUT_MS,
              options.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS,
            ) / 10,
          ),
        ),
      ),
    },
    (req, res) => {
      // A connection over its peer's bound was answered and closed when it opened.
      if (refused.has(req.socket)) return void req.socket.destroy();
      route(req, res).catch((err: unknown) => {
        options.onError?.(err as Error);
        if (!res.headersSent) jsonError(res, 500, -32603, `internal error: ${(err as Error).message}`);
      });
    },
  );
  listener.maxConnections = positive("maxConnections", options.maxConnections, DEFAULT_MAX_CONNECTIONS);
  // Before the HTTP parser's own listener: a connection over its peer's bound never reaches a route.
  listener.prependListener("connection", (socket: net.Socket) => {
    const peer = peerOf(socket.remoteAddress);
    const count = connections.get(peer.key) ?? 0;
    if (count >= perPeer) {
      refused.add(socket);
      const message = `too many connections from ${peer.label}: ${count} ${count === 1 ? "is" : "are"} open, the most --max-connections-per-peer allows (${perPeer}); reuse an open connection (HTTP keep-alive), close idle ones, or start toolgate with a higher --max-connections-per-peer`;
      const body = errorBody(-32000, message);
      socket.on("error", () => {});
      socket.end(
        `HTTP/1.1 503 Service Unavailable\r\ncontent-type: application/json\r\nretry-after: 5\r\nconnection: close\r\ncontent-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
        () => socket.destroy(),
      );
      return;
    }
    connections.set(peer.key, count + 1);
    socket.once("close", () => {
      const left = (connections.get(peer.key) ?? 1) - 1;
      if (left === 0) connections.delete(peer.key);
      else connections.set(peer.key, left);
    });
    socket.setKeepAlive(true, TCP_KEEPALIVE_MS);
  });
  await new Promise<void>((resolve, reject) => {
    listener.once("error", reject);
    listener.listen(options.port ?? 0, host, () => resolve());
  });
  const sweepMs = Math.min(options.sweepMs ?? idleMs, MAX_SWEEP_MS);
  const sweep = sweepMs > 0 ? setInterval(() => void expireIdle(), sweepMs).unref() : undefined;
  const port = (listener.address() as AddressInfo).port;
  started.guard = createGuard({
    host,
    port,
    ...(options.allowHosts ? { allowHosts: options.allowHosts } : {}),
    ...(options.allowOrigins ? { allowOrigins: options.allowOrigins } : {}),
  });
  const display = host.includes(":") && !host.startsWith("[") ? `[${host}]` : host;
  const warn = options.warn ?? ((line: string) => void process.stderr.write(line + "\n"));
  if (!gateway.requiresCapability) {
    warn(
      loopback
        ? `toolgate: warning: no capability keys (--keys), so any process on this machine that can reach http://${display}:${port}${path} can call every tool; browsers are kept out by the Host and Origin checks`
        : `toolgate: warning: --no-auth: anyone who can reach http://${display}:${port}${path} can call every tool`,
    );
  }

  return {
    url: new URL(`http://${display}:${port}${path}`),
    http: listener,
    get sessions() {
      return sessions.size;
    },
    drain() {
      draining = true;
    },
    expireIdle,
    async close() {
      draining = true;
      clearInterval(sweep);
      stopAnnouncingModern();
      await Promise.allSettled([
        ...sessions.takeAll().map(shut),
        ...closing,
        ...[...modernServers].map((server) => answersSent(server)),
      ]);
      for (const end of [...listenStreams]) end();
      await modern.close();
      // A closed session ends its streams; what was queued on them is written before the sockets close.
      await Promise.race([
        Promise.allSettled([...writing]),
        new Promise((resolve) => setTimeout(resolve, WRITE_DRAIN_MS).unref()),
      ]);
      const stopped = new Promise<void>((resolve) => listener.close(() => resolve()));
      // Idle keep-alive sockets and standalone SSE streams would hold close() open.
      listener.closeAllConnections();
      await stopped;
    },
  };
}
