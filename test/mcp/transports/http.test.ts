/**
 * Streamable HTTP: the real SDK Client against `serveHttp` over a real gateway, and raw requests
 * for bad input (`toolgate serve --http` shutting down on SIGTERM: test/cli/commands/serve-http.test.ts).
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { ElicitRequestSchema, ErrorCode, McpError, ResultSchema } from "@modelcontextprotocol/sdk/types.js";
import { createGateway } from "../../../src/runtime/gateway.js";
import { openStore } from "../../../src/idempotency/open.js";
import { keyRingFromMap } from "../../../src/capability/keys.js";
import { createCapabilityAuthority } from "../../../src/capability/authority.js";
import type { Gateway } from "../../../src/runtime/types.js";
import type { Store } from "../../../src/idempotency/store.js";
import { serveHttp, type HttpHandle, type HttpOptions } from "../../../src/mcp/transports/http.js";
import catalog from "../fixtures/notes-catalog.js";
import { executions, ids, obsOf, started, tempDir, textOf, until } from "../support.js";

let notes: string;
let store: Store;
let gateway: Gateway;
let http: HttpHandle;
const clients: Client[] = [];
/** What the server printed for the operator at start. */
let warnings: string[] = [];

async function start(options: { keys?: boolean } & Omit<HttpOptions, "port" | "warn"> = {}) {
  const { keys: withKeys, ...httpOptions } = options;
  store = await openStore("memory:");
  const keys = withKeys ? keyRingFromMap({ k1: Buffer.alloc(32, 9).toString("base64") }, "test") : undefined;
  gateway = createGateway({ tools: catalog, store, audit: false, ...(keys ? { keys } : {}) });
  http = await serveHttp(gateway, { port: 0, warn: (line) => warnings.push(line), ...httpOptions });
  return keys;
}

async function connect(options: { headers?: Record<string, string>; elicit?: boolean } = {}): Promise<Client> {
  const client = new Client(
    { name: "http-test", version: "1.0.0" },
    { capabilities: options.elicit ? { elicitation: { form: {} } } : {} },
  );
  if (options.elicit) client.setRequestHandler(ElicitRequestSchema, () => ({ action: "accept" }));
  await client.connect(
    new StreamableHTTPClientTransport(
      http.url,
      options.headers ? { requestInit: { headers: options.headers } } : undefined,
    ),
  );
  clients.push(client);
  return client;
}

const post = (body: string, headers: Record<string, string> = {}) =>
  fetch(http.url, {
    method: "POST",
    headers: { "content-type": "application/json", accept: "application/json, text/event-stream", ...headers },
    body,
  });

beforeEach(() => {
  warnings = [];
  notes = tempDir("http");
  process.env.NOTES_DIR = notes;
});
afterEach(async () => {
  await Promise.allSettled(clients.splice(0).map((c) => c.close()));
  await http?.close();
  await gateway?.close();
});

