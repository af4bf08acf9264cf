/**
 * bash_execute's egress, end to end: a gateway holding keys, the coding catalog with an egress
 * configuration, real bubblewrap, the real proxy, a local HTTP server started here and the npm
 * registry the machine is configured with (read from `npm config get registry`, never named).
 * A connection needs both the call's capability (`connect` on `host:H:P`) and the operator's
 * allow-list; every refusal is a typed `egress_denied` entry, and the audit lists every connection.
 */
import { execFileSync } from "node:child_process";
import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createCapabilityAuthority } from "../../../src/capability/authority.js";
import { keyRingFromMap } from "../../../src/capability/keys.js";
import { createMemoryStore } from "../../../src/idempotency/stores/memory.js";
import { createMemoryAuditSink } from "../../../src/runtime/audit.js";
import { createGateway } from "../../../src/runtime/gateway.js";
import { createCodingCatalog } from "../../../src/tools/catalog.js";
import type { EgressConfig } from "../../../src/tools/sandbox/egress/policy.js";
import { binaryAvailable, serviceAvailable } from "../../support/require.js";
import { makeWorkspace } from "../fixtures.js";
import { asRoot, bashAsNobody, handToNobody } from "../sandbox/unprivileged.js";

const s = makeWorkspace("egress");
const ready = binaryAvailable("bwrap") && binaryAvailable("curl") && binaryAvailable("npm", ["--version"]);
const keys = keyRingFromMap({ k1: Buffer.alloc(32, 0x5a).toString("base64") }, "egress test keys", "k1");
const HOUR = 3_600_000;

const registry = new URL(execFileSync("npm", ["config", "get", "registry"], { encoding: "utf8" }).trim());
const registryHost = registry.hostname;
const registryPort = Number(registry.port || (registry.protocol === "https:" ? 443 : 80));
let registryUp = false;

/** The local server: what each request carried, and a body of `size` bytes on /big?size=N. */
const seen: { url: string; headers: IncomingHttpHeaders }[] = [];
let server: Server;
let port = 0;
beforeAll(async () => {
  registryUp = ready && (await serviceAvailable(`the npm registry ${registry.origin}`, registryHost, registryPort));
  server = createServer((req, res) => {
    seen.push({ url: req.url ?? "", headers: req.headers });
    // /drip sends a byte every 100 ms until the client leaves: only a cut ends it.
    if (req.url === "/drip") {
      res.writeHead(200);
      const timer = setInterval(() => res.write("."), 100);
      res.on("close", () => clearInterval(timer));
      return;
    }
    const size = Number(new URL(req.url ?? "/", "http://x").searchParams.get("size") ?? 0);
    if (size > 0) return void res.end(Buffer.alloc(size, 0x61));
    res.end(`hello from the host; you sent ${JSON.stringify(req.headers)}\n`);
  });
  await new Promise<void>((r) => server.listen(0, "0.0.0.0", r));
  port = (server.address() as AddressInfo).port;
});
afterAll(async () => {
  await new Promise((r) => server.close(r));
  s.cleanup();
});

interface BashOut {
  exit_code: number | null;
  stdout: string;
  stderr: string;
  sandbox_denied: { code: string; message: string; host?: string; port?: number; reason?: string }[];
}

let n = 0;
/** One bash_execute call through a gateway with `egress`, under a capability for the workspace plus `hosts`. */
async function run(
  egress: EgressConfig | undefined,
  hosts: string[],
  command: string,
  rights = ["execute", "connect"],
) {
  const store = createMemoryStore();
  const audit = createMemoryAuditSink();
  const tools = createCodingCatalog({
    workspace: s.root,
    sandbox: { warn: () => {}, ...(egress ? { egress } : {}) },
  });
  const gateway = createGateway({ tools, store, keys, audit });
  const authority = createCapabilityAuthority({ keys, store });
  const capability = authority.issue({ rights, objects: [`path:${s.root}`, ...hosts], ttl_ms: HOUR });
  try {
    const o = await gateway.call({
      trajectory_id: "t-egress",
      turn: 1,
      call_id: `c${++n}`,
      tool: "bash_execute",
      arguments: { command, timeout_ms: 60_000 },
      capability,
    });
    expect(o.ok, o.text).toBe(true);
    await gateway.close();
    const record = audit.records.at(-1)!;
    return { out: o.output as unknown as BashOut, text: o.text, notes: record.notes };
  } finally {
    await gateway.close();
  }
}
const proxied = (url: string, extra = "") => `curl -sSf --noproxy '' -x http://127.0.0.1:3128 ${extra} ${url}`;
const refusals = (out: BashOut) =>
  out.sandbox_denied.filter((d) => d.code === "egress_denied").map((d) => `${d.host}:${d.port} ${d.reason}`);

