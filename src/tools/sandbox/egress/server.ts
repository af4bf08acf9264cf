/**
 * The host side of one call's egress: an HTTP proxy (CONNECT for TLS, absolute-URL requests
 * forwarded for plain HTTP) and a SOCKS5 proxy (CONNECT only, for git, ssh and other clients
 * that speak it), each on a unix socket in a private folder that the envelope binds in
 * (bridge.ts carries the sandbox's loopback ports to them). Every connection is decided by the
 * call's `EgressSession` and made to the address it checked; bytes are counted both ways and
 * each connection is cut at its time limit. A refused request is answered 403 with the reason
 * (SOCKS5: "not allowed by ruleset"); the observation says it in full either way.
 */
import { chmodSync, mkdtempSync, rmSync } from "node:fs";
import {
  createServer as createHttpServer,
  request as httpRequest,
  type IncomingHttpHeaders,
  type IncomingMessage,
  type ServerResponse,
} from "node:http";
import { request as httpsRequest } from "node:https";
import { createServer, type Server, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Duplex } from "node:stream";
import { reach, relay } from "./relay.js";
import type { EgressSession } from "./session.js";
import { socks5 } from "./socks.js";

export interface EgressProxy {
  /** The unix socket of the HTTP proxy. */
  httpSocket: string;
  /** The unix socket of the SOCKS5 proxy. */
  socksSocket: string;
  /** Stops listening and cuts every connection still open. */
  close(): Promise<void>;
}

/** Headers that belong to one hop and are never forwarded. */
const HOP = new Set([
  "connection",
  "proxy-connection",
  "keep-alive",
  "proxy-authorization",
  "proxy-authenticate",
  "te",
  "trailer",
  "transfer-encoding",
  "upgrade",
]);

/** Starts the two proxies of `session` in a fresh private folder. */
export async function startEgressProxy(session: EgressSession): Promise<EgressProxy> {
  // 0700 and ours: nobody else on the host reaches the sockets; the sandbox reaches them through its bind mounts.
  const dir = mkdtempSync(join(tmpdir(), "toolgate-egress-"));
  const httpSocket = join(dir, "http.sock");
  const socksSocket = join(dir, "socks.sock");
  const http = createHttpServer();
  // A decision that throws (a store the capability check needs is down) ends that connection, never the process.
  http.on("connect", (req, client: Duplex, head: Buffer) => {
    tunnel(session, req.url ?? "", client as Socket, head).catch(() => client.destroy());
  });
  http.on("request", (req, res) => {
    forward(session, req, res).catch(() => res.destroy());
  });
  http.on("clientError", (_err, socket) => socket.destroy());
  const socks = createServer((s) => socks5(session, s));
  const clients = new Set<Socket>();
  const track = (s: Socket) => {
    if (++session.accepted > session.maxAccepted) return void s.destroy();
    clients.add(s);
    s.on("close", () => clients.delete(s));
  };
  http.on("connection", track);
  socks.on("connection", track);
  await Promise.all([listen(http, httpSocket), listen(socks, socksSocket)]);
  // The sandbox user (another uid when toolgate is root) must be able to connect: the folder keeps the host out.
  chmodSync(httpSocket, 0o666);
  chmodSync(socksSocket, 0o666);
  return {
    httpSocket,
    socksSocket,
    async close() {
      session.close();
      for (const s of clients) s.destroy();
      await Promise.all([new Promise((r) => http.close(r)), new Promise((r) => socks.close(r))]);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

function listen(server: Server, path: string): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(path, () => resolve());
  });
}

/** `host:port` of a CONNECT request (IPv6 in brackets). */
function splitTarget(target: string): { host: string; port: number } {
  const m = /^\[([^\]]+)\]:(\d{1,5})$/.exec(target) ?? /^([^:]+):(\d{1,5})$/.exec(target);
  return m ? { host: m[1]!, port: Number(m[2]) } : { host: "", port: 0 };
}

function refusal(status: number, reason: string, message: string): string {
  const body = `toolgate egress: ${message}\n`;
  return (
    `HTTP/1.1 ${status} ${status === 403 ? "Forbidden" : "Bad Gateway"}\r\nx-toolgate-denied: ${reason}\r\n` +
    `content-type: text/plain; charset=utf-8\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`
  );
}