describe("serveHttp with the SDK client", () => {
  it("lists, calls, refuses as tool results, and replays a retry with the same _meta ids", async () => {
    await start();
    const client = await connect();
    expect((await client.listTools()).tools).toHaveLength(catalog.length);
    const ok = await client.callTool({ name: "note_append", arguments: { name: "h", line: "one" }, _meta: ids("h1") });
    expect(ok.structuredContent).toEqual({ name: "h", lines: 1 });
    const again = await client.callTool({
      name: "note_append",
      arguments: { name: "h", line: "one" },
      _meta: ids("h1"),
    });
    expect(obsOf(again).replay).toBe(true);
    const bad = await client.callTool({ name: "note_append", arguments: { name: "H!", line: "one" } });
    expect([bad.isError, obsOf(bad).error?.code]).toEqual([true, "invalid_arguments"]);
    expect(executions(notes)).toEqual(["note_append h one"]);
  });

  it("takes the capability from Authorization: Bearer", async () => {
    const keys = await start({ keys: true });
    const token = createCapabilityAuthority({ keys: keys! }).issue({
      rights: ["read"],
      objects: ["tool:note_read"],
      ttl_ms: 60_000,
    });
    const anonymous = await connect();
    const denied = await anonymous.callTool({ name: "note_read", arguments: { name: "a" } });
    expect(obsOf(denied).error?.code).toBe("denied");
    expect(textOf(denied).split("\n").at(-1)).toBe(
      'Over MCP, send the token in _meta["toolgate/capability"] of tools/call or an Authorization: Bearer header.',
    );
    const bearer = await connect({ headers: { authorization: `Bearer ${token}` } });
    expect((await bearer.callTool({ name: "note_read", arguments: { name: "a" } })).structuredContent).toEqual({
      name: "a",
      text: null,
    });
  });

  it("asks for approval by elicitation on the call's own stream, when the operator lets elicitation approve", async () => {
    await start({ approveVia: "both" });
    const client = await connect({ elicit: true });
    const result = await client.callTool({ name: "note_delete", arguments: { name: "z" } });
    expect(result.structuredContent).toEqual({ name: "z", deleted: false });
    expect(executions(notes)).toEqual(["note_delete z"]);
  });

  it("keeps serving after malformed JSON, non-JSON-RPC, oversized bodies, unknown sessions and unknown methods", async () => {
    await start({ maxRequestBytes: 2048 });
    const client = await connect();
    const parse = await post("{not json");
    expect([parse.status, ((await parse.json()) as { error: { code: number } }).error.code]).toEqual([400, -32700]);
    const notRpc = await post(JSON.stringify({ hello: "world" }));
    expect([notRpc.status, ((await notRpc.json()) as { error: { message: string } }).error.message]).toEqual([
      400,
      "Bad Request: the request body is not a valid JSON-RPC message",
    ]);
    const big = await post(
      JSON.stringify({ jsonrpc: "2.0", id: 1, method: "initialize", params: { pad: "x".repeat(5000) } }),
    );
    expect(big.status).toBe(413);
    const lost = await post(JSON.stringify({ jsonrpc: "2.0", id: 2, method: "tools/list" }), {
      "mcp-session-id": "no-such-session",
    });
    expect([lost.status, await lost.json()]).toMatchInlineSnapshot(`
      [
        404,
        {
          "error": {
            "code": -32001,
            "message": "Session not found: no-such-session is unknown, expired or closed; start a new session with initialize",
          },
          "id": null,
          "jsonrpc": "2.0",
        },
      ]
    `);
    const noSession = await post(JSON.stringify({ jsonrpc: "2.0", id: 3, method: "tools/list" }));
    expect(noSession.status).toBe(400);
    await expect(client.request({ method: "tools/destroy", params: {} }, ResultSchema)).rejects.toSatisfy(
      (e) => e instanceof McpError && e.code === ErrorCode.MethodNotFound,
    );
    expect((await client.callTool({ name: "note_read", arguments: { name: "a" } })).isError).toBeUndefined();
    expect(http.sessions).toBe(1);
  });

  it("a call the client cancelled is stopped and left in doubt: the retry with the same ids does not run it again", async () => {
    await start();
    const client = await connect();
    const abort = new AbortController();
    const pending = client
      .callTool({ name: "note_slow", arguments: { name: "s", delay_ms: 800 }, _meta: ids("gone-1") }, undefined, {
        signal: abort.signal,
      })
      .catch((e: Error) => e);
    // Abandon the call once the gateway has it (its idempotency record is claimed), not after a
    // guessed delay: on a loaded machine the request may not have reached the server yet.
    while ((await store.records.list({ limit: 1, now: Date.now() })).length === 0) await turn();
    abort.abort();
    expect(await pending).toBeInstanceOf(Error);
    const other = await connect();
    let retry = await other.callTool({
      name: "note_slow",
      arguments: { name: "s", delay_ms: 800 },
      _meta: ids("gone-1"),
    });
    while (obsOf(retry).error?.code === "in_flight") {
      await new Promise((r) => setTimeout(r, 100));
      retry = await other.callTool({
        name: "note_slow",
        arguments: { name: "s", delay_ms: 800 },
        _meta: ids("gone-1"),
      });
    }
    // The cancel reached the call as its abort: a write that had started is in doubt, as a crash would leave it.
    expect(obsOf(retry).error?.code).toBe("in_doubt");
    expect(executions(notes).length).toBeLessThanOrEqual(1);
    // The handler, which does not stop at the abort, ends before the next test sets its own notes dir (nothing waits
    // for a cancelled call's answer, which the SDK never sends).
    await until(() => started(notes).length === executions(notes).length);
  });
});

/** One turn of the event loop: lets the server see a response end or a connection close. */
const turn = () => new Promise((resolve) => setImmediate(resolve));

/** A raw initialize (+ initialized notification): a session with no stream left open. Returns its id. */
async function rawSession(): Promise<string> {
  const init = await post(
    JSON.stringify({
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "raw", version: "1" } },
    }),
  );
  await init.text();
  const sid = init.headers.get("mcp-session-id")!;
  const headers = { "mcp-session-id": sid, "mcp-protocol-version": "2025-11-25" };
  expect((await post(JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }), headers)).status).toBe(
    202,
  );
  await turn();
  return sid;
}

