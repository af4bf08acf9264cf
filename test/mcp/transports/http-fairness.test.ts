/**
 * One caller cannot take the Streamable HTTP endpoint from the others: its sessions count against
 * its verified principal (the capability's issued grant with keys, else its peer — every loopback
 * client is one peer), a bound never closes another principal's session, and its connections
 * are bounded per peer beside the total. Tried as a hostile local process would: a fresh bearer
 * per session, other 127.0.0.0/8 source addresses, attenuated copies of one grant, thousands of
 * idle sockets.
 */
import http from "node:http";
import net from "node:net";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createGateway } from "../../../src/runtime/gateway.js";
import { openStore } from "../../../src/idempotency/open.js";
import { keyRingFromMap } from "../../../src/capability/keys.js";
import { createCapabilityAuthority } from "../../../src/capability/authority.js";
import type { Gateway } from "../../../src/runtime/types.js";
import { serveHttp, type HttpHandle, type HttpOptions } from "../../../src/mcp/transports/http.js";
import catalog from "../fixtures/notes-catalog.js";
import { nonLoopbackAddress } from "../../support/require.js";
import { tempDir } from "../support.js";
import { errorOf, INIT, JSON_HEADERS, list, open, request } from "./raw-http.js";

const keys = keyRingFromMap({ k1: Buffer.alloc(32, 5).toString("base64") }, "test");
const authority = createCapabilityAuthority({ keys });
const grant = () => authority.issue({ rights: ["read"], objects: ["tool:note_read"], ttl_ms: 600_000 });
const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

let gateway: Gateway;
let server: HttpHandle | undefined;
const sockets: net.Socket[] = [];

async function start(options: Omit<HttpOptions, "warn"> & { keys?: boolean } = {}): Promise<HttpHandle> {
  const { keys: withKeys, ...rest } = options;
  gateway = createGateway({
    tools: catalog,
    store: await openStore("memory:"),
    audit: false,
    ...(withKeys ? { keys } : {}),
  });
  server = await serveHttp(gateway, { port: 0, warn: () => {}, ...rest });
  return server;
}

beforeEach(() => {
  process.env.NOTES_DIR = tempDir("http-fairness");
});
afterEach(async () => {
  for (const s of sockets.splice(0)) s.destroy();
  await server?.close();
  server = undefined;
  await gateway?.close();
});

/** Holds session `sid` busy with an open GET stream (answered at once), until destroyed. */
function busy(sid: string, headers: Record<string, string> = {}): Promise<http.IncomingMessage> {
  return new Promise((resolve, reject) => {
    const req = http.get(
      server!.url,
      {
        agent: false,
        headers: {
          ...headers,
          accept: "text/event-stream",
          "mcp-session-id": sid,
          "mcp-protocol-version": "2025-11-25",
        },
      },
      resolve,
    );
    req.on("error", reject);
  });
}