describe.skipIf(!ready)("the npm registry npm is configured with", () => {
  const view = `npm view is-number version --registry ${registry.origin}/ --fetch-retries=0 --no-update-notifier`;

  it("npm view succeeds with connect granted on the registry's host", async (t) => {
    if (!registryUp) return t.skip();
    const { out, notes } = await run({ allow: [`${registryHost}:${registryPort}`] }, [`host:${registryHost}`], view);
    expect(out.exit_code, out.stderr).toBe(0);
    expect(out.stdout.trim()).toMatch(/^\d+\.\d+\.\d+$/);
    expect(out.sandbox_denied).toEqual([]);
    const connections = (notes!.egress as { connections: Record<string, unknown>[] }).connections;
    expect(connections[0]).toMatchObject({ host: registryHost, port: registryPort, allowed: true });
    expect(connections[0]!.bytes_in).toBeGreaterThan(0);
  });

  it("without the capability's connect on the host it is refused: not in capability, and the text says it failed because of it", async () => {
    const { out, text, notes } = await run({ allow: [registryHost] }, ["host:elsewhere.example.com"], view);
    expect(out.exit_code).not.toBe(0);
    expect(refusals(out)).toContain(`${registryHost}:${registryPort} not in capability`);
    expect(text).toContain("the command failed after toolgate refused");
    expect(text).toContain(`ask for a capability with the right connect on host:${registryHost}:${registryPort}`);
    const connections = (notes!.egress as { connections: Record<string, unknown>[] }).connections;
    expect(connections[0]).toMatchObject({ host: registryHost, allowed: false, reason: "not in capability" });
  });

  it("with the host on the operator's deny-list it is refused even though both allow it", async () => {
    const { out } = await run({ allow: [registryHost], deny: [registryHost] }, [`host:${registryHost}`], view);
    expect(out.exit_code).not.toBe(0);
    expect(refusals(out)).toContain(`${registryHost}:${registryPort} denied by operator`);
  });

  it("with origin_tls the command asks over plain HTTP and the proxy speaks TLS to the registry itself, adding the header", async (t) => {
    if (!registryUp || registry.protocol !== "https:") return t.skip();
    const { out, notes } = await run(
      {
        allow: [registryHost],
        secrets: [{ host: registryHost, header: "x-toolgate-test", value: "not-a-real-token", origin_tls: true }],
      },
      [`host:${registryHost}:443`],
      proxied(`http://${registryHost}/is-number`, "-o /dev/null -w '%{http_code}'"),
    );
    expect(out.stdout).toBe("200");
    const connections = (notes!.egress as { connections: Record<string, unknown>[] }).connections;
    expect(connections[0]).toMatchObject({ host: registryHost, port: 443, protocol: "http", allowed: true });
  });

  it("not on the operator's allow-list it is refused, saying which flag allows it", async () => {
    const { out } = await run({ allow: ["elsewhere.example.com"] }, [`host:${registryHost}`], view);
    expect(refusals(out)).toContain(`${registryHost}:${registryPort} not allowed by operator`);
    expect(out.sandbox_denied[0]!.message).toContain(`--egress-allow ${registryHost}:${registryPort}`);
  });
});

describe.skipIf(!ready)("a local server reached by a name that resolves to loopback", () => {
  it("is refused as a private address behind an allowed name, then reached once the operator names the address", async () => {
    const url = `http://localhost:${port}/by-name`;
    const before = seen.length;
    const refused = await run({ allow: [`localhost:${port}`] }, [`host:localhost:${port}`], proxied(url));
    expect(refused.out.exit_code).not.toBe(0);
    expect(refusals(refused.out)).toEqual([`localhost:${port} resolves to a private address`]);
    expect(refused.out.sandbox_denied[0]!.message).toContain(`--egress-allow 127.0.0.1:${port}`);
    expect(seen.length).toBe(before);

    const allowed = await run(
      { allow: [`localhost:${port}`, `127.0.0.1:${port}`] },
      [`host:localhost:${port}`],
      proxied(url),
    );
    expect(allowed.out.exit_code, allowed.out.stderr).toBe(0);
    expect(allowed.out.stdout).toContain("hello from the host");
    expect(seen.at(-1)!.url).toBe("/by-name");
  });

  it("SOCKS5 and CONNECT go through the same rules; CONNECT to a port the capability does not grant is refused", async () => {
    const egress = { allow: ["localhost", "127.0.0.1"] };
    const granted = `host:localhost:${port}`;
    const socks = await run(
      egress,
      [granted],
      `curl -sS --noproxy '' -x socks5h://127.0.0.1:1080 http://localhost:${port}/s`,
    );
    expect(socks.out.stdout).toContain("hello from the host");
    const tunnel = await run(egress, [granted], proxied(`http://localhost:${port}/t`, "-p"));
    expect(tunnel.out.stdout).toContain("hello from the host");
    expect(seen.at(-1)!.url).toBe("/t");
    const other = port === 65535 ? port - 1 : port + 1;
    const wrongPort = await run(egress, [granted], proxied(`http://localhost:${other}/t`, "-p"));
    expect(wrongPort.out.exit_code).not.toBe(0);
    expect(refusals(wrongPort.out)).toEqual([`localhost:${other} not in capability`]);
  });

  it("the call's connection cap and byte cap end in a typed denial", async () => {
    const grant = [`host:localhost:${port}`];
    const three = [1, 2, 3].map((i) => proxied(`http://localhost:${port}/n${i}`)).join("; ");
    const conns = await run(
      { allow: [`localhost:${port}`, `127.0.0.1:${port}`], limits: { max_connections: 2 } },
      grant,
      three,
    );
    expect(refusals(conns.out)).toEqual([`localhost:${port} cap exceeded`]);
    expect(conns.out.sandbox_denied[0]!.message).toContain("egress.limits.max_connections");

    const big = proxied(`'http://localhost:${port}/big?size=1000000'`, "-o /dev/null");
    const bytes = await run(
      { allow: [`localhost:${port}`, `127.0.0.1:${port}`], limits: { max_bytes: 100_000 } },
      grant,
      big,
    );
    expect(bytes.out.exit_code).not.toBe(0);
    expect(refusals(bytes.out)).toEqual([`localhost:${port} cap exceeded`]);
    expect(bytes.out.sandbox_denied[0]!.message).toContain("egress.limits.max_bytes");
  });
});

