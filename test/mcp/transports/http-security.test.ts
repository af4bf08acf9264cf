/**
 * What the Streamable HTTP endpoint refuses, tried as a hostile web page or local process would:
 * foreign Origins, rebinding Host names on every loopback address, more sessions or connections
 * than the bounds, slow requests, another caller's session id, a network bind without keys,
 * session ids in the audit, and a client approving its own destructive call.
 */
import net from "node:net";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { createGateway } from "../../../src/runtime/gateway.js";
import { createMemoryAuditSink } from "../../../src/runtime/audit.js";
import { openStore } from "../../../src/idempotency/open.js";
import { keyRingFromMap } from "../../../src/capability/keys.js";
import { createCapabilityAuthority } from "../../../src/capability/authority.js";
import type { Gateway } from "../../../src/runtime/types.js";
import type { Store } from "../../../src/idempotency/store.js";
import { serveHttp, type HttpHandle, type HttpOptions } from "../../../src/mcp/transports/http.js";
import catalog from "../fixtures/notes-catalog.js";
import { executions, obsOf, tempDir } from "../support.js";
import { errorOf, INIT, JSON_HEADERS, list as listAt, open as openAt, request } from "./raw-http.js";

let store: Store;
let gateway: Gateway;
let server: HttpHandle | undefined;
let audit: ReturnType<typeof createMemoryAuditSink>;
let warnings: string[];
const clients: Client[] = [];
const sockets: net.Socket[] = [];
let notes: string;

async function start(options: Omit<HttpOptions, "warn"> & { keys?: boolean } = {}): Promise<HttpHandle> {
  const { keys, ...rest } = options;
  store = await openStore("memory:");
  audit = createMemoryAuditSink();
  gateway = createGateway({
    tools: catalog,
    store,
    audit,
    ...(keys ? { keys: keyRingFromMap({ k1: Buffer.alloc(32, 3).toString("base64") }, "test") } : {}),
  });
  server = await serveHttp(gateway, { port: 0, warn: (line) => warnings.push(line), ...rest });
  return server;
}

beforeEach(() => {
  warnings = [];
  notes = tempDir("http-security");
  process.env.NOTES_DIR = notes;
});
afterEach(async () => {
  for (const s of sockets.splice(0)) s.destroy();
  await Promise.allSettled(clients.splice(0).map((c) => c.close()));
  await server?.close();
  server = undefined;
  await gateway?.close();
});

/** A raw initialize (+ initialized) as `headers` describe the caller; the new session's id. */
const open = (headers: Record<string, string> = {}) => openAt(server!.url, headers);

/** tools/list in session `sid` as the caller `headers` describe; the answer. */
const list = (sid: string, headers: Record<string, string> = {}) => listAt(server!.url, sid, headers);

async function connect(
  options: { headers?: Record<string, string>; answer?: () => { action: "accept" | "decline" } } = {},
): Promise<{ client: Client; asked: () => number }> {
  let asked = 0;
  const client = new Client(
    { name: "http-test", version: "1.0.0" },
    { capabilities: options.answer ? { elicitation: { form: {} } } : {} },
  );
  if (options.answer) {
    const answer = options.answer;
    client.setRequestHandler(ElicitRequestSchema, () => (asked++, answer()));
  }
  await client.connect(
    new StreamableHTTPClientTransport(
      server!.url,
      options.headers ? { requestInit: { headers: options.headers } } : undefined,
    ),
  );
  clients.push(client);
  return { client, asked: () => asked };
}

