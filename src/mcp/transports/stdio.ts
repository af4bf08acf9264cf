/**
 * `toolgate serve` over stdio: one MCP session on a pair of streams. Nothing but protocol goes
 * to `stdout`; the caller logs to stderr.
 */
import process from "node:process";
import type { Readable, Writable } from "node:stream";
import type { Server } from "@modelcontextprotocol/sdk/server/index.js";
import type { Gateway } from "../../runtime/types.js";
import { answersSent, createMcpServer, type McpServerOptions } from "../server/server.js";
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
  server: Server;
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
  const server = createMcpServer(gateway, options);
  const transport = new LineStdioTransport(options.stdin ?? process.stdin, options.stdout ?? process.stdout, {
    ...(options.maxMessageBytes !== undefined ? { maxMessageBytes: options.maxMessageBytes } : {}),
  });
  const closed = new Promise<void>((resolve) => {
    server.onclose = () => resolve();
    transport.onend = () => resolve();
  });
  if (options.onError) server.onerror = options.onError;
  await server.connect(transport);
  return {
    server,
    closed,
    async close() {
      await answersSent(server);
      await server.close();
    },
  };
}
