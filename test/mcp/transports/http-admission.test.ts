/**
 * 2026-07-28 requests over Streamable HTTP are stateless, so no session bound counts them: each
 * principal (the grant its bearer verifies as, else its peer) has its own bound on requests in
 * flight and, apart from it, on `subscriptions/listen` streams. Tried as a hostile client would:
 * principal A floods with calls that do not end until the test lets them; the excess is answered
 * 429 at once, and principal B — a real SDK v2 client — is answered throughout.
 */
import http from "node:http";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { z } from "zod";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { Server } from "@modelcontextprotocol/server";
import { createGateway } from "../../../src/runtime/gateway.js";
import { openStore } from "../../../src/idempotency/open.js";
import { keyRingFromMap } from "../../../src/capability/keys.js";
import { createCapabilityAuthority } from "../../../src/capability/authority.js";
import { defineTool } from "../../../src/schema/define.js";
import type { Gateway } from "../../../src/runtime/types.js";
import { serveHttp, type HttpHandle, type HttpOptions } from "../../../src/mcp/transports/http.js";
import { PrincipalSlots } from "../../../src/mcp/transports/http-admission.js";
import catalog from "../fixtures/notes-catalog.js";
import { obsOf, tempDir } from "../support.js";
import { request, type Answer } from "./raw-http.js";

const REVISION = "2026-07-28";
const ENVELOPE = {
  "io.modelcontextprotocol/protocolVersion": REVISION,
  "io.modelcontextprotocol/clientCapabilities": {},
  "io.modelcontextprotocol/clientInfo": { name: "raw-2026", version: "1.0.0" },
};
const keys = keyRingFromMap({ k1: Buffer.alloc(32, 7).toString("base64") }, "test");
const authority = createCapabilityAuthority({ keys });
const grant = () =>
  authority.issue({ rights: ["read"], objects: ["tool:held_read", "tool:note_read"], ttl_ms: 600_000 });
const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

/** Calls of `held_read` that have started, and the switch that lets them all end. */
let started = 0;
let release: () => void = () => {};
let released: Promise<void> = Promise.resolve();
const held = defineTool({
  name: "held_read",
  description: "Waits until the test releases it, then returns ok; stands for a slow call.",
  input: z.object({}).strict(),
  output: z.object({ ok: z.boolean() }).strict(),
  effect: "read",
  handler: async () => {
    started++;
    await released;
    return { ok: true };
  },
});

let gateway: Gateway;
let server: HttpHandle;
const open: http.ClientRequest[] = [];

async function start(options: Omit<HttpOptions, "warn"> = {}, withKeys = true): Promise<void> {
  gateway = createGateway({
    tools: [...catalog, held],
    store: await openStore("memory:"),
    audit: false,
    ...(withKeys ? { keys } : {}),
  });
  server = await serveHttp(gateway, { port: 0, warn: () => {}, ...options });
}

beforeEach(() => {
  process.env.NOTES_DIR = tempDir("http-admission");
  started = 0;
  released = new Promise((resolve) => (release = resolve));
});
afterEach(async () => {
  release();
  for (const r of open.splice(0)) r.destroy();
  vi.restoreAllMocks();
  await server?.close();
  await gateway?.close();
});

let id = 0;
const headers = (method: string, name?: string) => ({
  "content-type": "application/json",
  accept: "application/json, text/event-stream",
  "mcp-protocol-version": REVISION,
  "mcp-method": method,
  ...(name ? { "mcp-name": name } : {}),
});
const callBody = (tool: string, args: Record<string, unknown> = {}) =>
  JSON.stringify({
    jsonrpc: "2.0",
    id: ++id,
    method: "tools/call",
    params: { name: tool, arguments: args, _meta: ENVELOPE },
  });
const call = (tool: string, who: Record<string, string>, args: Record<string, unknown> = {}) =>
  request(server.url, { headers: { ...headers("tools/call", tool), ...who }, body: callBody(tool, args) });
const listen = () =>
  JSON.stringify({
    jsonrpc: "2.0",
    id: ++id,
    method: "subscriptions/listen",
    params: { _meta: ENVELOPE, notifications: { toolsListChanged: true } },
  });

async function until(condition: () => boolean | Promise<boolean>): Promise<void> {
  while (!(await condition())) await new Promise((r) => setTimeout(r, 10));
}

