/**
 * `toolgate serve --http`: MCP Streamable HTTP (MCP 2025-11-25 "Transports"). One SDK transport
 * and one MCP server per session, all sharing one Gateway. The SDK transport answers malformed
 * JSON (400 / -32700) and oversized bodies (413) itself; this file owns routing, sessions, the
 * loopback default with DNS-rebinding protection, and a shutdown that drains in-flight calls.
 */
import http from "node:http";
import { randomUUID } from "node:crypto";
import type { AddressInfo } from "node:net";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import type { Server } from "@modelcontextprotocol/sdk/server/index.js";
import type { Gateway } from "../runtime/types.js";
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
  /** Closes every session and the listener. */
  close(): Promise<void>;
}

interface Session {
  transport: StreamableHTTPServerTransport;
  server: Server;
}

const LOOPBACK = new Set(["127.0.0.1", "localhost", "::1", "[::1]"]);

function jsonError(res: http.ServerResponse, status: number, code: number, message: string): void {
  res.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify({ jsonrpc: "2.0", id: null, error: { code, message } }));
}

/** Starts a Streamable HTTP endpoint for `gateway`. */
export async function serveHttp(gateway: Gateway, options: HttpOptions = {}): Promise<HttpHandle> {
  const host = options.host ?? "127.0.0.1";
  const path = options.path ?? "/mcp";
  const sessions = new Map<string, Session>();
  let draining = false;
  let allowedHosts: string[] | undefined;

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
    const session = { transport, server };
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
        if (!session) return jsonError(res, 404, -32001, `Session not found: ${sid} is unknown or closed; start a new session with initialize`);
        return session.transport.handleRequest(req, res);
      }
      // No session header: only an initialize may open one; the transport refuses anything else.
      const session = await open();
      await session.transport.handleRequest(req, res);
      if (session.transport.sessionId === undefined) await session.server.close();
    })().catch((err: unknown) => {
      options.onError?.(err as Error);
      if (!res.headersSent) jsonError(res, 500, -32603, `internal error: ${(err as Error).message}`);
    });
  });

  await new Promise<void>((resolve, reject) => {
    listener.once("error", reject);
    listener.listen(options.port ?? 0, host, () => resolve());
  });
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
    async close() {
      draining = true;
      await Promise.allSettled([...sessions.values()].map(async (s) => {
        await answersSent(s.server);
        await s.server.close();
      }));
      sessions.clear();
      const stopped = new Promise<void>((resolve) => listener.close(() => resolve()));
      // Idle keep-alive sockets and standalone SSE streams would hold close() open.
      listener.closeAllConnections();
      await stopped;
    },
  };
}
