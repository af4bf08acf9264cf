/**
 * A newline-delimited JSON-RPC transport over a pair of streams (MCP stdio transport). It exists
 * beside the SDK's `StdioServerTransport` for one reason: bad input must not end the session.
 * The SDK's reader skips an unparsable line silently and closes the transport when a message
 * passes its buffer bound; this one answers a malformed line with a JSON-RPC `Parse error`
 * (-32700) or `Invalid Request` (-32600), answers an oversized line with an error and discards
 * it, and keeps serving. Process resources come in as parameters, so tests pass their own streams.
 */
import process from "node:process";
import type { Readable, Writable } from "node:stream";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import { JSONRPCMessageSchema, type JSONRPCMessage, type RequestId } from "@modelcontextprotocol/sdk/types.js";

/** Default bound on one JSON-RPC message, bytes (the SDK's HTTP transport uses the same 4 MiB). */
export const MAX_MESSAGE_BYTES = 4 * 1024 * 1024;

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
  /** True while the rest of an oversized line is being thrown away. */
  private discarding = false;
  private closed = false;
  private readonly maxBytes: number;

  constructor(
    private readonly input: Readable = process.stdin,
    private readonly output: Writable = process.stdout,
    options: LineTransportOptions = {},
  ) {
    this.maxBytes = options.maxMessageBytes ?? MAX_MESSAGE_BYTES;
  }

  async start(): Promise<void> {
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
      const head = rest.subarray(0, nl);
      rest = rest.subarray(nl + 1);
      if (this.discarding) this.discarding = false;
      else if (this.size + head.length > this.maxBytes) this.tooLarge();
      // A line that arrived in one chunk is read in place, not copied.
      else this.handleLine(this.chunks.length === 0 ? head : Buffer.concat([...this.chunks, head]));
      this.chunks = [];
      this.size = 0;
    }
    if (rest.length === 0 || this.discarding) return;
    if (this.size + rest.length > this.maxBytes) {
      this.tooLarge();
      this.discarding = true;
      this.chunks = [];
      this.size = 0;
      return;
    }
    this.chunks.push(rest);
    this.size += rest.length;
  };

  private tooLarge(): void {
    this.reply(null, -32600, `Invalid Request: a message exceeds ${this.maxBytes} bytes and was discarded; send smaller arguments (large content belongs in the workspace, not in one call)`);
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
    const parsed = JSONRPCMessageSchema.safeParse(json);
    if (!parsed.success) {
      const id = (json as { id?: unknown } | null)?.id;
      const requestId = typeof id === "string" || typeof id === "number" ? id : null;
      this.reply(requestId, -32600, `Invalid Request: not a JSON-RPC 2.0 message; expected {"jsonrpc":"2.0","id":…,"method":"…"}`);
      return;
    }
    this.onmessage?.(parsed.data);
  }

  private reply(id: RequestId | null, code: number, message: string): void {
    this.onerror?.(new Error(message));
    this.write(JSON.stringify({ jsonrpc: "2.0", id, error: { code, message } }) + "\n");
  }

  private write(line: string): Promise<void> {
    return new Promise((resolve) => {
      if (this.closed || this.output.destroyed || !this.output.writable) return resolve();
      if (this.output.write(line)) resolve();
      else this.output.once("drain", resolve);
    });
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