describe.skipIf(!ready)("the time limit of one connection", () => {
  it("a connection that never ends is cut at egress.limits.connection_ms, a typed denial", async () => {
    const { out, notes } = await run(
      { allow: [`localhost:${port}`, `127.0.0.1:${port}`], limits: { connection_ms: 1000 } },
      [`host:localhost:${port}`],
      proxied(`http://localhost:${port}/drip`, "-o /dev/null"),
    );
    expect(out.exit_code).not.toBe(0);
    expect(refusals(out)).toEqual([`localhost:${port} cap exceeded`]);
    expect(out.sandbox_denied[0]!.message).toContain("egress.limits.connection_ms");
    const [connection] = (notes!.egress as { connections: Record<string, unknown>[] }).connections;
    expect(connection).toMatchObject({ allowed: true, error: "cut at the connection time limit of 1000 ms" });
  });
});

describe.skipIf(!ready)("a secret the operator configures for a host", () => {
  const SECRET = "Bearer tg-egress-test-7f3a9c";
  it("is added by the proxy, seen by the server, and never visible to the command", async () => {
    const before = seen.length;
    const command = [
      "env",
      "tr '\\0' '\\n' < /proc/self/environ",
      "cat /proc/[0-9]*/environ | tr '\\0' '\\n'",
      proxied(`http://localhost:${port}/with-token`),
    ].join("; ");
    const { out, text } = await run(
      {
        allow: [`localhost:${port}`, `127.0.0.1:${port}`],
        secrets: [{ host: "localhost", header: "authorization", value: SECRET }],
      },
      [`host:localhost:${port}`],
      command,
    );
    expect(out.exit_code, out.stderr).toBe(0);
    expect(seen.length).toBe(before + 1);
    expect(seen.at(-1)!.headers.authorization).toBe(SECRET);
    // The server echoed the headers back: the command's output has the value removed.
    expect(out.stdout).toContain("HTTP_PROXY=http://127.0.0.1:3128");
    expect(out.stdout).toContain("[secret removed]");
    expect(out.stdout + out.stderr + text).not.toContain("tg-egress-test-7f3a9c");
  });
});

