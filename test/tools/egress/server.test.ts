/**
 * The proxy's sockets against hostile clients, without a sandbox (what a command inside could send
 * them): malformed CONNECT targets and request URLs, SOCKS5 garbage, an oversized handshake, an
 * unsupported SOCKS5 command, and a capability check that throws — each ends that connection with
 * an answer or a close, and the proxy keeps serving the next one.
 */
import { connect } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { egressPolicy } from "../../../src/tools/sandbox/egress/policy.js";
import { startEgressProxy, type EgressProxy } from "../../../src/tools/sandbox/egress/server.js";
import { EgressSession } from "../../../src/tools/sandbox/egress/session.js";

let proxy: EgressProxy | undefined;
afterEach(async () => {
  await proxy?.close();
  proxy = undefined;
});

/** Sends `bytes` to `path` and resolves with everything answered until the proxy closes (or 5 s pass, then "open"). */
function exchange(path: string, bytes: Buffer | string): Promise<{ answer: Buffer; closed: boolean }> {
  return new Promise((done) => {
    const s = connect(path);
    const chunks: Buffer[] = [];
    const timer = setTimeout(() => {
      s.destroy();
      done({ answer: Buffer.concat(chunks), closed: false });
    }, 5000);
    s.on("data", (c: Buffer) => chunks.push(c));
    s.on("error", () => {});
    s.on("close", () => {
      clearTimeout(timer);
      done({ answer: Buffer.concat(chunks), closed: true });
    });
    s.write(bytes);
  });
}

async function start(capability?: (h: string, p: number) => Promise<string | null>, max_connections?: number) {
  const session = new EgressSession({
    policy: egressPolicy({ allow: ["localhost"], ...(max_connections ? { limits: { max_connections } } : {}) }),
    ...(capability ? { capability } : {}),
  });
  proxy = await startEgressProxy(session);
  return { session, proxy };
}

describe("the HTTP proxy socket", () => {
  it("answers a malformed CONNECT target and a relative request URL, and keeps serving", async () => {
    const { proxy } = await start();
    const bad = await exchange(proxy.httpSocket, "CONNECT nonsense HTTP/1.1\r\nhost: x\r\n\r\n");
    expect(bad.answer.toString()).toMatch(/^HTTP\/1\.1 403 Forbidden\r\nx-toolgate-denied: not allowed by operator/);
    const relative = await exchange(
      proxy.httpSocket,
      "GET /x HTTP/1.1\r\nhost: localhost\r\nconnection: close\r\n\r\n",
    );
    expect(relative.answer.toString()).toMatch(
      /^HTTP\/1\.1 400 [\s\S]*send requests through the proxy with an absolute http:\/\/ URL/,
    );
    const tls = await exchange(
      proxy.httpSocket,
      "GET https://localhost/ HTTP/1.1\r\nhost: localhost\r\nconnection: close\r\n\r\n",
    );
    expect(tls.answer.toString()).toMatch(/use CONNECT for https:\/\/ \(HTTPS_PROXY\)/);
    const garbage = await exchange(proxy.httpSocket, "\x00\x01\x02 not http\r\n\r\n");
    expect(garbage.closed).toBe(true);
    const after = await exchange(proxy.httpSocket, "CONNECT elsewhere.example.org:443 HTTP/1.1\r\n\r\n");
    expect(after.answer.toString()).toContain("is not on the operator's allow-list");
  });

  it("a capability check that throws ends that connection; the proxy keeps answering", async () => {
    let calls = 0;
    const { proxy } = await start(async () => {
      if (++calls === 1) throw new Error("store unreachable");
      return "outside the capability";
    });
    const thrown = await exchange(proxy.httpSocket, "CONNECT localhost:80 HTTP/1.1\r\n\r\n");
    expect(thrown.closed).toBe(true);
    expect(thrown.answer.length).toBe(0);
    const next = await exchange(proxy.httpSocket, "CONNECT localhost:80 HTTP/1.1\r\n\r\n");
    expect(next.answer.toString()).toContain("x-toolgate-denied: not in capability");
  });
});

describe("a flood of refused requests", () => {
  it("past four per allowed connection and 1,000 more, the proxy closes connections unread", async () => {
    const { proxy, session } = await start(undefined, 1);
    expect(session.maxAccepted).toBe(1004);
    for (let i = 0; i < 1004; i++) {
      const r = await exchange(proxy.httpSocket, "CONNECT elsewhere.example.org:443 HTTP/1.1\r\n\r\n");
      if (!r.answer.toString().startsWith("HTTP/1.1 403")) throw new Error(`request ${i} was not answered 403`);
    }
    const past = await exchange(proxy.httpSocket, "CONNECT elsewhere.example.org:443 HTTP/1.1\r\n\r\n");
    expect(past).toEqual({ answer: Buffer.alloc(0), closed: true });
    expect(session.events.length).toBe(200);
    expect(session.eventsDropped).toBe(804);
  });
});

describe("the SOCKS5 socket", () => {
  it("closes on a wrong version, an oversized handshake or no acceptable method; refuses BIND and a bad address type", async () => {
    const { proxy } = await start();
    expect((await exchange(proxy.socksSocket, Buffer.from([4, 1, 0, 80]))).closed).toBe(true);
    expect(
      (await exchange(proxy.socksSocket, Buffer.concat([Buffer.from([5, 255]), Buffer.alloc(700, 1)]))).closed,
    ).toBe(true);
    const noMethod = await exchange(proxy.socksSocket, Buffer.from([5, 1, 2]));
    expect([...noMethod.answer]).toEqual([5, 0xff]);
    const bind = await exchange(proxy.socksSocket, Buffer.from([5, 1, 0, 5, 2, 0, 1, 127, 0, 0, 1, 0, 80]));
    expect([...bind.answer]).toEqual([5, 0, 5, 7, 0, 1, 0, 0, 0, 0, 0, 0]);
    const atyp = await exchange(proxy.socksSocket, Buffer.from([5, 1, 0, 5, 1, 0, 9, 0, 0]));
    expect([...atyp.answer]).toEqual([5, 0, 5, 8, 0, 1, 0, 0, 0, 0, 0, 0]);
  });

  it("answers a refused name 'not allowed by ruleset' and records it", async () => {
    const { proxy, session } = await start();
    const name = Buffer.from("elsewhere.example.org");
    const req = Buffer.concat([Buffer.from([5, 1, 0, 5, 1, 0, 3, name.length]), name, Buffer.from([1, 187])]);
    const r = await exchange(proxy.socksSocket, req);
    expect([...r.answer]).toEqual([5, 0, 5, 2, 0, 1, 0, 0, 0, 0, 0, 0]);
    expect(session.denials).toEqual([
      expect.objectContaining({ host: "elsewhere.example.org", port: 443, reason: "not allowed by operator" }),
    ]);
  });
});
