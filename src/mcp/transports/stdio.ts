/**
 * `toolgate serve` over stdio: one MCP connection on a pair of streams, in either protocol
 * revision. The SDK's `serveStdio` entry reads the opening message: a 2025-11-25 `initialize`
 * pins the connection to that revision, a 2026-07-28 request (`server/discover`, or any request
 * with the `_meta` envelope) to the new one; either way one server from `createMcpServer` serves
 * the connection. The transport under it is toolgate's own line transport, which answers bad
 * input instead of ending the session. Nothing but protocol goes to `stdout`; the caller logs to stderr.
 */
import process from "node:process";
import type { Readable, Writable } from "node:stream";
import type { Server } from "@modelcontextprotocol/server";
import { serveStdio as serveEras } from "@modelcontextprotocol/server/stdio";
import type { Gateway } from "../../runtime/types.js";
import { announceToolChanges, answersSent, createMcpServer, type McpServerOptions } from "../server/server.js";
import { LineStdioTransport } from "./stdio-transport.js";

export interface StdioOptions extends McpServerOptions {
  /** Default `process.stdin`. */
  stdin?: Readable;
  /** Default `process.stdout`. */
  stdout?: Writable;
  /** Bound on one JSON-RPC message, bytes; default 4 MiB. */
  maxMessageBytes?: number;
  /** Told about malformed input and transport errors (the session keeps serving). */
  onError?: (error: Error) => void;
}

export interface StdioHandle {
  /** The server serving the connection; undefined until the client's first message chose a revision. */
  readonly server: Server | undefined;
  /**
   * Resolves when the client closes stdin or `close()` is called. After stdin ends the session
   * still answers calls in flight; call `close()` once they are done (e.g. after `gateway.close`).
   */
  closed: Promise<void>;
  /** Sends the answers still being prepared, then closes the session; the gateway stays open (close it with
   * `gateway.close`). */
  close(): Promise<void>;
}

/** Serves `gateway` over stdio until stdin ends. */
export async function serveStdio(gateway: Gateway, options: StdioOptions = {}): Promise<StdioHandle> {
  const transport = new LineStdioTransport(options.stdin ?? process.stdin, options.stdout ?? process.stdout, {
    ...(options.maxMessageBytes !== undefined ? { maxMessageBytes: options.maxMessageBytes } : {}),
  });
  let resolveClosed = () => {};
  const closed = new Promise<void>((resolve) => (resolveClosed = resolve));
  transport.onend = () => resolveClosed();
  // The entry may build a second server to answer a server/discover probe that a 2025-11-25
  // client follows with initialize; the last one built is the one serving the connection.
  let server: Server | undefined;
  const stopAnnouncing = announceToolChanges(() => server, options.toolsChanged);
  const handle = serveEras(
    () => {
      server = createMcpServer(gateway, options);
      if (options.onError) server.onerror = options.onError;
      return server;
    },
    { transport, ...(options.onError ? { onerror: options.onError } : {}) },
  );
  return {
    get server() {
      return server;
    },
    closed,
    async close() {
      stopAnnouncing();
      if (server) await answersSent(server);
      await handle.close();
      resolveClosed();
    },
  };
}
