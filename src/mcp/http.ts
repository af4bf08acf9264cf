/**
 * `toolgate serve --http`: MCP Streamable HTTP (MCP 2025-11-25 "Transports"). One SDK transport
 * and one MCP server per session, all sharing one Gateway. The SDK transport answers malformed
 * JSON (400 / -32700) and oversized bodies (413) itself; this file owns routing, sessions, the
 * loopback default with DNS-rebinding protection, and a shutdown that drains in-flight calls.
 *
 * Idle sessions expire: one with no request open for `sessionIdleMs` (default 30 minutes) is
 * closed like at shutdown — answers still being prepared are sent first, and a call whose client
 * went away finishes in the gateway, so a retry with the same ids gets its stored result. A request
 * naming an expired or unknown session then gets HTTP 404, on which the spec has the client start a
 * new session (MCP 2025-11-25, "Transports", Session Management). An open GET stream or a call in
 * progress is a request open; TCP keep-alive lets a vanished peer's connections close.
 */
import http from "node:http";
import { randomUUID } from "node:crypto";
import type { AddressInfo } from "node:net";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import type { Server } from "@modelcontextprotocol/sdk/server/index.js";
import type { Gateway } from "../runtime/types.js";
import { ToolgateError } from "../schema/errors.js";
import { answersSent, createMcpServer, type McpServerOptions } from "./server.js";
import { MAX_MESSAGE_BYTES } from "./stdio-transport.js";

export interface HttpOptions extends McpServerOptions {
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
  /** How often idle sessions are looked for, ms; default and most min(sessionIdleMs, 60 s); 0: only when `expireIdle()` is called. */
  sweepMs?: number;
  /** The clock idle time is measured on; default `Date.now`. */
  now?: () => number;
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

/** Idle sessions are looked for at least this often, ms. */
const MAX_SWEEP_MS = 60_000;

/** Probes a silent peer's connection after this long, ms, so a vanished client's streams close. */
const TCP_KEEPALIVE_MS = 60_000;

interface Session {
  transport: StreamableHTTPServerTransport;
  server: Server;
  /** Requests of this session not yet answered (an open GET stream counts). */
  open: number;
  /** When the last request arrived or ended. */
  lastActive: number;
}

const LOOPBACK = new Set(["127.0.0.1", "localhost", "::1", "[::1]"]);

function jsonError(res: http.ServerResponse, status: number, code: number, message: string): void {
  res.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify({ jsonrpc: "2.0", id: null, error: { code, message } }));
}

/** Starts a Streamable HTTP endpoint for `gateway`. */
export async function serveHttp(gateway: Gateway, options: HttpOptions = {}): Promise<HttpHandle> {
  const host = options.host ?? "127.0.0.1";
  const path = options.path ?? "/mcp";
  const idleMs = options.sessionIdleMs ?? DEFAULT_SESSION_IDLE_MS;
  if (!(idleMs > 0)) throw new ToolgateError("invalid_input", `sessionIdleMs must be a number of milliseconds greater than 0; received ${String(idleMs)}; e.g. ${DEFAULT_SESSION_IDLE_MS}`);
  const now = options.now ?? Date.now;
  const sessions = new Map<string, Session>();
  /** Expired sessions still closing; `close()` waits for them. */
  const closing = new Set<Promise<void>>();
  let draining = false;
  let allowedHosts: string[] | undefined;

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

  function expireIdle(): Promise<number> {
    const t = now();
    const idle = [...sessions].filter(([, s]) => s.open === 0 && t - s.lastActive >= idleMs);
    // Out of the map before anything awaits: from here a request for it gets 404.
    for (const [id] of idle) sessions.delete(id);
    const done = Promise.all(idle.map(([, s]) => shut(s).catch((err: unknown) => options.onError?.(err as Error)))).then(() => {});
    closing.add(done);
    return done.then(() => {
      closing.delete(done);
      return idle.length;
    });
  }

  async function open(): Promise<Session> {
    const id = randomUUID();
    const server = createMcpServer(gateway, { ...options, sessionId: id });
    const transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => id,
      onsessioninitialized: (sid) => void sessions.set(sid, session),
      onsessionclosed: (sid) => void sessions.delete(sid),
      maxRequestBodySize: options.maxRequestBytes ?? MAX_MESSAGE_BYTES,
      ...(allowedHosts ? { enableDnsRebindingProtection: true, allowedHosts } : {}),
    });
    const session: Session = { transport, server, open: 0, lastActive: now() };
    transport.onclose = () => void sessions.delete(id);
    if (options.onError) server.onerror = options.onError;
    await server.connect(transport);
    return session;
  }

  const listener = http.createServer((req, res) => {
    void (async () => {
      const url = new URL(req.url ?? "/", "http://local");
      if (url.pathname !== path) return jsonError(res, 404, -32601, `not found: the MCP endpoint is ${path}`);
      if (draining) return jsonError(res, 503, -32000, "server is shutting down; reconnect to another instance or retry later with the same call ids");
      const sid = req.headers["mcp-session-id"];
      if (typeof sid === "string") {
        const session = sessions.get(sid);
        if (!session) return jsonError(res, 404, -32001, `Session not found: ${sid} is unknown, expired or closed; start a new session with initialize`);
        track(session, res);
        return session.transport.handleRequest(req, res);
      }
      // No session header: only an initialize may open one; the transport refuses anything else.
      const session = await open();
      track(session, res);
      await session.transport.handleRequest(req, res);
      if (session.transport.sessionId === undefined) await session.server.close();
    })().catch((err: unknown) => {
      options.onError?.(err as Error);
      if (!res.headersSent) jsonError(res, 500, -32603, `internal error: ${(err as Error).message}`);
    });
  });

  listener.on("connection", (socket) => socket.setKeepAlive(true, TCP_KEEPALIVE_MS));
  await new Promise<void>((resolve, reject) => {
    listener.once("error", reject);
    listener.listen(options.port ?? 0, host, () => resolve());
  });
  const sweepMs = Math.min(options.sweepMs ?? idleMs, MAX_SWEEP_MS);
  const sweep = sweepMs > 0 ? setInterval(() => void expireIdle(), sweepMs).unref() : undefined;
  const port = (listener.address() as AddressInfo).port;
  if (LOOPBACK.has(host)) allowedHosts = [`127.0.0.1:${port}`, `localhost:${port}`, `[::1]:${port}`];
  const display = host.includes(":") && !host.startsWith("[") ? `[${host}]` : host;

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
      await Promise.allSettled([...[...sessions.values()].map(shut), ...closing]);
      sessions.clear();
      const stopped = new Promise<void>((resolve) => listener.close(() => resolve()));
      // Idle keep-alive sockets and standalone SSE streams would hold close() open.
      listener.closeAllConnections();
      await stopped;
    },
  };
}