describe("serveHttp session idle expiry (clock injected, swept on demand)", () => {
  const IDLE = 60_000;
  let t = 0;
  /** tools/list in session `sid`, read to the end; the HTTP status. */
  const listTools = async (sid: string) => {
    const res = await post(JSON.stringify({ jsonrpc: "2.0", id: 7, method: "tools/list" }), {
      "mcp-session-id": sid,
      "mcp-protocol-version": "2025-11-25",
    });
    await res.text();
    await turn();
    return res.status;
  };

  it("closes a session idle for sessionIdleMs; its id then gets 404 and a new session works", async () => {
    t = 1_000;
    await start({ sessionIdleMs: IDLE, sweepMs: 0, now: () => t });
    const sid = await rawSession();
    expect(http.sessions).toBe(1);
    t += IDLE - 1;
    expect(await http.expireIdle()).toBe(0);
    expect(await listTools(sid)).toBe(200);
    t += IDLE - 1; // idle time counts from the last request, not from the first
    expect(await http.expireIdle()).toBe(0);
    t += 1;
    expect(await http.expireIdle()).toBe(1);
    expect(http.sessions).toBe(0);
    const gone = await post(JSON.stringify({ jsonrpc: "2.0", id: 8, method: "tools/list" }), {
      "mcp-session-id": sid,
      "mcp-protocol-version": "2025-11-25",
    });
    expect([gone.status, ((await gone.json()) as { error: { code: number; message: string } }).error]).toEqual([
      404,
      {
        code: -32001,
        message: `Session not found: ${sid} is unknown, expired or closed; start a new session with initialize`,
      },
    ]);
    const client = await connect();
    expect((await client.listTools()).tools).toHaveLength(catalog.length);
  });

  it("keeps a session while a request of it is open (a GET stream), and expires it once the client has gone", async () => {
    t = 0;
    await start({ sessionIdleMs: IDLE, sweepMs: 0, now: () => t });
    const sid = await rawSession();
    const gone = new AbortController();
    const stream = await fetch(http.url, {
      headers: { accept: "text/event-stream", "mcp-session-id": sid, "mcp-protocol-version": "2025-11-25" },
      signal: gone.signal,
    });
    expect(stream.status).toBe(200);
    t += 10 * IDLE;
    expect(await http.expireIdle()).toBe(0);
    expect(await listTools(sid)).toBe(200);
    gone.abort();
    // The server learns of the closed stream on a later turn; until then the session stays open.
    let expired = 0;
    while (expired === 0) {
      await turn();
      t += IDLE;
      expired = await http.expireIdle();
    }
    expect([expired, http.sessions, await listTools(sid)]).toEqual([1, 0, 404]);
  });

  it("lets the call of a client that went away finish before the session closes, so a retry replays it", async () => {
    t = 0;
    await start({ sessionIdleMs: IDLE, sweepMs: 0, now: () => t });
    const client = await connect();
    const abort = new AbortController();
    const args = { name: "e", delay_ms: 300 };
    const pending = client
      .callTool({ name: "note_slow", arguments: args, _meta: ids("idle-1") }, undefined, { signal: abort.signal })
      .catch((e: Error) => e);
    // Abandon the call once the gateway has it (its idempotency record is claimed).
    while ((await store.records.list({ limit: 1, now: Date.now() })).length === 0) await turn();
    abort.abort();
    expect(await pending).toBeInstanceOf(Error);
    await client.close();
    let expired = 0;
    while (expired === 0) {
      await turn();
      t += IDLE;
      expired = await http.expireIdle();
    }
    const other = await connect();
    let retry = await other.callTool({ name: "note_slow", arguments: args, _meta: ids("idle-1") });
    while (obsOf(retry).error?.code === "in_flight") {
      await new Promise((r) => setTimeout(r, 50));
      retry = await other.callTool({ name: "note_slow", arguments: args, _meta: ids("idle-1") });
    }
    expect([retry.structuredContent, obsOf(retry).replay]).toEqual([{ name: "e", lines: 1 }, true]);
    expect(executions(notes)).toEqual(["note_slow e"]);
  });

  it("sweeps on its own every sweepMs", async () => {
    t = 0;
    await start({ sessionIdleMs: IDLE, sweepMs: 5, now: () => t });
    await rawSession();
    t += IDLE;
    while (http.sessions > 0) await new Promise((resolve) => setTimeout(resolve, 5));
    expect(http.sessions).toBe(0);
  });

  it("refuses a sessionIdleMs that is not greater than 0", async () => {
    const g = createGateway({ tools: catalog, store: await openStore("memory:"), audit: false });
    await expect(serveHttp(g, { sessionIdleMs: 0 })).rejects.toThrow(
      "sessionIdleMs must be a number of milliseconds greater than 0; received 0; e.g. 1800000",
    );
    await g.close();
  });
});
