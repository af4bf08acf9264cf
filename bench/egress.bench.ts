/**
 * bash_execute's egress path against the same download without it, on the host. The server is a
 * child Node process and the client is curl, so this process holds only what toolgate holds: the
 * call's proxy (on its unix socket, with its per-connection decision). The client reaches it
 * through the sandbox's forwarder (the Node bridge, here on a host loopback port); the peer is the
 * same curl straight to the server. Rounds alternate; the figures are curl's own timings
 * (`time_starttransfer`, `time_total`), so process start is left out of both:
 * - a 10 MB GET: total time forwarded as plain HTTP and through a CONNECT tunnel (goal ≤ 1.2×
 *   each), and time to first byte;
 * - a refused request (the allow-list does not name the host: the proxy answers 403) against a
 *   one-byte GET straight to the server: the added latency of a refusal.
 * The namespaces add no per-byte cost (the bridge is a socket pipe either way), so the sandbox's
 * start is left out; bench/tools.bench.ts times that.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { createServer as createNetServer, type AddressInfo } from "node:net";
import { dirname } from "node:path";
import { median, type Harness } from "./harness.js";
import { BRIDGE_SCRIPT } from "../src/tools/sandbox/egress/bridge.js";
import { egressPolicy } from "../src/tools/sandbox/egress/policy.js";
import { startEgressProxy } from "../src/tools/sandbox/egress/server.js";
import { EgressSession } from "../src/tools/sandbox/egress/session.js";

const SIZE = 10 * 1024 * 1024;
const ROUNDS = 15;
const SERVER = `
const body = Buffer.alloc(${SIZE}, 0x61);
require("http").createServer((q, s) => s.end(q.url === "/big" ? body : "x"))
  .listen(0, "127.0.0.1", function () { process.stdout.write(this.address().port + "\\n"); });
`;

const freePort = () =>
  new Promise<number>((done) => {
    const s = createNetServer().listen(0, "127.0.0.1", () => {
      const port = (s.address() as AddressInfo).port;
      s.close(() => done(port));
    });
  });

/** Starts `script` in a child Node process and resolves with its child and the first line it prints. */
function child(args: string[]): Promise<{ proc: ChildProcess; line: string }> {
  return new Promise((done, fail) => {
    const proc = spawn(process.execPath, args, { stdio: ["ignore", "pipe", "inherit"] });
    proc.on("error", fail);
    proc.stdout!.once("data", (c: Buffer) => done({ proc, line: c.toString().trim() }));
  });
}

/** curl's own timings of one request, µs: time to first byte, total, and the bytes it got. */
function curl(
  url: string,
  proxy?: string,
  tunnel = false,
): Promise<{ ttfb: number; total: number; bytes: number; code: number }> {
  const args = [
    "-s",
    "-o",
    "/dev/null",
    "--noproxy",
    proxy ? "" : "*",
    "-w",
    "%{time_starttransfer} %{time_total} %{size_download} %{http_code}",
  ];
  if (proxy) args.push("-x", proxy);
  if (tunnel) args.push("-p");
  return new Promise((done, fail) => {
    const p = spawn("curl", [...args, url], { stdio: ["ignore", "pipe", "inherit"] });
    let out = "";
    p.stdout.on("data", (c: Buffer) => (out += c.toString()));
    p.on("error", fail);
    p.on("close", () => {
      const [t, total, bytes, code] = out.trim().split(" ").map(Number) as [number, number, number, number];
      done({ ttfb: t * 1e6, total: total * 1e6, bytes, code });
    });
  });
}

const spread = (v: number[]) => `${(Math.min(...v) / 1000).toFixed(2)}–${(Math.max(...v) / 1000).toFixed(2)} ms`;

export default async function egressBench(h: Harness): Promise<void> {
  const server = await child(["-e", SERVER]);
  const host = `127.0.0.1:${server.line}`;
  // One generous session carries every round; a fresh one per call costs a folder and two listens (not timed here).
  const session = new EgressSession({
    policy: egressPolicy({ allow: [host], limits: { max_bytes: 2 ** 40, max_connections: 1_000_000 } }),
  });
  const proxy = await startEgressProxy(session);
  const [httpPort, socksPort] = [await freePort(), await freePort()];
  let bridge: ChildProcess | undefined;
  try {
    bridge = (await child(["-e", BRIDGE_SCRIPT, dirname(proxy.httpSocket), String(httpPort), String(socksPort)])).proc;
    const via = `http://127.0.0.1:${httpPort}`;
    const check = await curl(`http://${host}/big`, via);
    if (check.bytes !== SIZE) throw new Error(`the proxied download carried ${check.bytes} bytes, not ${SIZE}`);
    const refusedCheck = await curl("http://not-allowed.invalid/", via);
    if (refusedCheck.code !== 403) throw new Error(`the refused request was answered ${refusedCheck.code}, not 403`);
    const m = { viaTtfb: [], viaTotal: [], tunnel: [], dirTtfb: [], dirTotal: [], refused: [], small: [] } as Record<
      string,
      number[]
    >;
    for (let i = 0; i < ROUNDS + 2; i++) {
      const [a, b, c, d, e] = [
        await curl(`http://${host}/big`, via),
        await curl(`http://${host}/big`),
        await curl("http://not-allowed.invalid/", via),
        await curl(`http://${host}/small`),
        await curl(`http://${host}/big`, via, true),
      ];
      if (i < 2) continue; // warm-up
      m.viaTtfb!.push(a.ttfb);
      m.viaTotal!.push(a.total);
      m.dirTtfb!.push(b.ttfb);
      m.dirTotal!.push(b.total);
      m.refused!.push(c.total);
      m.small!.push(d.total);
      m.tunnel!.push(e.total);
    }
    const row = (hot_path: string, tg: number[], peer: string, pe: number[], goal?: number, note?: string) => {
      const [t, p] = [median(tg), median(pe)];
      const ratio = t / p;
      h.record({
        area: "egress",
        hot_path,
        toolgate_median_us: t,
        peer,
        peer_median_us: p,
        ratio,
        goal: goal ? `≤ ${goal}×` : null,
        goal_met: goal ? ratio <= goal : null,
        note: `${ROUNDS} alternating rounds, curl's own timings; ranges ${spread(tg)} vs ${spread(pe)}${note ? `; ${note}` : ""}`,
      });
      process.stderr.write(
        `  egress · ${hot_path}: ${(t / 1000).toFixed(2)} ms vs ${(p / 1000).toFixed(2)} ms = ${ratio.toFixed(2)}× (ranges ${spread(tg)} vs ${spread(pe)})\n`,
      );
    };
    row(
      "10 MB GET, total, plain-HTTP forward through bridge + proxy",
      m.viaTotal!,
      "curl straight to the server",
      m.dirTotal!,
      1.2,
      "throughput = 10 MiB / total",
    );
    row(
      "10 MB GET, total, CONNECT tunnel (how HTTPS registries are reached)",
      m.tunnel!,
      "curl straight to the server",
      m.dirTotal!,
      1.2,
    );
    row("10 MB GET, time to first byte, through bridge + proxy", m.viaTtfb!, "curl straight to the server", m.dirTtfb!);
    row("refused request (host not allowed → 403)", m.refused!, "a one-byte GET straight to the server", m.small!);
  } finally {
    bridge?.kill();
    server.proc.kill();
    await proxy.close();
  }
}
