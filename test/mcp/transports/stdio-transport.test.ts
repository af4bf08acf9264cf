import { PassThrough, Writable } from "node:stream";
import { describe, expect, it } from "vitest";
import { JSONRPCMessageSchema, type JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";
import { LineStdioTransport } from "../../../src/mcp/transports/stdio-transport.js";
import { parsedKind } from "../../../src/mcp/server/parsed.js";

function harness(maxMessageBytes?: number) {
  const input = new PassThrough();
  const output = new PassThrough();
  const transport = new LineStdioTransport(input, output, maxMessageBytes === undefined ? {} : { maxMessageBytes });
  const received: JSONRPCMessage[] = [];
  const replies: unknown[] = [];
  transport.onmessage = (m) => received.push(m);
  let buffered = "";
  output.on("data", (chunk: Buffer) => {
    buffered += chunk.toString("utf8");
    let nl;
    while ((nl = buffered.indexOf("\n")) !== -1) {
      replies.push(JSON.parse(buffered.slice(0, nl)));
      buffered = buffered.slice(nl + 1);
    }
  });
  const flush = () => new Promise((r) => setImmediate(r));
  return { input, transport, received, replies, flush };
}

const ping = (id: number) => JSON.stringify({ jsonrpc: "2.0", id, method: "ping" });

describe("LineStdioTransport", () => {
  it("delivers messages split across chunks and several per chunk", async () => {
    const h = harness();
    await h.transport.start();
    const two = `${ping(1)}\n${ping(2)}\n`;
    h.input.write(two.slice(0, 10));
    h.input.write(two.slice(10));
    await h.flush();
    expect(h.received.map((m) => (m as { id: number }).id)).toEqual([1, 2]);
    expect(h.replies).toEqual([]);
  });

  it("answers a line that is not JSON with a parse error and keeps serving", async () => {
    const h = harness();
    await h.transport.start();
    h.input.write(`{"jsonrpc": "2.0", "id": 1,\n${ping(2)}\n`);
    await h.flush();
    expect(h.replies).toMatchInlineSnapshot(`
      [
        {
          "error": {
            "code": -32700,
            "message": "Parse error: the line is not valid JSON (Expected double-quoted property name in JSON at position 27)",
          },
          "id": null,
          "jsonrpc": "2.0",
        },
      ]
    `);
    expect(h.received).toHaveLength(1);
  });

  it("answers JSON that is not JSON-RPC with Invalid Request, echoing a usable id", async () => {
    const h = harness();
    await h.transport.start();
    h.input.write(`{"id": 7, "method": 12}\n[1,2]\n${ping(3)}\n`);
    await h.flush();
    expect(h.replies).toMatchInlineSnapshot(`
      [
        {
          "error": {
            "code": -32600,
            "message": "Invalid Request: not a JSON-RPC 2.0 message; expected {"jsonrpc":"2.0","id":…,"method":"…"}",
          },
          "id": 7,
          "jsonrpc": "2.0",
        },
        {
          "error": {
            "code": -32600,
            "message": "Invalid Request: not a JSON-RPC 2.0 message; expected {"jsonrpc":"2.0","id":…,"method":"…"}",
          },
          "id": null,
          "jsonrpc": "2.0",
        },
      ]
    `);
    expect(h.received).toHaveLength(1);
  });

  it("discards an oversized message, whether it arrives in one chunk or many, answers its id and keeps serving", async () => {
    const h = harness(100);
    await h.transport.start();
    const big = JSON.stringify({ jsonrpc: "2.0", id: 9, method: "tools/list", params: { x: "a".repeat(300) } });
    h.input.write(big.slice(0, 50));
    h.input.write(big.slice(50, 150));
    h.input.write(big.slice(150) + "\n");
    h.input.write(big + "\n" + ping(4) + "\n");
    await h.flush();
    expect(h.replies).toHaveLength(2);
    expect(h.replies[1]).toEqual(h.replies[0]);
    expect(h.replies[0]).toMatchInlineSnapshot(`
      {
        "error": {
          "code": -32600,
          "message": "Invalid Request: The message exceeds 100 bytes (the limit of one MCP message) and was discarded: nothing ran. Send smaller arguments: put large content in the workspace (write it in parts) and pass its path, or split the work into several calls.",
        },
        "id": 9,
        "jsonrpc": "2.0",
      }
    `);
    expect(h.received.map((m) => (m as { id: number }).id)).toEqual([4]);
  });

  it("answers an oversized tools/call with a tool result the model reads, its id read from the end where the TypeScript SDK writes it", async () => {
    const h = harness(1000);
    await h.transport.start();
    // The SDK's own serialization: {...request, jsonrpc, id} puts the id last, after the arguments.
    const sdkShaped = JSON.stringify({
      method: "tools/call",
      params: { name: "file_edit", arguments: { new_str: '"id": 1, '.repeat(40_000) } },
      jsonrpc: "2.0",
      id: 41,
    });
    for (let i = 0; i < sdkShaped.length; i += 65_536) h.input.write(sdkShaped.slice(i, i + 65_536));
    h.input.write("\n" + ping(5) + "\n");
    await h.flush();
    expect(h.replies).toEqual([
      {
        jsonrpc: "2.0",
        id: 41,
        result: { isError: true, content: [{ type: "text", text: expect.stringContaining("Send smaller arguments") }] },
      },
    ]);
    expect(h.received.map((m) => (m as { id: number }).id)).toEqual([5]);
  });

  it("reads the id at the head where the Python SDK writes it; a string id is answered as a string, an unreadable one as null", async () => {
    const h = harness(200);
    await h.transport.start();
    const pyShaped = `{"jsonrpc":"2.0","id":"req-7","method":"tools/call","params":{"name":"x","arguments":{"s":"${"b".repeat(500)}"}}}`;
    const noId = JSON.stringify({ jsonrpc: "2.0", method: "notifications/message", params: { s: "c".repeat(500) } });
    h.input.write(`${pyShaped}\n${noId}\n`);
    await h.flush();
    expect(h.replies.map((r) => (r as { id: unknown }).id)).toEqual(["req-7", null]);
    expect((h.replies[0] as { result: { isError: boolean } }).result.isError).toBe(true);
  });

  it("delivers every message exactly as the SDK's JSON-RPC schema reads it, and refuses what it refuses", async () => {
    const h = harness();
    await h.transport.start();
    const lines = [
      {
        jsonrpc: "2.0",
        id: 1,
        method: "tools/call",
        params: { name: "t", arguments: { a: [1, { b: null }] }, _meta: { "toolgate/call_id": "c1" } },
      },
      { jsonrpc: "2.0", id: "s-2", method: "ping" },
      { jsonrpc: "2.0", id: 3, method: "tools/call", params: { name: "t", _meta: { progressToken: 7 } } },
      {
        jsonrpc: "2.0",
        id: 4,
        method: "tools/call",
        params: { _meta: { "io.modelcontextprotocol/related-task": { taskId: "x" } } },
      },
      { jsonrpc: "2.0", method: "notifications/initialized" },
      { jsonrpc: "2.0", id: 5, result: { ok: true } },
      { jsonrpc: "2.0", id: 6, error: { code: -1, message: "no" } },
      // Refused: an unknown envelope key, a fractional id, params that are not an object, a
      // progress token of the wrong type, the wrong version.
      { jsonrpc: "2.0", id: 7, method: "ping", extra: 1 },
      { jsonrpc: "2.0", id: 8.5, method: "ping" },
      { jsonrpc: "2.0", id: 9, method: "ping", params: [1] },
      { jsonrpc: "2.0", id: 10, method: "ping", params: { _meta: { progressToken: true } } },
      { jsonrpc: "1.0", id: 11, method: "ping" },
    ];
    h.input.write(lines.map((l) => JSON.stringify(l)).join("\r\n") + "\n");
    await h.flush();
    const accepted = lines.flatMap((l) => {
      const r = JSONRPCMessageSchema.safeParse(l);
      return r.success ? [r.data] : [];
    });
    expect(accepted).toHaveLength(7);
    expect(h.received).toEqual(accepted);
    expect(h.replies.map((r) => (r as { id: unknown; error: { code: number } }).id)).toEqual([7, 8.5, 9, 10, 11]);
  });

  it("marks each message it delivers parsed, with its kind; a copy of one, or any other value, has none", async () => {
    const h = harness();
    await h.transport.start();
    const lines = [
      { jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "t" } },
      { jsonrpc: "2.0", id: "1", method: "ping" },
      { jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: 1 } },
      { jsonrpc: "2.0", id: 5, result: { ok: true } },
      { jsonrpc: "2.0", id: 6, error: { code: -1, message: "no" } },
      { jsonrpc: "2.0", error: { code: -32700, message: "no id" } },
    ];
    h.input.write(lines.map((l) => JSON.stringify(l)).join("\n") + "\n");
    await h.flush();
    expect(h.received.map(parsedKind)).toEqual([
      "request",
      "request",
      "notification",
      "response",
      "response",
      "response",
    ]);
    expect(h.received.map((m) => parsedKind(structuredClone(m)))).toEqual(lines.map(() => undefined));
    expect([null, 1, "x", lines[0]].map(parsedKind)).toEqual([undefined, undefined, undefined, undefined]);
  });

  it("sends a line the stream takes at once, waits for the drain of one it buffers, and writes nothing once closed", async () => {
    // A sink that holds each write until released, its buffer full after one line.
    const held: Array<() => void> = [];
    const lines: string[] = [];
    const output = new Writable({
      highWaterMark: 1,
      write(chunk: Buffer, _encoding, done) {
        lines.push(chunk.toString("utf8"));
        held.push(done);
      },
    });
    const roomy = new PassThrough();
    const taken: string[] = [];
    roomy.on("data", (chunk: Buffer) => taken.push(chunk.toString("utf8")));
    const quick = new LineStdioTransport(new PassThrough(), roomy);
    await quick.start();
    await quick.send({ jsonrpc: "2.0", id: 1, result: {} });
    expect(taken).toEqual(['{"jsonrpc":"2.0","id":1,"result":{}}\n']);

    const slow = new LineStdioTransport(new PassThrough(), output);
    await slow.start();
    let sent = false;
    const sending = slow.send({ jsonrpc: "2.0", id: 2, result: {} }).then(() => (sent = true));
    await new Promise((r) => setImmediate(r));
    expect([lines, sent]).toEqual([['{"jsonrpc":"2.0","id":2,"result":{}}\n'], false]);
    held.shift()!();
    await sending;
    expect(sent).toBe(true);

    await slow.close();
    await slow.send({ jsonrpc: "2.0", id: 3, result: {} });
    expect(lines).toHaveLength(1);
  });

  it("closes when the input ends, once", async () => {
    const h = harness();
    let closes = 0;
    h.transport.onclose = () => closes++;
    await h.transport.start();
    h.input.end();
    await h.flush();
    await h.transport.close();
    expect(closes).toBe(1);
  });
});