describe("Origin", () => {
  it("a browser page of a foreign origin gets 403 with a JSON-RPC error; no Origin (not a browser), the endpoint's own and an allowed one pass", async () => {
    await start({ allowOrigins: ["http://localhost:6274"] });
    const evil = await request(server!.url, {
      headers: { ...JSON_HEADERS, origin: "https://evil.example" },
      body: INIT,
    });
    expect(evil.status).toBe(403);
    expect(JSON.parse(evil.body)).toEqual({
      jsonrpc: "2.0",
      id: null,
      error: {
        code: -32000,
        message: `Origin "https://evil.example" is not allowed: a web page may call this endpoint only from its own origins (http://127.0.0.1:${server!.url.port}, http://localhost:${server!.url.port}, http://[::1]:${server!.url.port}) or one the operator allowed with --allow-origin; to allow this one, start toolgate with --allow-origin https://evil.example`,
      },
    });
    for (const origin of ["null", "http://localhost:6275", "file://"])
      expect((await request(server!.url, { headers: { ...JSON_HEADERS, origin }, body: INIT })).status).toBe(403);
    expect(server!.sessions).toBe(0);
    for (const origin of [
      undefined,
      "http://localhost:6274",
      `http://127.0.0.1:${server!.url.port}`,
      `http://localhost:${server!.url.port}`,
    ]) {
      const ok = await request(server!.url, {
        headers: { ...JSON_HEADERS, ...(origin ? { origin } : {}) },
        body: INIT,
      });
      expect([origin, ok.status]).toEqual([origin, 200]);
    }
  });
  it("accepts only the server's exact own origins and --allow-origin ones: no other loopback address or port, no look-alike name", async () => {
    await start({ allowOrigins: ["http://localhost:6274"] });
    const port = Number(server!.url.port);
    const hostile = [
      `http://127.0.0.2:${port}`,
      `http://127.1.2.3:${port}`,
      `http://[::ffff:127.0.0.2]:${port}`,
      `http://0.0.0.0:${port}`,
      `http://localhost:${port + 1}`,
      `http://127.0.0.1:${port + 1}`,
      `http://localhost.evil.com:${port}`,
      `http://localhost.:${port}`,
      `https://localhost:${port}`,
      `http://localhost:${port}/mcp`,
      `http://user@localhost:${port}`,
      "http://localhost:6274.evil.com",
      "http://localhost.:6274",
      "null",
      "",
    ];
    for (const origin of hostile) {
      const a = await request(server!.url, { headers: { ...JSON_HEADERS, origin }, body: INIT });
      expect([origin, a.status]).toEqual([origin, 403]);
      expect(errorOf(a).message).toContain(`Origin ${JSON.stringify(origin)} is not allowed: `);
      expect(errorOf(a).message).toContain("--allow-origin");
    }
    expect(
      errorOf(await request(server!.url, { headers: { ...JSON_HEADERS, origin: "null" }, body: INIT })).message,
    ).toBe(
      `Origin "null" is not allowed: it is not an http or https origin (scheme://host:port, nothing after), so no --allow-origin can allow it; a web page may call this endpoint only from its own origins (http://127.0.0.1:${port}, http://localhost:${port}, http://[::1]:${port}) or one the operator allowed with --allow-origin`,
    );
    expect(server!.sessions).toBe(0);
    // Scheme and host compare without case and a default port is no port, as browsers serialise them.
    const own = [
      `http://127.0.0.1:${port}`,
      `http://localhost:${port}`,
      `http://[::1]:${port}`,
      `HTTP://LOCALHOST:${port}`,
      "http://localhost:6274",
      "http://LocalHost:6274",
    ];
    for (const origin of own) {
      const a = await request(server!.url, { headers: { ...JSON_HEADERS, origin }, body: INIT });
      expect([origin, a.status]).toEqual([origin, 200]);
    }
  });

  it("on another loopback bind, its own address is an own origin and the rest of 127.0.0.0/8 is not", async () => {
    await start({ host: "127.0.0.2" });
    const port = Number(server!.url.port);
    for (const origin of [`http://127.0.0.3:${port}`, `http://127.0.0.2:${port + 1}`])
      expect((await request(server!.url, { headers: { ...JSON_HEADERS, origin }, body: INIT })).status).toBe(403);
    for (const origin of [`http://127.0.0.2:${port}`, `http://127.0.0.1:${port}`, `http://localhost:${port}`])
      expect((await request(server!.url, { headers: { ...JSON_HEADERS, origin }, body: INIT })).status).toBe(200);
  });

  it("quotes a refused Origin with its control characters escaped", async () => {
    await start();
    const port = Number(server!.url.port);
    const socket = net.connect(port, "127.0.0.1");
    sockets.push(socket);
    let answer = "";
    socket.setEncoding("utf8");
    socket.on("data", (d: string) => (answer += d));
    const body = Buffer.from(INIT);
    // U+202E (right-to-left override) as UTF-8 bytes; the server reads header bytes as latin1, so 0x80 is a C1 control.
    const head = Buffer.concat([
      Buffer.from(
        `POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nOrigin: http://ev`,
      ),
      Buffer.from("\u202e", "utf8"),
      Buffer.from(`il.example\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n`),
    ]);
    socket.end(Buffer.concat([head, body]));
    await new Promise((resolve) => socket.once("close", resolve));
    expect(answer).toMatch(/^HTTP\/1\.1 403/);
    const error = (
      JSON.parse(answer.slice(answer.indexOf("{"), answer.lastIndexOf("}") + 1)) as { error: { message: string } }
    ).error;
    // The three latin1 characters of those bytes: â, the C1 control U+0080 (escaped), ®.
    expect(error.message).toContain('Origin "http://ev\u00e2\\u{0080}\u00aeil.example" is not allowed');
    expect(error.message).not.toMatch(/[\u0080-\u009f\u202e]/);
  });
});

