/**
 * A newline-delimited JSON-RPC transport over a pair of streams (MCP stdio transport). It exists
 * beside the SDK's `StdioServerTransport` for one reason: bad input must not end the session.
 * The SDK's reader skips an unparsable line silently and closes the transport when a message
 * passes its buffer bound; this one answers a malformed line with a JSON-RPC `Parse error`
 * (-32700) or `Invalid Request` (-32600), answers an oversized line with an error naming its
 * request's id and discards it, and keeps serving. Process resources come in as parameters, so tests pass their own
 * streams.
 */
import process from "node:process";
import type { Readable, Writable } from "node:stream";
import { parseJSONRPCMessage, type JSONRPCMessage, type RequestId, type Transport } from "@modelcontextprotocol/server";
import { markParsed } from "../server/parsed.js";
import { peekRequest } from "./line-peek.js";

/** Default bound on one JSON-RPC message, bytes (the SDK's HTTP transport uses the same 4 MiB). */
export const MAX_MESSAGE_BYTES = 4 * 1024 * 1024;
/** Bytes kept of each end of an oversized message, to read its id from. */
const PEEK_BYTES = 64 * 1024;
/** What `send` returns for a line written at once: one settled promise, shared. */
const DONE: Promise<void> = Promise.resolve();

export interface LineTransportOptions {
  /** Bound on one message (one line), bytes. Default 4 MiB. */
  maxMessageBytes?: number;
}

