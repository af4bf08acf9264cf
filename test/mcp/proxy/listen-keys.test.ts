/**
 * A 2026-07-28 `subscriptions/listen` naming `resourceSubscriptions` is checked as a 2025-11-25
 * resources/subscribe is: on a gateway with keys it needs a capability that verifies (from the
 * listen's `_meta`, an Authorization: Bearer header over HTTP, or the session's `--capability` over
 * stdio), else it is refused with -32600 naming where to send one and nothing is subscribed
 * upstream; and each URI leaves a `kind: "read"` audit line (operation `subscriptions/listen`, its
 * grant and upstream), ok or refused. Over stdio through the real `toolgate proxy` process and over
 * Streamable HTTP in process, with the real SDK v2 client and the listing fixture upstream.
 */
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { Client, ProtocolError, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { createCapabilityAuthority } from "../../../src/capability/authority.js";
import { loadKeys } from "../../../src/capability/keys.js";
import { openStore } from "../../../src/idempotency/open.js";
import { createMemoryAuditSink } from "../../../src/runtime/audit.js";
import type { ReadAuditRecord } from "../../../src/runtime/types.js";
import { createGateway } from "../../../src/runtime/gateway.js";
import { createProxy } from "../../../src/mcp/proxy/proxy.js";
import { serveHttp } from "../../../src/mcp/transports/http.js";
import { proxyProcess } from "../../support/proxy-process.js";
import { refusal, tempDir, textOf, until } from "../support.js";

const listing = fileURLToPath(new URL("../fixtures/listing-server.mjs", import.meta.url));
const URI = "listing://item/0";
const MODERN = { versionNegotiation: { mode: { pin: "2026-07-28" as const } } };

function readAuditReads(file: string): ReadAuditRecord[] {
  if (!existsSync(file)) return [];
  return readFileSync(file, "utf8")
    .split("\n")
    .filter(Boolean)
    .map((l) => JSON.parse(l) as ReadAuditRecord)
    .filter((l) => l.kind === "read");
}

const cleanup: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const done of cleanup.splice(0).reverse()) await done().catch(() => {});
});

/** A key file outside any workspace and a read grant on the proxied tools, issued under its keys. */
function keysAndGrant(): { keyFile: string; grant: string } {
  const keyFile = join(tempDir("listen-keys"), "keys.json");
  writeFileSync(keyFile, JSON.stringify({ k1: Buffer.alloc(32, 7).toString("base64") }));
  const grant = createCapabilityAuthority({ keys: loadKeys({ file: keyFile }) }).issue({
    rights: ["read"],
    objects: ["tool:subs"],
    ttl_ms: 600_000,
  });
  return { keyFile, grant };
}

async function stdioClient(flags: string[], audit: string): Promise<Client> {
  const client = new Client({ name: "listen-keys", version: "1.0.0" }, MODERN);
  await client.connect(new StdioClientTransport(proxyProcess([listing], "listen-keys", flags, audit)));
  cleanup.push(() => client.close());
  return client;
}

describe("a listen's resourceSubscriptions on a gateway with keys", { timeout: 60_000 }, () => {
  it("over stdio: refused without a capability, nothing subscribed upstream; held with --capability; both audited", async () => {
    const { keyFile, grant } = keysAndGrant();
    const audit = join(tempDir("listen-keys-state"), "audit.jsonl");
    const bare = await stdioClient(["--keys", keyFile], audit);
    const none = await refusal(bare.listen({ resourceSubscriptions: [URI] }), ProtocolError);
    expect(none.code).toBe(-32600);
    expect(none.message).toContain(
      'subscriptions/listen params.notifications.resourceSubscriptions needs a capability on this server: send it in params._meta["toolgate/capability"]',
    );
    expect(none.message).not.toContain("Authorization");
    // The upstream was never asked: the same client, with the grant, sees no subscription there.
    const before = await bare.callTool({ name: "subs", arguments: {}, _meta: { "toolgate/capability": grant } });
    expect(textOf(before)).toContain("subscribes=0");

    const forged = await stdioClient(["--keys", keyFile, "--capability", "tg1.forged"], audit);
    const bad = await refusal(forged.listen({ resourceSubscriptions: [URI] }), ProtocolError);
    expect(bad.code).toBe(-32600);
    expect(bad.message).toContain("the capability sent does not verify on this server");

    const granted = await stdioClient(["--keys", keyFile, "--capability", grant], audit);
    const sub = await granted.listen({ resourceSubscriptions: [URI] });
    cleanup.push(() => sub.close());
    expect(textOf(await granted.callTool({ name: "subs", arguments: {} }))).toContain(`subscribed=${URI}`);

    await until(() => readAuditReads(audit).filter((l) => l.operation === "subscriptions/listen").length >= 3);
    const lines = readAuditReads(audit).filter((l) => l.operation === "subscriptions/listen");
    expect(lines.map((l) => [l.target, l.outcome, l.grant === null, l.source])).toEqual([
      [URI, "refused", true, null],
      [URI, "refused", true, null],
      [URI, "ok", false, expect.stringContaining("listing-server.mjs")],
    ]);
    expect(lines[0]!.reason).toContain("needs a capability on this server");
  });

  it("over HTTP: refused without a bearer or with one that does not verify; held with a Bearer grant", async () => {
    const { keyFile, grant } = keysAndGrant();
    const sink = createMemoryAuditSink();
    const proxy = await createProxy({
      upstream: { command: process.execPath, args: [listing] },
      gateway: async (tools) =>
        createGateway({ tools, store: await openStore("memory:"), audit: sink, keys: loadKeys({ file: keyFile }) }),
      log: () => {},
    });
    cleanup.push(() => proxy.close({ grace_ms: 100 }));
    const http = await serveHttp(proxy.gateway, { port: 0, warn: () => {}, passThrough: proxy.passThrough });
    cleanup.push(() => http.close());
    const connect = async (bearer?: string) => {
      const client = new Client({ name: "listen-keys-http", version: "1.0.0" }, MODERN);
      await client.connect(
        new StreamableHTTPClientTransport(
          http.url,
          bearer ? { requestInit: { headers: { authorization: `Bearer ${bearer}` } } } : {},
        ),
      );
      cleanup.push(() => client.close());
      return client;
    };

    const none = await refusal((await connect()).listen({ resourceSubscriptions: [URI] }), ProtocolError);
    expect(none.code).toBe(-32600);
    expect(none.message).toContain(
      'needs a capability on this server: send it in params._meta["toolgate/capability"] or an Authorization: Bearer header',
    );
    const forged = await refusal((await connect("tg1.forged")).listen({ resourceSubscriptions: [URI] }), ProtocolError);
    expect(forged.message).toContain("the capability sent does not verify on this server");

    const client = await connect(grant);
    expect(textOf(await client.callTool({ name: "subs", arguments: {} }))).toContain("subscribes=0");
    const sub = await client.listen({ resourceSubscriptions: [URI] });
    cleanup.push(() => sub.close());
    expect(textOf(await client.callTool({ name: "subs", arguments: {} }))).toContain(`subscribed=${URI}`);

    const lines = sink.reads.filter((l) => l.operation === "subscriptions/listen");
    expect(lines.map((l) => [l.target, l.outcome, l.source])).toEqual([
      [URI, "refused", null],
      [URI, "refused", null],
      [URI, "ok", expect.stringContaining("listing-server.mjs")],
    ]);
    expect(lines[2]!.grant).not.toBeNull();
    expect(lines[2]!.principal).toContain("capability");
  });
});