describe("Host (DNS rebinding)", () => {
  it("is checked on every loopback address, e.g. 127.0.0.2, not only on three names", async () => {
    await start({ host: "127.0.0.2" });
    const port = server!.url.port;
    for (const host of [
      `evil.example:${port}`,
      `127.0.0.2.nip.io:${port}`,
      `127.0.0.2:${Number(port) + 1}`,
      "127.0.0.2",
    ]) {
      const a = await request(server!.url, { headers: { ...JSON_HEADERS, host }, body: INIT });
      expect([host, a.status]).toEqual([host, 403]);
      expect(errorOf(a).message).toMatch(
        /^this endpoint does not answer Host ".*": requests must name this machine's loopback address or localhost with port \d+ \(protection against DNS rebinding\)$/,
      );
    }
    expect(server!.sessions).toBe(0);
    for (const host of [`127.0.0.2:${port}`, `localhost:${port}`])
      expect((await request(server!.url, { headers: { ...JSON_HEADERS, host }, body: INIT })).status).toBe(200);
  });

  it("on a non-loopback bind, answers its own addresses and --allow-host names only", async () => {
    await start({ host: "0.0.0.0", noAuth: true, allowHosts: ["agents.example.com"] });
    const port = server!.url.port;
    const at = new URL(`http://127.0.0.1:${port}/mcp`);
    expect((await request(at, { headers: { ...JSON_HEADERS, host: `evil.example:${port}` }, body: INIT })).status).toBe(
      403,
    );
    expect(
      (await request(at, { headers: { ...JSON_HEADERS, host: `agents.example.com:${port}` }, body: INIT })).status,
    ).toBe(200);
    expect((await request(at, { headers: { ...JSON_HEADERS, host: `127.0.0.1:${port}` }, body: INIT })).status).toBe(
      200,
    );
    // An interface's own origin passes; an --allow-host name is a Host, not an origin (that takes --allow-origin).
    expect(
      (await request(at, { headers: { ...JSON_HEADERS, origin: `http://127.0.0.1:${port}` }, body: INIT })).status,
    ).toBe(200);
    expect(
      (await request(at, { headers: { ...JSON_HEADERS, origin: `http://agents.example.com:${port}` }, body: INIT }))
        .status,
    ).toBe(403);
  });
});

describe("session bounds", () => {
  it("never holds more than maxSessions: the least recently active idle session of the principal makes room (per principal and a bound refusing another principal: http-fairness.test.ts)", async () => {
    await start({ maxSessions: 3 });
    const first = await open();
    const more = [await open(), await open()];
    expect(server!.sessions).toBe(3);
    await list(more[0]!); // now the first one is the least recently active
    const fourth = await open();
    expect(server!.sessions).toBe(3);
    expect((await list(first)).status).toBe(404);
    for (const sid of [...more, fourth]) expect((await list(sid)).status).toBe(200);
    for (let i = 0; i < 20; i++) await open();
    expect(server!.sessions).toBe(3);
  });
});

