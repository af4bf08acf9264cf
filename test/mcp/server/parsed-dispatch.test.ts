/**
 * A request the line transport parsed goes from toolgate's handler straight to the SDK's request dispatch
 * (`gateway-server.ts`, `parsed.ts`): the SDK's dispatch is still there to go to, and what the client hears is what
 * the SDK's own way answers — each request under its own id (1 and "1" are two requests), a notification heard as
 * one, a response to nothing and a line the schema refuses each told as before. Then attacked with lines no SDK client
 * would send: each the SDK's own schema refuses gets -32600 and a call after them is answered; prototype and duplicate
 * keys are read as JSON.parse leaves them (a `__proto__` member is dropped by the schema, never inherited); and a
 * tools/call the client cancels, which the SDK answers with nothing, is no longer counted as unanswered once its
 * handler ends.
 */
import { PassThrough } from "node:stream";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createGateway } from "../../../src/runtime/gateway.js";
import { openStore } from "../../../src/idempotency/open.js";
import type { Gateway } from "../../../src/runtime/types.js";
import { createMcpServer } from "../../../src/mcp/server/server.js";
import { dispatchOf, type GatewayServer } from "../../../src/mcp/server/gateway-server.js";
import { serveStdio, type StdioHandle } from "../../../src/mcp/transports/stdio.js";
import catalog from "../fixtures/notes-catalog.js";
import { executions, obsOf, readLines, started, tempDir, until } from "../support.js";

interface Line {
  id?: unknown;
  method?: string;
  result?: Record<string, unknown>;
  error?: { code: number; message: string };
}

let gateway: Gateway;
let handle: StdioHandle;
let stdin: PassThrough;
let answers: Line[];
let errors: string[];
let notes: string;

beforeEach(async () => {
  notes = tempDir("parsed-dispatch");
  process.env.NOTES_DIR = notes;
  gateway = createGateway({ tools: catalog, store: await openStore("memory:"), audit: false });
  stdin = new PassThrough();
  const stdout = new PassThrough();
  answers = [];
  errors = [];
  readLines(stdout, (line) => answers.push(line as Line));
  handle = await serveStdio(gateway, { stdin, stdout, warn: () => {}, onError: (e) => errors.push(e.message) });
  const opening = {
    jsonrpc: "2.0",
    id: 0,
    method: "initialize",
    params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "raw", version: "1.0.0" } },
  };
  stdin.write(
    JSON.stringify(opening) + "\n" + JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }) + "\n",
  );
  await until(() => answers.some((a) => a.id === 0));
});
afterEach(async () => {
  stdin.end();
  await handle.close();
  await gateway.close();
});

const call = (id: unknown, name = "noop_read") =>
  JSON.stringify({ jsonrpc: "2.0", id, method: "tools/call", params: { name, arguments: {} } });

describe("a parsed request goes to the SDK's dispatch", () => {
  it("finds the SDK's request dispatch on a server toolgate builds (else every message takes the SDK's way)", () => {
    expect(dispatchOf(createMcpServer(gateway))).toBeTypeOf("function");
  });

  it('answers calls with ids 1 and "1" sent at once, each under its own id, and an unknown tool with -32602', async () => {
    stdin.write(call(1) + "\n" + call("1") + "\n" + call(2, "no_such_tool") + "\n");
    await until(() => answers.filter((a) => a.id === 1 || a.id === "1" || a.id === 2).length === 3);
    const one = answers.find((a) => a.id === 1)!;
    const text = answers.find((a) => a.id === "1")!;
    expect(obsOf(one.result).ok).toBe(true);
    expect(obsOf(text.result).ok).toBe(true);
    expect(answers.find((a) => a.id === 2)!.error?.code).toBe(-32602);
    expect(answers.filter((a) => a.id === 1 || a.id === "1")).toHaveLength(2);
  });

  it("still tells a response to nothing and a method it does not serve as the SDK does", async () => {
    stdin.write(JSON.stringify({ jsonrpc: "2.0", id: 77, result: {} }) + "\n");
    stdin.write(JSON.stringify({ jsonrpc: "2.0", id: 78, method: "no/such_method", params: {} }) + "\n");
    await until(() => answers.some((a) => a.id === 78));
    expect(answers.find((a) => a.id === 78)!.error?.code).toBe(-32601);
    await until(() => errors.some((e) => e.includes("unknown message ID")));
    expect(answers.some((a) => a.id === 77)).toBe(false);
  });

  it("takes none of the shapes the schema refuses for a request: each is an Invalid Request, nothing runs", async () => {
    const refused = [
      { jsonrpc: "2.0", id: 10, method: "tools/list", result: {} },
      { jsonrpc: "2.0", id: 11, method: "tools/list", error: { code: 1, message: "x" } },
      { jsonrpc: "2.0", id: 12, method: 5 },
      { jsonrpc: "2.0", id: 13.5, method: "tools/list" },
      { jsonrpc: "2.0", id: 14, method: "tools/list", params: [] },
      { jsonrpc: "1.0", id: 15, method: "tools/list" },
      { jsonrpc: "2.0", id: 16, method: "tools/list", mark: true, kind: "request" },
    ];
    for (const m of refused) stdin.write(JSON.stringify(m) + "\n");
    // id null, and a forged own __proto__ member (JSON.parse makes it a plain key).
    stdin.write('{"jsonrpc":"2.0","id":null,"method":"tools/list"}\n');
    stdin.write('{"jsonrpc":"2.0","id":17,"method":"tools/list","__proto__":{"x":1}}\n');
    stdin.write(JSON.stringify({ jsonrpc: "2.0", id: 18, method: "tools/list" }) + "\n");
    await until(() => answers.some((a) => a.id === 18));
    for (const id of [10, 11, 12, 13.5, 14, 15, 16, 17, null])
      expect(
        answers.filter((a) => a.id === id).map((a) => a.error?.code),
        String(id),
      ).toEqual([-32600]);
    expect(answers.find((a) => a.id === 18)!.result?.tools).toBeDefined();
  });
});