const rpcError = (a: Answer) =>
  JSON.parse(a.body) as { id: unknown; error: { code: number; message: string; data: unknown } };

/** A request that stays open until the test ends it: its answer once the headers arrive (the body is read and
 * dropped). */
function hold(body: string, h: Record<string, string>): Promise<http.IncomingMessage> {
  return new Promise((resolve, reject) => {
    const req = http.request(server.url, { method: "POST", agent: false, headers: h }, (res) => {
      res.resume();
      resolve(res);
    });
    req.on("error", reject);
    open.push(req);
    req.end(body);
  });
}

describe("2026-07-28 requests in flight, per principal", () => {
  it("a principal flooding with slow calls gets 429 at once past its bound, and another principal's SDK v2 client is answered meanwhile", async () => {
    await start({ maxRequestsPerClient: 3 });
    const a = bearer(grant());
    const flood = Array.from({ length: 10 }, () => call("held_read", a));
    await until(() => started === 3);
    const b = grant();
    const client = new Client(
      { name: "principal-b", version: "1.0.0" },
      { versionNegotiation: { mode: { pin: REVISION } } },
    );
    await client.connect(new StreamableHTTPClientTransport(server.url, { requestInit: { headers: bearer(b) } }));
    try {
      expect(client.getProtocolEra()).toBe("modern");
      const answered = await client.callTool({ name: "note_read", arguments: { name: "b" } });
      expect(obsOf(answered).ok).toBe(true);
      expect((await client.listTools()).tools.map((t) => t.name)).toContain("held_read");
    } finally {
      await client.close();
    }
    // Seven of A's ten were refused without waiting for the three that run.
    const refusedNow = [];
    release();
    const answers = await Promise.all(flood);
    for (const answer of answers) if (answer.status === 429) refusedNow.push(answer);
    expect(answers.filter((x) => x.status === 200)).toHaveLength(3);
    expect(refusedNow).toHaveLength(7);
    expect(started).toBe(3);
    const refusal = refusedNow[0]!;
    expect(refusal.headers["retry-after"]).toBe("1");
    const body = rpcError(refusal);
    expect(typeof body.id).toBe("number");
    expect(body.error.code).toBe(-32000);
    expect(body.error.message).toMatch(
      /^too many 2026-07-28 requests at once for capability cap_[A-Za-z0-9_-]+: 3 are in flight, the most --max-requests-per-client allows \(3\); wait for an answer before sending another request, retry after the Retry-After header's seconds, or start toolgate with a higher --max-requests-per-client$/,
    );
    expect(body.error.data).toEqual({ limit: 3, flag: "--max-requests-per-client" });
    // The slots are free again once the answers are out.
    expect((await call("note_read", a, { name: "a" })).status).toBe(200);
  });

  it("without keys every local client is one principal; a notification still gets through at the bound", async () => {
    await start({ maxRequestsPerClient: 1 }, false);
    const first = hold(callBody("held_read"), headers("tools/call", "held_read"));
    await until(() => started === 1);
    const refused = await request(server.url, {
      headers: headers("tools/call", "note_read"),
      body: callBody("note_read", { name: "x" }),
      localAddress: "127.0.0.2",
    });
    expect(refused.status).toBe(429);
    expect(rpcError(refused).error.message).toContain(
      "for this machine's clients (every loopback client counts as one peer): 1 is in flight",
    );
    const cancel = await request(server.url, {
      headers: headers("notifications/cancelled"),
      body: JSON.stringify({
        jsonrpc: "2.0",
        method: "notifications/cancelled",
        params: { requestId: id, _meta: ENVELOPE },
      }),
    });
    expect(cancel.status).toBe(202);
    release();
    expect((await first).statusCode).toBe(200);
  });

  it("a client that goes away mid-call frees its slot; a bound below 1 is refused at start", async () => {
    await start({ maxRequestsPerClient: 1 }, false);
    hold(callBody("held_read"), headers("tools/call", "held_read")).catch(() => {});
    await until(() => started === 1);
    expect((await call("note_read", {}, { name: "y" })).status).toBe(429);
    open.pop()!.destroy();
    await until(async () => (await call("note_read", {}, { name: "y" })).status === 200);
    await expect(serveHttp(gateway, { port: 0, warn: () => {}, maxRequestsPerClient: 0 })).rejects.toThrow(
      "maxRequestsPerClient must be a whole number of at least 1; received 0; e.g. 64",
    );
  });
});