describe("connections and request time", () => {
  it("closes a connection that does not finish its headers within headersTimeoutMs", { timeout: 30_000 }, async () => {
    await start({ headersTimeoutMs: 200 });
    const socket = net.connect(Number(server!.url.port), "127.0.0.1");
    sockets.push(socket);
    let answer = "";
    socket.on("data", (d) => (answer += d));
    await new Promise((resolve) => socket.once("connect", resolve));
    socket.write("POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ");
    await new Promise((resolve) => socket.once("close", resolve));
    expect(answer).toMatch(/^HTTP\/1\.1 408/);
  });

  it(
    "still answers a call that takes longer than requestTimeoutMs (the bound is on receiving the request)",
    { timeout: 30_000 },
    async () => {
      await start({ requestTimeoutMs: 100, headersTimeoutMs: 100 });
      const { client } = await connect();
      const r = await client.callTool({ name: "note_slow", arguments: { name: "s", delay_ms: 600 } });
      expect(r.structuredContent).toEqual({ name: "s", lines: 1 });
    },
  );

  it("accepts at most maxConnections connections at once", { timeout: 30_000 }, async () => {
    await start({ maxConnections: 2 });
    const port = Number(server!.url.port);
    const dial = async () => {
      const s = net.connect(port, "127.0.0.1");
      sockets.push(s);
      await new Promise((resolve) => s.once("connect", resolve));
      return s;
    };
    await dial();
    await dial();
    const third = await dial();
    await new Promise((resolve) => third.once("close", resolve));
    expect(third.destroyed).toBe(true);
  });
});

describe("sessions belong to their caller", () => {
  it("another caller presenting a session id gets the same 404 as for an unknown id", async () => {
    await start();
    const owner = { authorization: "Bearer owner-credential" };
    const sid = await open(owner);
    expect((await list(sid, owner)).status).toBe(200);
    const unknown = await list("00000000-0000-4000-8000-000000000000", { authorization: "Bearer thief" });
    for (const thief of [{ authorization: "Bearer thief" }, {}] as Array<Record<string, string>>) {
      const stolen = await list(sid, thief);
      expect(stolen.status).toBe(404);
      expect(errorOf(stolen)).toEqual({
        code: -32001,
        message: errorOf(unknown).message.replace("00000000-0000-4000-8000-000000000000", sid),
      });
    }
    const del = await request(server!.url, {
      method: "DELETE",
      headers: { "mcp-session-id": sid, "mcp-protocol-version": "2025-11-25", authorization: "Bearer thief" },
    });
    expect(del.status).toBe(404);
    expect((await list(sid, owner)).status).toBe(200);
  });

  it("the audit holds no session id: the trajectory it records is a one-way digest that opens nothing", async () => {
    await start();
    const sid = await open();
    const call = await request(server!.url, {
      headers: { ...JSON_HEADERS, "mcp-session-id": sid, "mcp-protocol-version": "2025-11-25" },
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: 3,
        method: "tools/call",
        params: { name: "note_read", arguments: { name: "a" } },
      }),
    });
    expect(call.status).toBe(200);
    const [line] = audit.records;
    expect(line!.trajectory_id).toMatch(/^mcp-[A-Za-z0-9_-]{22}$/);
    const text = JSON.stringify(audit.records);
    expect(text).not.toContain(sid);
    expect(text).not.toContain(sid.replaceAll("-", ""));
    expect((await list(line!.trajectory_id)).status).toBe(404);
    expect((await list(line!.trajectory_id.slice(4))).status).toBe(404);
  });
});

