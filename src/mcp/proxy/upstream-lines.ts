/**
 * The lines a stdio upstream writes, read into JSON-RPC messages in place of the SDK stdio client
 * transport's own reader (its `ReadBuffer`), with the same contract: newline-delimited, a trailing
 * `\r` dropped, a line that is not JSON skipped, any other message parsed by the SDK's
 * `JSONRPCMessageSchema` (a message that fails it is the transport's error, as there, but for an
 * answer to a direct call, which that call gets as an error saying what arrived: `refusedAnswer`), the whole
 * buffer bounded by the SDK's 10 MiB. One kind of line is read more cheaply: the answer to a direct
 * call (`upstream-call.ts`, its string ids): its envelope is checked here by hand (`isDirectAnswer`:
 * exactly the keys jsonrpc "2.0", the id, a plain-object result), and `ProxyClient` hands it to the
 * call it answers without the SDK client's dispatch, which would parse the envelope with zod once
 * more; its result is checked by the direct call's schema. The SDK's reader parsed each such line
 * with zod one time more, copied every chunk that arrived after a whole line (an empty rest is
 * still a buffer), and copied and searched all it held again at each chunk of a line not yet ended
 * (quadratic: an upstream writing a long line slowly held the proxy's CPU); here a line's bytes are
 * copied and searched about once, however they are chunked.
 *
 * Installed on the SDK's own `StdioClientTransport` (`upstream.ts`): a subclass of it would lose the
 * SDK's disposable sibling for the revision probe.
 */
import {
  parseJSONRPCMessage,
  STDIO_DEFAULT_MAX_BUFFER_SIZE,
  type JSONRPCErrorResponse,
  type JSONRPCMessage,
} from "@modelcontextprotocol/client";
import { DIRECT_ID_PREFIX, isDirectAnswer } from "./upstream-call.js";

export class UpstreamLines {
  /** The bytes of a line not yet ended, as they came: none holds a newline, so none is searched again. */
  private parts: Buffer[] = [];
  private partBytes = 0;
  /** The bytes from the first line's end on, not yet read. */
  private ready: Buffer | undefined;

  constructor(private readonly maxBytes: number = STDIO_DEFAULT_MAX_BUFFER_SIZE) {}

  /**
   * Takes a chunk. The bytes of a line are copied once, when it ends, and searched for its end once: a line that
   * came in many small chunks (an upstream writing slowly) was copied and searched whole again at each one, so a
   * line of 9 MiB in 1 KiB chunks cost the proxy 22 s of CPU.
   */
  append(chunk: Buffer): void {
    const held = this.partBytes + (this.ready?.length ?? 0);
    if (held + chunk.length > this.maxBytes) {
      this.clear();
      throw new Error(`ReadBuffer exceeded maximum size of ${this.maxBytes} bytes`);
    }
    if (this.ready !== undefined) this.ready = Buffer.concat([this.ready, chunk]);
    else if (chunk.indexOf(10) === -1) {
      this.parts.push(chunk);
      this.partBytes += chunk.length;
    } else {
      this.ready = this.parts.length === 0 ? chunk : Buffer.concat([...this.parts, chunk]);
      this.parts = [];
      this.partBytes = 0;
    }
  }

  readMessage(): JSONRPCMessage | null {
    while (this.ready) {
      const index = this.ready.indexOf(10);
      if (index === -1) {
        // The rest is the start of a line: kept as a part, never searched again.
        this.parts = [this.ready];
        this.partBytes = this.ready.length;
        this.ready = undefined;
        return null;
      }
      const end = index > 0 && this.ready[index - 1] === 13 ? index - 1 : index;
      const line = this.ready.toString("utf8", 0, end);
      this.ready = index + 1 === this.ready.length ? undefined : this.ready.subarray(index + 1);
      let value: unknown;
      try {
        value = JSON.parse(line);
      } catch {
        continue;
      }
      if (isDirectAnswer(value)) return value;
      try {
        return parseJSONRPCMessage(value);
      } catch (error) {
        const refused = refusedAnswer(value);
        if (refused === undefined) throw error;
        return refused;
      }
    }
    return null;
  }

  clear(): void {
    this.parts = [];
    this.partBytes = 0;
    this.ready = undefined;
  }
}

/**
 * The error a direct call gets for an answer of the upstream's that the schema refuses (a result and an error
 * together, a `_meta` that is no object…): its own id, so the call fails at once saying what arrived, where the
 * SDK's reader dropped the answer and the call waited out its whole bound, told to raise it. Undefined for any other
 * message (the transport's error, as there).
 */
function refusedAnswer(value: unknown): JSONRPCErrorResponse | undefined {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return undefined;
  const { id, method } = value as { id?: unknown; method?: unknown };
  if (typeof id !== "string" || !id.startsWith(DIRECT_ID_PREFIX) || method !== undefined) return undefined;
  const members = Object.keys(value)
    .slice(0, 8)
    .map((key) => JSON.stringify(key.slice(0, 40)));
  return {
    jsonrpc: "2.0",
    id,
    error: {
      code: -32603,
      message: `its answer to tools/call is no JSON-RPC response: it has the members ${members.join(", ")}; a response has jsonrpc "2.0", the request's id and exactly one of result (an object, its _meta an object if any) and error ({code, message}): the upstream MCP server needs fixing`,
    },
  };
}