describe("sessions count against the verified principal", () => {
  it("without keys, a fresh bearer per session or another 127.0.0.0/8 source address is the same principal: one loopback peer", async () => {
    await start({ maxSessionsPerClient: 2, maxSessions: 50 });
    for (const token of ["t1", "t2", "t3"]) await open(server!.url, bearer(token));
    for (const localAddress of ["127.0.0.2", "127.0.0.3"]) await open(server!.url, {}, { localAddress });
    expect(server!.sessions).toBe(2);
  });

  it("with keys, tokens attenuated from one grant share its bound, a bearer that does not verify counts as its peer, and other grants keep their sessions", async () => {
    await start({ keys: true, maxSessionsPerClient: 2, maxSessions: 50 });
    const other = grant();
    const otherSid = await open(server!.url, bearer(other));
    const mine = grant();
    const copies = [
      mine,
      authority.attenuate(mine, { rights: ["read"] }),
      authority.attenuate(mine, { ttl_ms: 60_000 }),
    ];
    const sids = [];
    for (const token of copies) sids.push(await open(server!.url, bearer(token)));
    for (const forged of ["garbage-1", "garbage-2", "tg1.not-a-token"]) await open(server!.url, bearer(forged));
    // The other grant's session, two of mine (my oldest made room), two of the loopback peer's.
    expect(server!.sessions).toBe(5);
    expect((await list(server!.url, otherSid, bearer(other))).status).toBe(200);
    expect((await list(server!.url, sids[0]!, bearer(copies[0]!))).status).toBe(404);
    for (const [i, sid] of sids.slice(1).entries())
      expect((await list(server!.url, sid, bearer(copies[i + 1]!))).status).toBe(200);
  });

  it("at the total bound, another principal's initialize is refused with 503 and every open session stays", async () => {
    await start({ keys: true, maxSessions: 2, maxSessionsPerClient: 5 });
    const alice = grant();
    const sids = [await open(server!.url, bearer(alice)), await open(server!.url, bearer(alice))];
    const refused = await request(server!.url, { headers: { ...JSON_HEADERS, ...bearer(grant()) }, body: INIT });
    expect(refused.status).toBe(503);
    expect(refused.headers["retry-after"]).toBe("5");
    expect(JSON.parse(refused.body)).toMatchObject({ jsonrpc: "2.0", id: null, error: { code: -32000 } });
    expect(errorOf(refused).message).toMatch(
      /^this server has no room for another session: 2 are open, the most --max-sessions allows \(2\), and none of them is an idle session of capability cap_[A-Za-z0-9_-]+; sessions of other callers are never closed to make room\. End one of yours with HTTP DELETE and its Mcp-Session-Id header, retry later, or start toolgate with a higher --max-sessions$/,
    );
    // Unauthenticated, it is refused the same way.
    expect((await request(server!.url, { headers: JSON_HEADERS, body: INIT })).status).toBe(503);
    for (const sid of sids) expect((await list(server!.url, sid, bearer(alice))).status).toBe(200);
    expect(server!.sessions).toBe(2);
  });

  it("at the total bound, a principal makes room from its own idle sessions only, oldest first, and is refused once they are busy", async () => {
    await start({ keys: true, maxSessions: 3, maxSessionsPerClient: 5 });
    const alice = grant();
    const bob = grant();
    const bobSid = await open(server!.url, bearer(bob));
    const first = await open(server!.url, bearer(alice));
    const second = await open(server!.url, bearer(alice));
    const third = await open(server!.url, bearer(alice));
    expect(server!.sessions).toBe(3);
    expect((await list(server!.url, first, bearer(alice))).status).toBe(404);
    expect((await list(server!.url, bobSid, bearer(bob))).status).toBe(200);
    const streams = [await busy(second, bearer(alice)), await busy(third, bearer(alice))];
    const refused = await request(server!.url, { headers: { ...JSON_HEADERS, ...bearer(alice) }, body: INIT });
    expect(refused.status).toBe(503);
    expect(errorOf(refused).message).toContain("and each of the 2 of capability cap_");
    expect((await list(server!.url, bobSid, bearer(bob))).status).toBe(200);
    for (const s of streams) s.destroy();
  });

  it("at its own bound with every session busy, a principal is refused with 429 naming the bound and how to free one", async () => {
    await start({ maxSessionsPerClient: 1, maxSessions: 10 });
    const sid = await open(server!.url);
    const stream = await busy(sid);
    const refused = await request(server!.url, { headers: JSON_HEADERS, body: INIT, localAddress: "127.0.0.9" });
    expect(refused.status).toBe(429);
    expect(refused.headers["retry-after"]).toBe("5");
    expect(errorOf(refused).message).toBe(
      "too many sessions for this machine's clients (every loopback client counts as one peer): 1 is open, the most --max-sessions-per-client allows (1), and each has a request in progress; end one with HTTP DELETE and its Mcp-Session-Id header, retry when one finishes, or start toolgate with a higher --max-sessions-per-client",
    );
    stream.destroy();
  });
});

/** A raw TCP connection from `localAddress` to `to`, once connected; it sends nothing unless told. `answer` is what
 * arrives. */
