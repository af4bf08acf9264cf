/**
 * The HTTP listener under the MCP endpoint: bounds on connections (in total, `maxConnections`, and
 * per peer, `maxConnectionsPerPeer`: one over it answered 503 and closed before the HTTP parser
 * reads it) and on the time to send a request (`headersTimeoutMs`, `requestTimeoutMs`), TCP
 * keep-alive so a vanished peer's connections close, and every request handed to `route` (an
 * error it throws answered 500 when nothing was sent yet).
 */
import http from "node:http";
import type net from "node:net";
import { peerOf } from "./http-sessions.js";
import {
  DEFAULT_HEADERS_TIMEOUT_MS,
  DEFAULT_MAX_CONNECTIONS,
  DEFAULT_REQUEST_TIMEOUT_MS,
  positive,
  type HttpOptions,
} from "./http-options.js";
import { errorBody, jsonError } from "./http-replies.js";

/** Probes a silent peer's connection after this long, ms, so a vanished client's streams close. */
const TCP_KEEPALIVE_MS = 60_000;

/** Listens on `host` (and `options.port`, default ephemeral) once bound, `perPeer` connections at most from one peer. */
export async function listenHttp(
  options: HttpOptions,
  host: string,
  perPeer: number,
  route: (req: http.IncomingMessage, res: http.ServerResponse) => Promise<void>,
): Promise<http.Server> {
  /** Connections open per peer (`peerOf`), and those refused for being over it. */
  const connections = new Map<string, number>();
  const refused = new WeakSet<net.Socket>();
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
  return listener;
}