const server = () => handle.server as GatewayServer;
/** The SDK's requests still being handled (its own map, emptied when a request's chain ends, answered or not). */
const handling = () =>
  (server() as unknown as { _requestHandlerAbortControllers: Map<unknown, unknown> })._requestHandlerAbortControllers
    .size;

describe("hostile lines on the parsed fast path", () => {
  it("answers each shape the schema refuses with -32600 and runs none; a call after them is answered", async () => {
    const lines = [
      '{"jsonrpc":"2.0","id":{},"method":"tools/list"}',
      '{"jsonrpc":"2.0","id":[1],"method":"tools/list"}',
      '{"jsonrpc":"2.0","id":1e300,"method":"tools/list"}',
      '{"jsonrpc":"2.0","id":9007199254740993,"method":"tools/list"}',
      '{"jsonrpc":"2.0","id":21,"method":"tools/list","params":5}',
      '{"jsonrpc":"2.0","id":22,"method":"tools/list","params":null}',
      '{"jsonrpc":"2.0","id":23,"method":"tools/call","params":{"name":"noop_read","_meta":5}}',
      '{"id":24,"method":"tools/list"}',
      '[{"jsonrpc":"2.0","id":25,"method":"tools/list"}]',
      '{"jsonrpc":"2.0","id":26,"result":{},"error":{"code":1,"message":"x"}}',
      '{"jsonrpc":"2.0","id":27,"error":{"code":1.5,"message":"x"}}',
    ];
    for (const line of lines) stdin.write(line + "\n");
    stdin.write('{"jsonrpc":"2.0","id":99,"method":"tools/list"}\n');
    await until(() => answers.some((a) => a.id === 99));
    const refused = answers.filter((a) => a.id !== 0 && a.id !== 99);
    // The ids the transport can name are named; the others (object, array, unsafe numbers, a batch) are null.
    expect(refused.map((a) => [a.id, a.error?.code])).toEqual([
      [null, -32600],
      [null, -32600],
      [1e300, -32600],
      [9007199254740992, -32600],
      [21, -32600],
      [22, -32600],
      [23, -32600],
      [24, -32600],
      [null, -32600],
      [26, -32600],
      [27, -32600],
    ]);
    expect(answers.find((a) => a.id === 99)!.result?.tools).toBeDefined();
  });

  it("takes the prototype and duplicate keys as plain members: the last duplicate wins, no __proto__ is inherited", async () => {
    stdin.write(
      '{"jsonrpc":"2.0","id":30,"method":"tools/call","params":{"__proto__":{"name":"noop_write"},"name":"noop_read"}}\n',
    );
    stdin.write(
      '{"jsonrpc":"2.0","id":31,"method":"tools/call","params":{"name":"note_delete","name":"noop_read","arguments":{}}}\n',
    );
    stdin.write('{"jsonrpc":"2.0","id":32,"method":"tools/call","params":{"__proto__":{"name":"noop_read"}}}\n');
    stdin.write('{"jsonrpc":"2.0","id":33,"method":"constructor"}\n');
    stdin.write('{"jsonrpc":"2.0","id":"__proto__","method":"tools/list"}\n');
    await until(() => [30, 31, 32, 33, "__proto__"].every((id) => answers.some((a) => a.id === id)));
    const of = (id: unknown) => answers.find((a) => a.id === id)!;
    expect(JSON.stringify(of(30).result)).toContain("noop_read");
    expect(JSON.stringify(of(31).result)).toContain("noop_read");
    expect(of(32).error?.code).toBe(-32602);
    expect(of(33).error?.code).toBe(-32601);
    expect(of("__proto__").result?.tools).toBeDefined();
  });

  it("a cancelled tools/call, which the SDK answers with nothing, is not left counted as unanswered", async () => {
    stdin.write(
      JSON.stringify({
        jsonrpc: "2.0",
        id: 40,
        method: "tools/call",
        params: { name: "note_slow", arguments: { name: "c", delay_ms: 200 } },
      }) + "\n",
    );
    await until(() => started(notes).length === 1);
    expect(server().unanswered.size).toBe(1);
    stdin.write(
      JSON.stringify({ jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: 40, reason: "x" } }) +
        "\n",
    );
    // The SDK ended its handling of the request (no answer: it was cancelled).
    await until(() => handling() === 0);
    expect(answers.some((a) => a.id === 40)).toBe(false);
    expect(server().unanswered.size).toBe(0);
    // Its tool, which does not stop at the abort, ends before the next test sets its own notes dir.
    await until(() => executions(notes).length === 1);
  });
});