describe("subscriptions/listen streams, their own bound", () => {
  /**
   * toolgate declares no change notifications yet, and the SDK ends a listen stream at once when
   * none it asks for is declared; these tests make the server declare tools.listChanged, so a
   * stream stays open as a real one will.
   */
  function declareListChanged(): void {
    const original = Server.prototype.getCapabilities;
    vi.spyOn(Server.prototype, "getCapabilities").mockImplementation(function (this: Server) {
      return { ...original.call(this), tools: { listChanged: true } };
    });
  }

  it("counts streams apart from requests, refuses one past the bound with 429 and frees a slot when its connection closes", async () => {
    declareListChanged();
    await start({ maxListensPerClient: 2, maxRequestsPerClient: 1 });
    const a = bearer(grant());
    const streams = [
      await hold(listen(), { ...headers("subscriptions/listen"), ...a }),
      await hold(listen(), { ...headers("subscriptions/listen"), ...a }),
    ];
    for (const s of streams) expect([s.statusCode, s.headers["content-type"]]).toEqual([200, "text/event-stream"]);
    // Two open streams take nothing from the one request slot.
    expect((await call("note_read", a, { name: "a" })).status).toBe(200);
    const third = await request(server.url, { headers: { ...headers("subscriptions/listen"), ...a }, body: listen() });
    expect(third.status).toBe(429);
    expect(third.headers["retry-after"]).toBe("5");
    expect(rpcError(third).error.message).toMatch(
      /^too many subscriptions\/listen streams at once for capability cap_[A-Za-z0-9_-]+: 2 are open, the most --max-listens-per-client allows \(2\); close a stream you no longer read \(a stream ends when its connection closes\) or ask for several notification types on one stream, retry after the Retry-After header's seconds, or start toolgate with a higher --max-listens-per-client$/,
    );
    // Another principal has its own streams.
    const b = bearer(grant());
    expect((await hold(listen(), { ...headers("subscriptions/listen"), ...b })).statusCode).toBe(200);
    open.shift()!.destroy();
    await until(async () => {
      const again = await hold(listen(), { ...headers("subscriptions/listen"), ...a });
      return again.statusCode === 200;
    });
  });

  it("opened 1,000 times by one principal: its bound's worth stay open, the rest are refused, and close() ends the open ones", async () => {
    declareListChanged();
    await start({ maxListensPerClient: 4, maxConnectionsPerPeer: 2_000, maxConnections: 2_000 });
    const a = bearer(grant());
    const answers: http.IncomingMessage[] = [];
    for (let batch = 0; batch < 10; batch++)
      answers.push(
        ...(await Promise.all(
          Array.from({ length: 100 }, () => hold(listen(), { ...headers("subscriptions/listen"), ...a })),
        )),
      );
    expect(answers.filter((r) => r.statusCode === 200)).toHaveLength(4);
    expect(answers.filter((r) => r.statusCode === 429)).toHaveLength(996);
    const b = grant();
    expect((await call("note_read", bearer(b), { name: "b" })).status).toBe(200);
    const ended = answers
      .filter((r) => r.statusCode === 200)
      .map((r) => new Promise<void>((resolve) => r.on("close", resolve)));
    await server.close();
    await Promise.all(ended);
  });
});

describe("PrincipalSlots", () => {
  it("counts each principal apart, and a slot is freed once every reason to hold it has ended, once", () => {
    const slots = new PrincipalSlots(1, { noun: "things", state: "held", flag: "--max-things", advice: "wait" });
    const a = { key: "a", label: "A" };
    const b = { key: "b", label: "B" };
    const first = slots.take(a);
    if (!first.ok) throw new Error("the first slot must be free");
    const response = first.slot.hold();
    const callEnd = first.slot.hold();
    expect(slots.take(a)).toMatchObject({ ok: false, limit: 1, held: 1 });
    expect(slots.take(b).ok).toBe(true);
    response();
    response();
    expect(slots.count(a)).toBe(1);
    callEnd();
    expect(slots.count(a)).toBe(0);
    expect(slots.take(a).ok).toBe(true);
  });
});
