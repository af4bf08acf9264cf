/**
 * `toolgate serve --http` on an address the system refuses: the start fails with the flag, the
 * address, why and what to pass instead — not Node's bare `listen EADDRINUSE` as an unexpected
 * error — and the gateway's state is closed (nothing ran).
 */
import net from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { runGatewayServer, listenError } from "../../../src/cli/host/run.js";
import { ToolgateError } from "../../../src/core/errors.js";
import { createGateway } from "../../../src/runtime/gateway.js";
import { openStore } from "../../../src/idempotency/open.js";
import catalog from "../../mcp/fixtures/notes-catalog.js";

const held: net.Server[] = [];
afterEach(async () => {
  for (const s of held.splice(0)) await new Promise((resolve) => s.close(resolve));
});

async function occupiedPort(): Promise<number> {
  const s = net.createServer();
  held.push(s);
  await new Promise<void>((resolve) => s.listen(0, "127.0.0.1", resolve));
  return (s.address() as net.AddressInfo).port;
}

const gateway = async () => createGateway({ tools: catalog, store: await openStore("memory:"), audit: false });
const never = new Promise<string>(() => {});

describe("runGatewayServer on an address it cannot listen on", () => {
  it("a port in use names --http, the port and a free one to choose", async () => {
    const port = await occupiedPort();
    const gw = await gateway();
    const err = await runGatewayServer(gw, { http: { host: "127.0.0.1", port }, stop: never, log: () => {} }).catch(
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(ToolgateError);
    expect((err as ToolgateError).code).toBe("bad_address");
    expect((err as Error).message).toBe(
      `cannot serve --http 127.0.0.1:${port}: port ${port} is already in use on 127.0.0.1 (another toolgate, or another program, listens there); stop that one, or choose another port, e.g. --http 127.0.0.1:${port === 65535 ? 8765 : port + 1}, or --http 127.0.0.1:0 for any free port`,
    );
    // The state was closed at the refusal: a call now is refused as a closed gateway's, nothing runs.
    const obs = await gw.call({
      trajectory_id: "t",
      turn: 0,
      call_id: "c",
      tool: "note_read",
      arguments: { name: "a" },
    });
    expect(obs.ok).toBe(false);
  });

  it("an address that is not this machine's says which to use", async () => {
    const gw = await gateway();
    // 192.0.2.0/24 is TEST-NET-1 (RFC 5737): never an address of this machine.
    const err = await runGatewayServer(gw, {
      http: { host: "192.0.2.1", port: 0 },
      noAuth: true,
      stop: never,
      log: () => {},
    }).catch((e: unknown) => e);
    expect((err as ToolgateError).code).toBe("bad_address");
    expect((err as Error).message).toBe(
      "cannot serve --http 192.0.2.1:0: 192.0.2.1 is not an address of this machine; use 127.0.0.1 (loopback), one of its interfaces' addresses, or 0.0.0.0 (every interface, with --keys)",
    );
  });

  it("a request body that is not JSON is logged as what it is, not as the parser's bare words", async () => {
    const gw = await gateway();
    const lines: string[] = [];
    let stop!: (why: string) => void;
    let url!: string;
    const listening = new Promise<void>((resolve) => {
      void runGatewayServer(gw, {
        http: { host: "127.0.0.1", port: 0 },
        stop: new Promise<string>((r) => (stop = r)),
        log: (line) => lines.push(line),
        onListening: (where) => {
          url = where;
          resolve();
        },
      });
    });
    await listening;
    const res = await fetch(url, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
      body: "{bad json",
    });
    expect(res.status).toBe(400);
    expect(lines.filter((l) => l.includes("not JSON"))).toEqual([
      expect.stringMatching(
        /^toolgate: a client sent a request body that is not JSON \(answered -32700, Parse error\): \S/,
      ),
    ]);
    // The parser quotes the body's start: a client's escape sequence (OSC 52 writes the clipboard) or line break
    // reaches the operator's terminal shown, not run.
    const forged = await fetch(url, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
      body: "\u001b]52;c;eA==\u0007\ntoolgate: forged",
    });
    expect(forged.status).toBe(400);
    const shown = lines.filter((l) => l.includes("not JSON"))[1];
    expect(shown).toContain("\\u{001B}]52");
    for (const raw of ["\u001b", "\u0007", "\n"]) expect(shown).not.toContain(raw);
    stop("SIGTERM");
  });

  it("a privileged port names the range, an IPv6 host is bracketed, and any other error passes as it was", () => {
    const denied = Object.assign(new Error("listen EACCES: permission denied ::1:80"), { code: "EACCES" });
    expect((listenError(denied, { host: "::1", port: 80 }) as Error).message).toBe(
      "cannot serve --http [::1]:80: the system does not let this user listen on port 80 (ports below 1024 need privilege); choose a port from 1024 to 65535, e.g. --http [::1]:8765",
    );
    const other = Object.assign(new Error("boom"), { code: "EMFILE" });
    expect(listenError(other, { host: "127.0.0.1", port: 8765 })).toBe(other);
  });
});
