/**
 * `toolgate serve` over stdio: one MCP connection on a pair of streams, in either protocol
 * revision, read from the opening message. A 2025-11-25 `initialize` (one that claims no
 * revision in `_meta`) pins the connection to that revision for good, so its server is connected
 * to the line transport directly, as the SDK's own `connect` does; the SDK's `serveStdio` entry
 * would deliver each later message through a queue and a channel that check its shape again, for
 * nothing. Any other opening (`server/discover`, a request with the 2026-07-28 `_meta`
 * envelope, an initialize claiming a revision) goes to that entry, which decides. Either way one
 * server from `createMcpServer` serves the connection. The transport under it is toolgate's own
 * line transport, which answers bad input instead of ending the session. Between the two, a
 * 2026-07-28 `subscriptions/listen` is served as over HTTP (`stdio-listen.ts`: its `taskIds`, its
 * upstream resource subscriptions, at most `maxListensPerClient` open, each ended gracefully after
 * `maxListenMs`). Nothing but protocol goes to `stdout`; the
 * caller logs to stderr.
 */
import process from "node:process";
import type { Readable, Writable } from "node:stream";
import {
  PROTOCOL_VERSION_META_KEY,
  type JSONRPCMessage,
  type Server,
  type Transport,
  type TransportSendOptions,
} from "@modelcontextprotocol/server";
import { serveStdio as serveEras } from "@modelcontextprotocol/server/stdio";
import { isPlainObject } from "../../core/json.js";
import type { Gateway } from "../../runtime/types.js";
import {
  announceListChanges,
  answersSent,
  createMcpServer,
  serverInfoOf,
  sessionPrincipal,
  taskDetailOf,
  type McpServerOptions,
} from "../server/server.js";
import type { ListenOptions } from "./listen-hold.js";
import { StdioListens } from "./stdio-listen.js";
import { LineStdioTransport } from "./stdio-transport.js";

export interface StdioOptions extends McpServerOptions, ListenOptions {
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

/**
 * A 2025-11-25 opening: an `initialize` request whose params claim no revision (no
 * `_meta["io.modelcontextprotocol/protocolVersion"]`), which the SDK's entry pins to that revision.
 */
function opensLegacy(message: JSONRPCMessage): boolean {
  const m = message as { id?: unknown; method?: unknown; params?: unknown };
  if (m.method !== "initialize" || m.id === undefined) return false;
  const meta = isPlainObject(m.params) ? m.params._meta : undefined;
  return !isPlainObject(meta) || !(PROTOCOL_VERSION_META_KEY in meta);
}

/**
 * The line transport as the SDK's entry sees it when it gets the connection: already started,
 * with the opening message (read before the entry existed) delivered first when the entry starts
 * it, and `subscriptions/listen` served as toolgate serves it (`stdio-listen.ts`) on both sides.
 * While a listen's resources are being subscribed, the messages read after it wait, in order.
 */
class Handover implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;
  /** The last inbound message still waiting to be passed on, if any. */
  private tail: Promise<void> | null = null;

  constructor(
    private readonly wire: LineStdioTransport,
    private readonly opening: JSONRPCMessage,
    private readonly listens: StdioListens,
  ) {}

  /** Hands the entry a message of toolgate's own (a listen it ended, as cancelled), after those read before it. */
  inject(message: JSONRPCMessage): void {
    this.deliver(message);
  }

  async start(): Promise<void> {
    this.wire.onmessage = (message) => this.deliver(message);
    this.wire.onerror = (error) => this.onerror?.(error);
    this.wire.onclose = () => this.onclose?.();
    this.deliver(this.opening);
  }

  private deliver(message: JSONRPCMessage): void {
    const passing = this.tail ? this.tail.then(() => this.pass(message)) : this.pass(message);
    if (!passing) return;
    this.tail = passing;
    void passing.then(() => {
      if (this.tail === passing) this.tail = null;
    });
  }

  private pass(message: JSONRPCMessage): Promise<void> | undefined {
    const passed = this.listens.inbound(message);
    if (!(passed instanceof Promise)) {
      if (passed) this.onmessage?.(passed);
      return undefined;
    }
    return passed.then(
      (m) => void (m && this.onmessage?.(m)),
      (err: unknown) => this.onerror?.(err as Error),
    );
  }

  send(message: JSONRPCMessage, _options?: TransportSendOptions): Promise<void> {
    return this.listens.send(message);
  }

  close(): Promise<void> {
    return this.wire.close();
  }
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
  const stopAnnouncing = announceListChanges(() => server, options);
  const build = () => {
    server = createMcpServer(gateway, options);
    if (options.onError) server.onerror = options.onError;
    return server;
  };
  let serving: { close(): Promise<void> } | undefined;
  const onError = options.onError;
  let handover: Handover | undefined;
  const listens = new StdioListens({
    send: (message) => transport.send(message),
    serverInfo: serverInfoOf(options),
    ...(options.maxListensPerClient !== undefined ? { maxListens: options.maxListensPerClient } : {}),
    ...(options.maxListenMs !== undefined ? { maxListenMs: options.maxListenMs } : {}),
    forget: (message) => handover?.inject(message),
    subscriptions: options.passThrough?.resources?.subscriptions,
    gate: { gateway, ...(options.passThrough?.audit ? { audit: options.passThrough.audit } : {}) },
    caller: { capability: options.capability, principal: sessionPrincipal(options), http: false },
    updated: (uri) => void server?.sendResourceUpdated({ uri }).catch((err: unknown) => onError?.(err as Error)),
    tasks: options.tasks && {
      runner: options.tasks,
      owner: sessionPrincipal(options),
      detail: (t, elicit) => {
        const detail = server && taskDetailOf(server);
        if (!detail) throw new Error("no server serves this connection yet");
        return detail(t, elicit);
      },
      approveVia: options.approveVia,
      ...(onError ? { onError } : {}),
    },
  });
  // Bad lines before the opening message are told to the caller; after it, the server hears them.
  transport.onerror = options.onError;
  transport.onmessage = (opening) => {
    transport.onmessage = transport.onerror = undefined;
    if (opensLegacy(opening)) {
      const direct = build();
      // connect sets the server's handlers before it awaits anything: the opening goes to them
      // at once, ahead of any line read after it.
      void direct.connect(transport).catch((err: unknown) => options.onError?.(err as Error));
      (transport.onmessage as Transport["onmessage"])?.(opening);
      serving = direct;
      return;
    }
    handover = new Handover(transport, opening, listens);
    serving = serveEras(build, {
      transport: handover,
      ...(options.onError ? { onerror: options.onError } : {}),
    });
  };
  await transport.start();
  return {
    get server() {
      return server;
    },
    closed,
    async close() {
      stopAnnouncing();
      if (server) await answersSent(server);
      await serving?.close();
      listens.closeAll();
      await transport.close();
      resolveClosed();
    },
  };
}