async function dial(
  to: { host: string; port: number },
  localAddress: string,
): Promise<net.Socket & { answer: string }> {
  const s = Object.assign(net.connect({ host: to.host, port: to.port, localAddress }), { answer: "" });
  sockets.push(s);
  s.setEncoding("utf8");
  s.on("data", (d: string) => (s.answer += d));
  s.on("error", () => {});
  await new Promise((resolve) => s.once("connect", resolve));
  return s;
}

const closed = (s: net.Socket) => new Promise((resolve) => (s.destroyed ? resolve(null) : s.once("close", resolve)));
const connections = () =>
  new Promise<number>((resolve, reject) => server!.http.getConnections((err, n) => (err ? reject(err) : resolve(n))));
const initOn = (s: net.Socket, port: number) =>
  s.write(
    `POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: ${INIT.length}\r\n\r\n${INIT}`,
  );

const REFUSED =
  "too many connections from this machine's clients (every loopback client counts as one peer): 3 are open, the most --max-connections-per-peer allows (3); reuse an open connection (HTTP keep-alive), close idle ones, or start toolgate with a higher --max-connections-per-peer";

describe("connections per peer", () => {
  it(
    "a peer past its bound has each further connection answered 503 and closed at once, whichever loopback address it dials from, while its others still work",
    { timeout: 30_000 },
    async () => {
      await start({ maxConnectionsPerPeer: 3, maxConnections: 100, headersTimeoutMs: 60_000 });
      const port = Number(server!.url.port);
      const to = { host: "127.0.0.1", port };
      const held = [await dial(to, "127.0.0.1"), await dial(to, "127.0.0.2"), await dial(to, "127.0.0.3")];
      for (const from of ["127.0.0.1", "127.0.0.4"]) {
        const extra = await dial(to, from);
        await closed(extra);
        expect(extra.answer).toMatch(/^HTTP\/1\.1 503 Service Unavailable\r\n/);
        expect(extra.answer.toLowerCase()).toContain("\r\nretry-after: 5\r\n");
        expect(JSON.parse(extra.answer.slice(extra.answer.indexOf("\r\n\r\n") + 4))).toEqual({
          jsonrpc: "2.0",
          id: null,
          error: { code: -32000, message: REFUSED },
        });
      }
      // A held connection still carries a request; closing one makes room for a new one.
      initOn(held[0]!, port);
      while (!held[0]!.answer.includes("\r\n\r\n")) await new Promise((r) => setTimeout(r, 10));
      expect(held[0]!.answer).toMatch(/^HTTP\/1\.1 200 /);
      held[1]!.destroy();
      while ((await connections()) > 2) await new Promise((r) => setTimeout(r, 10));
      const fresh = await dial(to, "127.0.0.5");
      initOn(fresh, port);
      while (!fresh.answer.includes("\r\n\r\n") && !fresh.destroyed) await new Promise((r) => setTimeout(r, 10));
      expect(fresh.answer).toMatch(/^HTTP\/1\.1 200 /);
    },
  );

  const other = nonLoopbackAddress();
  it.skipIf(other === null)(
    "one peer holding a thousand idle connections leaves room for another peer",
    { timeout: 60_000 },
    async () => {
      await start({
        host: "0.0.0.0",
        noAuth: true,
        maxConnectionsPerPeer: 16,
        maxConnections: 64,
        headersTimeoutMs: 60_000,
      });
      const port = Number(server!.url.port);
      const held: Array<net.Socket & { answer: string }> = [];
      for (let i = 0; i < 1000; i++) held.push(await dial({ host: "127.0.0.1", port }, "127.0.0.1"));
      // Every connection past the peer's 16 is closed (the test's timeout bounds the wait).
      while (held.filter((s) => s.destroyed).length < 1000 - 16) await new Promise((r) => setTimeout(r, 10));
      expect(held.filter((s) => !s.destroyed)).toHaveLength(16);
      expect(held.filter((s) => s.destroyed).every((s) => s.answer.startsWith("HTTP/1.1 503 "))).toBe(true);
      // Another peer (this machine's non-loopback address) still gets a session.
      const url = new URL(`http://${other!}:${port}/mcp`);
      const sid = await open(url, {}, { localAddress: other! });
      expect((await list(url, sid, {}, { localAddress: other! })).status).toBe(200);
    },
  );
});
