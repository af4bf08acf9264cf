/**
 * A tools/call whose arguments JSON.stringify cannot serialise (nested 100,000 deep, a 200 KB
 * body: the parser reads it, the serialiser runs out of stack; 10,000 already does) over a real transport: it is
 * refused as before,
 * its audit line is still written — the arguments replaced by a marker that says why — and the
 * server keeps serving.
 */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { PassThrough } from "node:stream";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createGateway } from "../../../src/runtime/gateway.js";
import { createAuditSink } from "../../../src/runtime/audit.js";
import { openStore } from "../../../src/idempotency/open.js";
import type { AuditRecord, Gateway } from "../../../src/runtime/types.js";
import { serveHttp, type HttpHandle } from "../../../src/mcp/transports/http.js";
import { serveStdio } from "../../../src/mcp/transports/stdio.js";
import catalog from "../fixtures/notes-catalog.js";
import { tempDir, until } from "../support.js";
import { inSession, open, request } from "./raw-http.js";

const DEPTH = 100_000;
const nested = "[".repeat(DEPTH) + "]".repeat(DEPTH);
const deepCall = (id: number) =>
  `{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":{"name":"note_read","arguments":{"name":${nested}}}}`;
const readCall = (id: number) =>
  JSON.stringify({ jsonrpc: "2.0", id, method: "tools/call", params: { name: "note_read", arguments: { name: "a" } } });

let dir: string;
let auditFile: string;
let gateway: Gateway;
let server: HttpHandle | undefined;

async function start(): Promise<void> {
  gateway = createGateway({ tools: catalog, store: await openStore("memory:"), audit: createAuditSink(auditFile) });
}

const lines = (): AuditRecord[] =>
  !existsSync(auditFile)
    ? []
    : readFileSync(auditFile, "utf8")
        .split("\n")
        .filter(Boolean)
        .map((l) => JSON.parse(l) as AuditRecord);

/** The JSON-RPC result of an SSE or JSON answer body. */
function resultOf(body: string): {
  isError?: boolean;
  content: Array<{ text: string }>;
  _meta: Record<string, { error?: { code: string } }>;
} {
  const data = body.startsWith("event:")
    ? body
        .split("\n")
        .find((l) => l.startsWith("data: "))!
        .slice(6)
    : body;
  return (JSON.parse(data) as { result: ReturnType<typeof resultOf> }).result;
}

beforeEach(() => {
  dir = tempDir("deep-arguments");
  process.env.NOTES_DIR = dir;
  auditFile = join(dir, "audit.jsonl");
});
afterEach(async () => {
  await server?.close();
  server = undefined;
  await gateway?.close();
});

const expectedLine = {
  tool: "note_read",
  outcome: "invalid_arguments",
  argument_tokens: 0,
  arguments_unrecorded: `arguments nested ${DEPTH + 1} levels deep, deeper than the audit serialises (JSON.stringify: Maximum call stack size exceeded)`,
};

describe("arguments the audit cannot serialise", () => {
  it("over HTTP: the call is refused as invalid arguments, its audit line is written with a marker, and other sessions are served", async () => {
    await start();
    server = await serveHttp(gateway, { port: 0, warn: () => {} });
    const sid = await open(server.url);
    const deep = await request(server.url, { headers: inSession(sid), body: deepCall(7) });
    expect(deep.status).toBe(200);
    const refused = resultOf(deep.body);
    expect(refused.isError).toBe(true);
    expect(refused._meta["toolgate/observation"]!.error!.code).toBe("invalid_arguments");
    expect(refused.content[0]!.text).toContain(
      "- name must be a string; received a value nested too deeply to show (array)",
    );
    await until(() => lines().length === 1);
    expect(lines()[0]).toMatchObject(expectedLine);

    const other = await open(server.url);
    const ok = await request(server.url, { headers: inSession(other), body: readCall(8) });
    expect(resultOf(ok.body).isError).toBeUndefined();
    const again = await request(server.url, { headers: inSession(sid), body: readCall(9) });
    expect(resultOf(again.body).isError).toBeUndefined();
    await until(() => lines().length === 3);
    expect(lines().map((l) => [l.outcome, l.arguments_unrecorded])).toEqual([
      ["invalid_arguments", expectedLine.arguments_unrecorded],
      ["ok", undefined],
      ["ok", undefined],
    ]);
  });

  it("over HTTP: a deep tool name or _meta field is refused with a sentence naming the field, not a stack overflow", async () => {
    await start();
    server = await serveHttp(gateway, { port: 0, warn: () => {} });
    const sid = await open(server.url);
    const meta = await request(server.url, {
      headers: inSession(sid),
      body: `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"note_read","arguments":{"name":"a"},"_meta":{"toolgate/call_id":${nested}}}}`,
    });
    expect(resultOf(meta.body).content[0]!.text).toBe(
      `note_read was not run: the MCP client sent request metadata toolgate cannot use. _meta["toolgate/call_id"] must be a non-empty string of at most 512 characters; received an array; example "c-1". The request's _meta is set by the client, not by the tool's arguments, so calling again will not help: this is for the client's author (or whoever configures it) to fix.`,
    );
    const name = await request(server.url, {
      headers: inSession(sid),
      body: `{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":{"deep":${nested}}}}`,
    });
    const data = name.body
      .split("\n")
      .find((l) => l.startsWith("data: "))!
      .slice(6);
    expect(JSON.parse(data)).toEqual({
      jsonrpc: "2.0",
      id: 4,
      error: {
        code: -32602,
        message:
          "tools/call params.name must be the name of a tool (a non-empty string); received a value nested too deeply to show; call tools/list for the names",
      },
    });
    expect(
      resultOf((await request(server.url, { headers: inSession(sid), body: readCall(5) })).body).isError,
    ).toBeUndefined();
  });

  it("over stdio: the same, and the session keeps answering", async () => {
    await start();
    const stdin = new PassThrough();
    const stdout = new PassThrough();
    const answers: Array<{ id: number; result: ReturnType<typeof resultOf> }> = [];
    let buffered = "";
    stdout.on("data", (chunk: Buffer) => {
      buffered += chunk.toString("utf8");
      for (let nl = buffered.indexOf("\n"); nl !== -1; nl = buffered.indexOf("\n")) {
        answers.push(JSON.parse(buffered.slice(0, nl)) as (typeof answers)[number]);
        buffered = buffered.slice(nl + 1);
      }
    });
    const handle = await serveStdio(gateway, { stdin, stdout, warn: () => {} });
    stdin.write(
      JSON.stringify({
        jsonrpc: "2.0",
        id: 1,
        method: "initialize",
        params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "raw", version: "1" } },
      }) + "\n",
    );
    stdin.write(JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }) + "\n");
    stdin.write(deepCall(2) + "\n" + readCall(3) + "\n");
    await until(() => answers.length === 3);
    const byId = new Map(answers.map((a) => [a.id, a.result]));
    expect(byId.get(2)!._meta["toolgate/observation"]!.error!.code).toBe("invalid_arguments");
    expect(byId.get(3)!.isError).toBeUndefined();
    await until(() => lines().length === 2);
    expect(lines()[0]).toMatchObject(expectedLine);
    expect(lines()[1]).toMatchObject({ outcome: "ok", argument_tokens: expect.any(Number) });
    stdin.end();
    await handle.close();
  });
});
