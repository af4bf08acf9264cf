/**
 * The lines a stdio upstream writes, read into JSON-RPC messages in place of the SDK stdio client
 * transport's own reader (its `ReadBuffer`), with the same contract: newline-delimited, a trailing
 * `\r` dropped, a line that is not JSON skipped, any other message parsed by the SDK's
 * `JSONRPCMessageSchema` (a message that fails it is the transport's error, as there), the whole
 * buffer bounded by the SDK's 10 MiB. One kind of line is read more cheaply: the answer to a direct
 * call (`upstream-call.ts`, its string ids): its envelope is checked here by hand (`isDirectAnswer`:
 * exactly the keys jsonrpc "2.0", the id, a plain-object result), and `ProxyClient` hands it to the
 * call it answers without the SDK client's dispatch, which would parse the envelope with zod once
 * more; its result is checked by the direct call's schema. The SDK's reader parsed each such line
 * with zod one time more, and copied every chunk that arrived after a whole line (an empty rest is
 * still a buffer).
 *
 * Installed on the SDK's own `StdioClientTransport` (`upstream.ts`): a subclass of it would lose the
 * SDK's disposable sibling for the revision probe.
 */
import { parseJSONRPCMessage, STDIO_DEFAULT_MAX_BUFFER_SIZE, type JSONRPCMessage } from "@modelcontextprotocol/client";
import { isDirectAnswer } from "./upstream-call.js";

export class UpstreamLines {
  private buffer: Buffer | undefined;

  constructor(private readonly maxBytes: number = STDIO_DEFAULT_MAX_BUFFER_SIZE) {}

  append(chunk: Buffer): void {
    const held = this.buffer?.length ?? 0;
    if (held + chunk.length > this.maxBytes) {
      this.clear();
      throw new Error(`ReadBuffer exceeded maximum size of ${this.maxBytes} bytes`);
    }
    this.buffer = held === 0 ? chunk : Buffer.concat([this.buffer!, chunk]);
  }

  readMessage(): JSONRPCMessage | null {
    while (this.buffer) {
      const index = this.buffer.indexOf(10);
      if (index === -1) return null;
      const end = index > 0 && this.buffer[index - 1] === 13 ? index - 1 : index;
      const line = this.buffer.toString("utf8", 0, end);
      this.buffer = index + 1 === this.buffer.length ? undefined : this.buffer.subarray(index + 1);
      let value: unknown;
      try {
        value = JSON.parse(line);
      } catch {
        continue;
      }
      return isDirectAnswer(value) ? value : parseJSONRPCMessage(value);
    }
    return null;
  }

  clear(): void {
    this.buffer = undefined;
  }
}
