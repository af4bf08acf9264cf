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
 *
 * This file starts and closes the endpoint and routes each request; its parts: `http-options.ts`
 * (options, defaults, the handle), `http-replies.ts` (a POST's body, JSON-RPC error answers),
 * `http-legacy.ts` (the 2025-11-25 sessions), `http-modern.ts` (the 2026-07-28 requests),
 * `http-listen.ts` (their listen streams) and `http-connections.ts` (the listener's connection bounds).
 */
import type http from "node:http";
import type { AddressInfo } from "node:net";
import { isLegacyRequest } from "@modelcontextprotocol/server";
import type { Gateway } from "../../runtime/types.js";
import { ToolgateError } from "../../core/errors.js";
import { createGuard, isLoopback } from "./http-guard.js";
import { principalOf, type Principal } from "./http-sessions.js";
import { bearerToken } from "../server/meta.js";
import { answersSent, type McpServerOptions } from "../server/server.js";
import { DEFAULT_MAX_LISTENS_PER_CLIENT, listenLifetime } from "./listen-hold.js";
import { MAX_MESSAGE_BYTES } from "./stdio-transport.js";
import { sendWebResponse, toWebRequest } from "./node-web.js";
import {
  DEFAULT_MAX_CONNECTIONS_PER_PEER,
  DEFAULT_MAX_REQUESTS_PER_CLIENT,
  DEFAULT_MAX_SESSIONS,
  DEFAULT_MAX_SESSIONS_PER_CLIENT,
  DEFAULT_SESSION_IDLE_MS,
  positive,
  type HttpHandle,
  type HttpOptions,
} from "./http-options.js";
import { jsonError, readPost } from "./http-replies.js";
import { legacySessions } from "./http-legacy.js";
import { modernPath } from "./http-modern.js";
import { listenHttp } from "./http-connections.js";

// The names this module has always exported, kept importable from here.
export {
  DEFAULT_MAX_REQUESTS_PER_CLIENT,
  DEFAULT_MAX_SESSIONS,
  DEFAULT_MAX_SESSIONS_PER_CLIENT,
  DEFAULT_SESSION_IDLE_MS,
  type HttpHandle,
  type HttpOptions,
} from "./http-options.js";

/** How long `close()` waits for answers still being written to their clients, ms. */
const WRITE_DRAIN_MS = 2_000;

/** Idle sessions are looked for at least this often, ms. */
const MAX_SWEEP_MS = 60_000;

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
  const maxRequests = positive("maxRequestsPerClient", options.maxRequestsPerClient, DEFAULT_MAX_REQUESTS_PER_CLIENT);
  const maxListens = positive("maxListensPerClient", options.maxListensPerClient, DEFAULT_MAX_LISTENS_PER_CLIENT);
  const listenMs = listenLifetime(options.maxListenMs);
  const maxBytes = positive("maxRequestBytes", options.maxRequestBytes, MAX_MESSAGE_BYTES);
  let draining = false;
  /** Made once the port is known (listening); until then requests get 503. */
  const started: { guard?: ReturnType<typeof createGuard> } = {};
  // Over HTTP without capabilities the client asking is not known to be a person: by default the
  // person approves A3 calls from the console (toolgate approvals), never through the client.
  const serverOptions: McpServerOptions = {
    ...options,
    ...(options.approveVia === undefined && !gateway.requiresCapability ? { approveVia: "cli" } : {}),
  };

  /** Answers being written to their clients; `close()` lets them finish before the connections close. */
  const writing = new Set<Promise<void>>();
  function respond(res: http.ServerResponse, response: Response): Promise<void> {
    const written = sendWebResponse(res, response);
    writing.add(written);
    return written.finally(() => writing.delete(written));
  }

  const legacy = legacySessions({ gateway, options, serverOptions, limits, idleMs, maxBytes, now, respond });
  const { sessions, closing, shut, expireIdle } = legacy;
  const { modern, modernServers, listenStreams, stopAnnouncingModern, serveModern } = modernPath({
    gateway,
    options,
    serverOptions,
    maxBytes,
    maxRequests,
    maxListens,
    listenMs,
    respond,
  });

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
    const sid = req.headers["mcp-session-id"];
    if (typeof sid === "string") return legacy.inSession(req, res, sid);
    const read = await readPost(req, res, maxBytes);
    if (read === null) return;
    const request = toWebRequest(req, res, read.bytes);
    const caller = await verified(req);
    if (read.json !== undefined && !(await isLegacyRequest(request, read.json, { maxRequestBodySize: maxBytes })))
      return serveModern(request, read.json, caller, res);
    return legacy.initialize(res, request, read, caller);
  }

  const perPeer = positive("maxConnectionsPerPeer", options.maxConnectionsPerPeer, DEFAULT_MAX_CONNECTIONS_PER_PEER);
  // Bad --allow-host / --allow-origin values are refused before anything is bound.
  createGuard({
    host,
    port: options.port ?? 0,
    ...(options.allowHosts ? { allowHosts: options.allowHosts } : {}),
    ...(options.allowOrigins ? { allowOrigins: options.allowOrigins } : {}),
  });
  const listener = await listenHttp(options, host, perPeer, route);
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