describe("authentication at start", () => {
  it("a non-loopback bind without keys is refused unless noAuth says so; loopback without keys warns once", async () => {
    store = await openStore("memory:");
    gateway = createGateway({ tools: catalog, store, audit: false });
    await expect(serveHttp(gateway, { host: "0.0.0.0", port: 0, warn: () => {} })).rejects.toThrow(
      "refusing to serve 0.0.0.0 without capability keys: anyone who can reach that address could run every tool. Pass --keys FILE (calls then need a capability), bind a loopback address such as 127.0.0.1, or pass --no-auth to serve it unauthenticated on purpose",
    );
    server = await serveHttp(gateway, { host: "0.0.0.0", port: 0, noAuth: true, warn: (l) => warnings.push(l) });
    expect(warnings).toEqual([
      expect.stringMatching(
        /^toolgate: warning: --no-auth: anyone who can reach http:\/\/0\.0\.0\.0:\d+\/mcp can call every tool$/,
      ),
    ]);
    await server.close();
    warnings = [];
    server = await serveHttp(gateway, { port: 0, warn: (l) => warnings.push(l) });
    expect(warnings).toEqual([
      expect.stringMatching(
        /^toolgate: warning: no capability keys \(--keys\), so any process on this machine that can reach http:\/\/127\.0\.0\.1:\d+\/mcp can call every tool/,
      ),
    ]);
  });

  it("a non-loopback bind with keys starts without a warning", async () => {
    await start({ host: "0.0.0.0", keys: true });
    expect(warnings).toEqual([]);
  });
});

describe("A3 approval over HTTP", () => {
  it("without keys, a client cannot approve its own destructive call by answering its elicitation", async () => {
    await start();
    const { client, asked } = await connect({ answer: () => ({ action: "accept" }) });
    const r = await client.callTool({ name: "note_delete", arguments: { name: "precious" } });
    expect(obsOf(r).error?.code).toBe("approval_required");
    expect(asked()).toBe(0);
    expect(executions(notes)).toEqual([]);
    const [pending] = await gateway.approvals.list({ state: "pending" });
    expect(pending).toMatchObject({ tool: "note_delete", approver: null });
  });

  it("when the operator lets elicitation approve, the record and the audit name the channel and the session's principal, the client's name only as a label", async () => {
    await start({ approveVia: "both" });
    const { client } = await connect({ answer: () => ({ action: "accept" }) });
    const r = await client.callTool({ name: "note_delete", arguments: { name: "z" } });
    expect(r.isError).toBeUndefined();
    const [approval] = await gateway.approvals.list({ limit: 1 });
    const approver = 'elicitation:peer 127.0.0.1 [unverified name "http-test"]';
    expect(approval).toMatchObject({ state: "consumed", approver });
    expect(audit.records.at(-1)).toMatchObject({
      tool: "note_delete",
      outcome: "ok",
      approval: { id: approval!.id, channel: "elicitation", approver },
    });
  });

  it("with keys, the principal of a session opened with a capability that verifies is its issued grant", async () => {
    await start({ keys: true, approveVia: "elicitation" });
    const token = createCapabilityAuthority({
      keys: keyRingFromMap({ k1: Buffer.alloc(32, 3).toString("base64") }, "test"),
    }).issue({ rights: ["write"], objects: ["tool:note_delete"], ttl_ms: 60_000 });
    const { grant } = (await gateway.holder(token))!;
    const { client } = await connect({
      headers: { authorization: `Bearer ${token}` },
      answer: () => ({ action: "accept" }),
    });
    await client.callTool({ name: "note_delete", arguments: { name: "x" } });
    const [approval] = await gateway.approvals.list({ limit: 1 });
    expect(approval!.approver).toBe(`elicitation:capability ${grant} [unverified name "http-test"]`);
    expect(JSON.stringify([approval, audit.records])).not.toContain(token.split(".").at(-1));
  });

  it("with a bearer credential, the principal is the credential's digest, never the credential", async () => {
    await start({ approveVia: "elicitation" });
    const { client } = await connect({
      headers: { authorization: "Bearer secret-credential-123" },
      answer: () => ({ action: "accept" }),
    });
    await client.callTool({ name: "note_delete", arguments: { name: "y" } });
    const [approval] = await gateway.approvals.list({ limit: 1 });
    expect(approval!.approver).toMatch(
      /^elicitation:bearer credential sha256:[0-9a-f]{16} \[unverified name "http-test"\]$/,
    );
    expect(JSON.stringify([approval, audit.records])).not.toContain("secret-credential-123");
  });
});