async function tunnel(session: EgressSession, target: string, client: Socket, head: Buffer): Promise<void> {
  client.on("error", () => client.destroy());
  const { host, port } = splitTarget(target);
  const d = await session.decide(host, port, "connect");
  if (!d.ok) {
    if (d.denial) client.end(refusal(403, d.denial.reason, d.denial.message));
    else client.end(refusal(502, "unreachable", d.error));
    return;
  }
  let upstream: Socket;
  try {
    upstream = await reach(session, d.address, port, d.family);
  } catch (err) {
    d.event.error = (err as NodeJS.ErrnoException).code ?? (err as Error).message;
    client.end(refusal(502, "unreachable", `${host}:${port} (${d.address}) could not be reached: ${d.event.error}`));
    return;
  }
  if (client.destroyed) return void upstream.destroy();
  client.write("HTTP/1.1 200 Connection Established\r\n\r\n");
  if (head.length > 0 && session.count(d.event, "out", head.length)) upstream.write(head);
  relay(session, d.event, client, upstream);
}

async function forward(session: EgressSession, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const deny = (status: number, reason: string, message: string) => {
    const body = `toolgate egress: ${message}\n`;
    res.writeHead(status, {
      "x-toolgate-denied": reason,
      "content-type": "text/plain; charset=utf-8",
      connection: "close",
    });
    res.end(body);
  };
  let url: URL;
  try {
    url = new URL(req.url ?? "");
  } catch {
    return deny(400, "bad request", "send requests through the proxy with an absolute http:// URL");
  }
  if (url.protocol !== "http:")
    return deny(400, "bad request", `the proxy forwards http:// URLs; use CONNECT for ${url.protocol}// (HTTPS_PROXY)`);
  const asked = url.port ? Number(url.port) : 80;
  const secret = session.secretFor(url.hostname, asked);
  const tls = secret?.origin_tls === true;
  const port = tls && !url.port ? 443 : asked;
  const d = await session.decide(url.hostname, port, "http");
  if (!d.ok) return d.denial ? deny(403, d.denial.reason, d.denial.message) : deny(502, "unreachable", d.error);
  const headers: IncomingHttpHeaders = {};
  for (const [k, v] of Object.entries(req.headers)) if (!HOP.has(k) && v !== undefined) headers[k] = v;
  headers.host = url.host;
  // The command may not choose the secret's header; the proxy sets it on the way out.
  if (secret) headers[secret.header] = secret.value;
  // The request line and headers count toward the call's bytes too (the secret's value left out).
  session.count(d.event, "out", headerBytes(req.method ?? "", req.url ?? "", req.headers));
  const release = [session.hold(req.socket)];
  const timer = setTimeout(() => {
    session.timedOut(d.event);
    up.destroy();
    req.socket.destroy();
  }, session.limits.connection_ms);
  const up = (tls ? httpsRequest : httpRequest)({
    host: d.address,
    port,
    family: d.family,
    method: req.method,
    path: `${url.pathname}${url.search}`,
    headers,
    agent: false,
    ...(tls ? { servername: url.hostname } : {}),
  });
  release.push(session.hold(up));
  const done = () => {
    clearTimeout(timer);
    for (const r of release) r();
  };
  up.on("response", (upRes) => {
    const out: Record<string, string | string[]> = {};
    for (const [k, v] of Object.entries(upRes.headers)) if (!HOP.has(k) && v !== undefined) out[k] = v;
    if (!session.count(d.event, "in", headerBytes(String(upRes.statusCode), "", upRes.headers)))
      return void up.destroy();
    res.writeHead(upRes.statusCode ?? 502, out);
    upRes.on("data", (c: Buffer) => {
      if (!session.count(d.event, "in", c.length)) upRes.destroy();
    });
    upRes.pipe(res);
    upRes.on("end", done).on("error", done);
  });
  up.on("error", (err) => {
    done();
    d.event.error ??= (err as NodeJS.ErrnoException).code ?? err.message;
    if (!res.headersSent) deny(502, "unreachable", `${url.host} (${d.address}) could not be reached: ${d.event.error}`);
    else res.destroy();
  });
  req.on("data", (c: Buffer) => {
    if (!session.count(d.event, "out", c.length)) up.destroy();
  });
  req.pipe(up);
}

/** About the bytes a request or status line and its headers take on the wire. */
function headerBytes(first: string, second: string, headers: IncomingHttpHeaders): number {
  let n = first.length + second.length + 12;
  for (const [k, v] of Object.entries(headers))
    n += k.length + 4 + (Array.isArray(v) ? v.join(", ") : String(v)).length;
  return n;
}