describe.skipIf(!ready)("with the proxy on there is no other route out", () => {
  it("no direct connection, no resolver, host loopback services only through the proxy's rules", async () => {
    const hostAddress = Object.values((await import("node:os")).networkInterfaces())
      .flat()
      .find((a) => a && a.family === "IPv4" && !a.internal)?.address;
    const command = [
      `curl -sS --max-time 5 --noproxy '*' http://127.0.0.1:${port}/direct && echo DIRECT-LOOPBACK`,
      hostAddress
        ? `curl -sS --max-time 5 --noproxy '*' http://${hostAddress}:${port}/direct && echo DIRECT-HOST`
        : "true",
      `(exec 3<>/dev/tcp/127.0.0.1/${port}) 2>/dev/null && echo DEVTCP`,
      `getent hosts ${registryHost} && echo RESOLVED`,
      `curl -sS --unix-socket /run/toolgate/http.sock http://localhost:${port}/via-socket`,
      "echo done",
    ].join("; ");
    const { out } = await run({ allow: [`localhost:${port}`] }, [`host:localhost:${port}`], command);
    expect(out.stdout).not.toMatch(/DIRECT-LOOPBACK|DIRECT-HOST|DEVTCP|RESOLVED|hello from the host/);
    expect(out.stdout).toContain("done");
    // The socket bound in is the proxy itself, which takes only proxy requests, under the same rules.
    expect(out.stdout).toContain("toolgate egress: send requests through the proxy with an absolute http:// URL");
    expect(refusals(out)).toEqual([]);
    expect(seen.some((r) => r.url === "/direct" || r.url === "/via-socket")).toBe(false);
  });

  it("the envelope's other walls stand with the proxy on: its folder read-only, no namespaces, no privilege, the forwarder the command's own user", async () => {
    const command = [
      "touch /run/toolgate/x 2>/dev/null && echo WROTE-RUN",
      "rm -f /run/toolgate/http.sock 2>/dev/null && echo REMOVED-SOCKET",
      "unshare -n true 2>/dev/null && echo UNSHARED",
      "touch /usr/x 2>/dev/null && echo WROTE-USR",
      "ls /etc/ssl/certs >/dev/null && echo CERTS",
      "cat /etc/shadow 2>/dev/null && echo SHADOW",
      // The forwarder's uid: the process whose program is node.
      `for d in /proc/[0-9]*; do tr '\\0' '\\n' < $d/cmdline 2>/dev/null | head -1 | grep -q 'node$' && awk '/^Uid:/ {print $2}' $d/status; done | sort -u | tr '\\n' ' '; echo`,
      "id -u",
    ].join("; ");
    const { out } = await run({ allow: [`localhost:${port}`] }, [], command);
    expect(out.stdout).not.toMatch(/WROTE-RUN|REMOVED-SOCKET|UNSHARED|WROTE-USR|SHADOW/);
    expect(out.stdout).toContain("CERTS");
    const [uids, own] = out.stdout.trim().split("\n").slice(-2) as [string, string];
    // The forwarder runs as the command's own unprivileged user, started after the uid switch.
    expect(uids.trim()).toBe(own.trim());
    expect(own.trim()).not.toBe("0");
  });

  it("an allowed host where nothing listens is told apart from a refusal", async () => {
    // A port just freed: nothing listens there.
    const spare = createServer();
    await new Promise<void>((r) => spare.listen(0, "127.0.0.1", r));
    const closed = (spare.address() as AddressInfo).port;
    await new Promise((r) => spare.close(r));
    const { out } = await run(
      { allow: [`localhost:${closed}`, `127.0.0.1:${closed}`] },
      [`host:localhost:${closed}`],
      proxied(`http://localhost:${closed}/`),
    );
    expect(refusals(out)).toEqual([]);
    expect(out.sandbox_denied).toEqual([
      expect.objectContaining({
        code: "host_service_unreachable",
        message: expect.stringContaining(`toolgate's proxy allowed localhost:${closed} but could not reach it`),
      }),
    ]);
  });

  it("no egress configured: no proxy, no socket, no network, as before", async () => {
    const { out } = await run(
      undefined,
      [`host:localhost:${port}`],
      `${proxied(`http://localhost:${port}/none`)}; ls /run/toolgate; echo done`,
    );
    expect(out.stdout).toContain("done");
    expect(out.stderr).toMatch(/Couldn't connect|Failed to connect/);
    expect(out.stderr).toMatch(/No such file/);
    expect(seen.some((r) => r.url === "/none")).toBe(false);
  });
});

describe.skipIf(!ready || !asRoot)(
  "run by an unprivileged toolgate (uid 65534, its own user namespace for bwrap)",
  () => {
    it("the proxy's rules hold the same: a private address refused behind a name, reached when named, no direct route", async () => {
      const w = makeWorkspace("egress-nobody");
      try {
        handToNobody(w.base, w.root);
        const named = `http://localhost:${port}/nobody`;
        const command = [
          proxied(named),
          `curl -sS --max-time 5 --noproxy '*' http://127.0.0.1:${port}/direct-nobody && echo DIRECT`,
          "echo done",
        ].join("; ");
        const refused = await bashAsNobody(w.root, command, undefined, undefined, { allow: [`localhost:${port}`] });
        expect(refused.error).toBeUndefined();
        expect(refused.output!.stdout).not.toMatch(/DIRECT|hello from the host/);
        expect(refused.output!.sandbox_denied.map((d) => d.code)).toContain("egress_denied");
        expect(refused.text).toContain(`localhost:${port} (resolves to a private address)`);
        const allowed = await bashAsNobody(w.root, proxied(named), undefined, undefined, {
          allow: [`localhost:${port}`, `127.0.0.1:${port}`],
        });
        expect(allowed.output!.stdout).toContain("hello from the host");
        expect(seen.some((r) => r.url === "/direct-nobody")).toBe(false);
      } finally {
        w.cleanup();
      }
    });
  },
);
