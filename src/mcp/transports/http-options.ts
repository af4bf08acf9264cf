/**
 * What `serveHttp` (`http.ts`) is given and gives back: its options with their defaults, the
 * handle it returns, and `positive`, the check every count and duration option passes through
 * (a bad value refused at start, naming the option and an example).
 */
import type http from "node:http";
import { ToolgateError } from "../../core/errors.js";
import type { McpServerOptions } from "../server/server.js";
import type { ListenOptions } from "./listen-hold.js";

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
export const DEFAULT_MAX_CONNECTIONS = 1024;
export const DEFAULT_MAX_CONNECTIONS_PER_PEER = 128;
export const DEFAULT_HEADERS_TIMEOUT_MS = 10_000;
export const DEFAULT_REQUEST_TIMEOUT_MS = 60_000;

export function positive(name: string, value: number | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  if (!Number.isSafeInteger(value) || value < 1)
    throw new ToolgateError(
      "invalid_input",
      `${name} must be a whole number of at least 1; received ${String(value)}; e.g. ${fallback}`,
    );
  return value;
}