export class LineStdioTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;
  /**
   * Called when the input ends. When set, the transport stays open so answers to requests
   * still in flight reach the client (it may read after closing its end); the owner closes it.
   * When unset, the end of input closes the transport.
   */
  onend?: () => void;

  private chunks: Buffer[] = [];
  private size = 0;
  /** While the rest of an oversized line is thrown away: the bytes kept of its two ends. */
  private oversized: { head: Buffer; tail: Buffer } | null = null;
  private closed = false;
  private started = false;
  private readonly maxBytes: number;

  constructor(
    private readonly input: Readable = process.stdin,
    private readonly output: Writable = process.stdout,
    options: LineTransportOptions = {},
  ) {
    this.maxBytes = options.maxMessageBytes ?? MAX_MESSAGE_BYTES;
  }

  async start(): Promise<void> {
    // Started once: a server connected to an already started transport starts it again.
    if (this.started) return;
    this.started = true;
    this.input.on("data", this.onData);
    this.input.on("end", this.onEnd);
    this.input.on("error", this.onStreamError);
    // A client that hangs up mid-answer makes stdout fail with EPIPE; that must not crash the server.
    this.output.on("error", this.onStreamError);
  }

  private readonly onEnd = () => (this.onend ? this.onend() : void this.close());
  private readonly onStreamError = (error: Error) => this.onerror?.(error);

  private readonly onData = (chunk: Buffer | string) => {
    let rest = typeof chunk === "string" ? Buffer.from(chunk, "utf8") : chunk;
    for (let nl = rest.indexOf(10); nl !== -1; nl = rest.indexOf(10)) {
      const part = rest.subarray(0, nl);
      rest = rest.subarray(nl + 1);
      if (!this.oversized && this.size + part.length > this.maxBytes) this.overflow();
      if (this.oversized) {
        this.keepEnds(part);
        this.tooLarge(this.oversized);
        this.oversized = null;
      }
      // A line that arrived in one chunk is read in place, not copied.
      else this.handleLine(this.chunks.length === 0 ? part : Buffer.concat([...this.chunks, part]));
      this.chunks = [];
      this.size = 0;
    }
    if (rest.length === 0) return;
    if (!this.oversized && this.size + rest.length > this.maxBytes) this.overflow();
    if (this.oversized) return this.keepEnds(rest);
    this.chunks.push(rest);
    this.size += rest.length;
  };

  /**
   * The line outgrew the bound: from here on only its first and last PEEK_BYTES are kept, so its
   * id can still be answered (`line-peek.ts`) when the line ends.
   */
  private overflow(): void {
    this.oversized = { head: Buffer.alloc(0), tail: Buffer.alloc(0) };
    for (const chunk of this.chunks) this.keepEnds(chunk);
    this.chunks = [];
    this.size = 0;
  }

  private keepEnds(bytes: Buffer): void {
    const o = this.oversized!;
    if (o.head.length < PEEK_BYTES) o.head = Buffer.concat([o.head, bytes.subarray(0, PEEK_BYTES - o.head.length)]);
    // A copy: the tail must not hold a multi-megabyte chunk alive.
    o.tail = Buffer.from(
      bytes.length >= PEEK_BYTES
        ? bytes.subarray(bytes.length - PEEK_BYTES)
        : Buffer.concat([o.tail, bytes]).subarray(-PEEK_BYTES),
    );
  }

  /**
   * Answers an oversized message with its own id, so the client's request fails at once instead
   * of at the client's timeout. A `tools/call` is answered as a tool result with `isError`, as
   * every toolgate refusal is, so the model reads what to do; any other request gets a JSON-RPC
   * error; a message whose id cannot be read (or a notification) gets the error with `id: null`.
   */
  private tooLarge({ head, tail }: { head: Buffer; tail: Buffer }): void {
    const { id, method } = peekRequest(head.toString("utf8"), tail.toString("utf8"));
    const text = `The message exceeds ${this.maxBytes} bytes (the limit of one MCP message) and was discarded: nothing ran. Send smaller arguments: put large content in the workspace (write it in parts) and pass its path, or split the work into several calls.`;
    this.onerror?.(
      new Error(
        `a message exceeds ${this.maxBytes} bytes and was discarded (id ${JSON.stringify(id)}, method ${method ?? "unknown"})`,
      ),
    );
    if (id !== null && method === "tools/call") {
      this.write(
        JSON.stringify({ jsonrpc: "2.0", id, result: { content: [{ type: "text", text }], isError: true } }) + "\n",
      );
      return;
    }
    this.reply(id, -32600, `Invalid Request: ${text}`);
  }

  private handleLine(line: Buffer): void {
    const text = line.toString("utf8").replace(/\r$/, "");
    if (text.trim() === "") return;
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch (err) {
      this.reply(null, -32700, `Parse error: the line is not valid JSON (${(err as Error).message})`);
      return;
    }
    let message: JSONRPCMessage;
    try {
      message = parseJSONRPCMessage(json);
    } catch {
      const id = (json as { id?: unknown } | null)?.id;
      const requestId = typeof id === "string" || typeof id === "number" ? id : null;
      this.reply(
        requestId,
        -32600,
        `Invalid Request: not a JSON-RPC 2.0 message; expected {"jsonrpc":"2.0","id":…,"method":"…"}`,
      );
      return;
    }
    // Its kind is known from here on, so the readers after this one need not parse it again.
    markParsed(message);
    this.onmessage?.(message);
  }

  private reply(id: RequestId | null, code: number, message: string): void {
    this.onerror?.(new Error(message));
    this.write(JSON.stringify({ jsonrpc: "2.0", id, error: { code, message } }) + "\n");
  }

  /** Resolves once `line` is handed to the stream, or, when the stream's buffer is full, when it drains. */
  private write(line: string): Promise<void> {
    if (this.closed || this.output.destroyed || !this.output.writable) return DONE;
    try {
      // The usual case, a line the stream took at once, answered without a promise and a closure of its own.
      if (this.output.write(line)) return DONE;
    } catch (err) {
      return Promise.reject(err as Error);
    }
    return new Promise((resolve) => this.output.once("drain", resolve));
  }

  send(message: JSONRPCMessage): Promise<void> {
    return this.write(JSON.stringify(message) + "\n");
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.input.off("data", this.onData);
    this.input.off("end", this.onEnd);
    this.input.off("error", this.onStreamError);
    this.output.off("error", this.onStreamError);
    // A flowing stdin keeps the event loop alive; pause it so a closed server can exit.
    if (this.input.listenerCount("data") === 0) this.input.pause();
    this.chunks = [];
    this.onclose?.();
  }
}
