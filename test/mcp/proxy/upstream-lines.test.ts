/**
 * The reader of a stdio upstream's lines (`src/mcp/proxy/upstream-lines.ts`): the SDK stdio reader's
 * contract (lines over any chunking, `\r\n`, a line that is not JSON skipped, every other message
 * through the SDK's JSON-RPC schema, the 10 MiB bound), a direct call's answer read by hand only
 * when its envelope is exactly what that schema accepts, and one the schema refuses read as that call's error.
 */
import { describe, expect, it, vi } from "vitest";
import { connectUpstream } from "../../../src/mcp/proxy/upstream.js";
import { UpstreamLines } from "../../../src/mcp/proxy/upstream-lines.js";
import { fileURLToPath } from "node:url";

const lines = (...chunks: string[]) => {
  const reader = new UpstreamLines(1024);
  const read: unknown[] = [];
  for (const chunk of chunks) {
    reader.append(Buffer.from(chunk, "utf8"));
    for (let m = reader.readMessage(); m !== null; m = reader.readMessage()) read.push(m);
  }
  return read;
};

const answer = { jsonrpc: "2.0", id: "toolgate:7", result: { content: [{ type: "text", text: "é" }] } };

describe("an upstream's lines", () => {
  it("reads messages over any chunking, with \\r\\n, skipping a line that is not JSON", () => {
    const text = `${JSON.stringify(answer)}\r\nnot json\n{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"x"}}\n`;
    const expected = [
      answer,
      { jsonrpc: "2.0", method: "notifications/message", params: { level: "info", data: "x" } },
    ];
    expect(lines(text)).toEqual(expected);
    const bytes = Buffer.from(text, "utf8");
    const reader = new UpstreamLines();
    const read: unknown[] = [];
    // One byte at a time: a line's end, and a two-byte character, split across chunks.
    for (const byte of bytes) {
      reader.append(Buffer.from([byte]));
      for (let m = reader.readMessage(); m !== null; m = reader.readMessage()) read.push(m);
    }
    expect(read).toEqual(expected);
  });

  it("puts every message but a direct call's plain answer through the SDK's schema", () => {
    // An extra key, a numeric id, a result that is not an object: the SDK's strict schema decides.
    expect(lines(`${JSON.stringify({ ...answer, id: 7 })}\n`)).toEqual([{ ...answer, id: 7 }]);
    expect(() => lines(`{"jsonrpc":"2.0","id":1.5,"result":{}}\n`)).toThrow();
    expect(() => lines(`{"jsonrpc":"2.0","id":7,"result":{},"error":{"code":1,"message":"x"}}\n`)).toThrow();
    const meta = { ...answer, result: { content: [], _meta: { note: 1 } } };
    expect(lines(`${JSON.stringify(meta)}\n`)).toEqual([meta]);
    // A request of the upstream's under a direct call's id is the schema's too.
    expect(() => lines(`{"jsonrpc":"2.0","id":"toolgate:7","method":5}\n`)).toThrow();
  });

  it("reads an answer to a direct call that the schema refuses as that call's error, saying what arrived", () => {
    // An extra key, a result that is no object, another jsonrpc, a result with an error, a `_meta` that is no object.
    const refused = [
      { ...answer, extra: 1 },
      { ...answer, result: [1] },
      { ...answer, jsonrpc: "1.0" },
      { ...answer, error: { code: 1, message: "x" } },
      { ...answer, result: { content: [], _meta: 5 } },
    ];
    for (const bad of refused) {
      const [read] = lines(`${JSON.stringify(bad)}\n`) as [{ id: unknown; error?: { code: number; message: string } }];
      expect(read.id).toBe("toolgate:7");
      expect(read.error?.code).toBe(-32603);
      expect(read.error?.message).toContain(
        `it has the members ${Object.keys(bad)
          .map((k) => `"${k}"`)
          .join(", ")}`,
      );
      expect(read.error?.message).toContain("exactly one of result");
    }
  });

  it("copies and searches a line that came in many small chunks about once, not once per chunk", () => {
    // A hostile upstream writing slowly: a 256 KiB line in 1 KiB chunks (the SDK's reader copied and searched all it
    // held at each chunk: 32 MiB of each for this line, quadratic in its length).
    const line = Buffer.from(
      `${JSON.stringify({ ...answer, result: { content: [{ type: "text", text: "a".repeat(262_144) }] } })}\n`,
    );
    const reader = new UpstreamLines();
    let copied = 0;
    let searched = 0;
    const concat = Buffer.concat;
    const indexOf = Buffer.prototype.indexOf;
    const copies = vi.spyOn(Buffer, "concat").mockImplementation((list, total) => {
      const out = concat(list, total);
      copied += out.length;
      return out;
    });
    const searches = vi.spyOn(Buffer.prototype, "indexOf").mockImplementation(function (this: Buffer, ...args) {
      searched += this.length;
      return indexOf.apply(this, args);
    });
    const read: unknown[] = [];
    try {
      for (let at = 0; at < line.length; at += 1024) {
        reader.append(line.subarray(at, at + 1024));
        for (let m = reader.readMessage(); m !== null; m = reader.readMessage()) read.push(m);
      }
    } finally {
      copies.mockRestore();
      searches.mockRestore();
    }
    expect(read).toHaveLength(1);
    expect((read[0] as { id: string }).id).toBe("toolgate:7");
    expect(copied).toBeLessThanOrEqual(2 * line.length);
    expect(searched).toBeLessThanOrEqual(2 * line.length);
  });

  it("refuses to hold more than its bound, as the SDK's reader does", () => {
    expect(() => lines("x".repeat(600), "y".repeat(600))).toThrow("ReadBuffer exceeded maximum size of 1024 bytes");
  });

  it("is the reader of the stdio upstream the proxy connects", async () => {
    const client = await connectUpstream({
      command: process.execPath,
      args: [fileURLToPath(new URL("../fixtures/call-upstream.mjs", import.meta.url))],
    });
    try {
      expect((client.transport as unknown as { _readBuffer: unknown })._readBuffer).toBeInstanceOf(UpstreamLines);
    } finally {
      await client.close();
    }
  });
});
