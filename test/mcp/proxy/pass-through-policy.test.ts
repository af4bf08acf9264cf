/**
 * What the operator decides about the pass-through, through a real proxy in front of the real
 * server-everything (and the listing fixture, whose prompts change), asked by real SDK v2 clients
 * of both revisions over Streamable HTTP: include/exclude lists for prompts and resources hide
 * what they name from the lists and from every direct request (answered as a name nothing
 * serves); every resources/read, prompts/get and completion/complete leaves one line in the
 * audit trail the tool calls write to, whatever its outcome; and 2026-07-28 list results carry
 * cache hints that a list_changed from the upstream invalidates.
 */
import { randomBytes } from "node:crypto";
import { readFileSync, existsSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Client, ProtocolError, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { Client as V1Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport as V1HttpTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { createCapabilityAuthority } from "../../../src/capability/authority.js";
import { keyRingFromMap } from "../../../src/capability/keys.js";
import { createMemoryStore } from "../../../src/idempotency/stores/memory.js";
import { createAuditSink } from "../../../src/runtime/audit.js";
import { createGateway } from "../../../src/runtime/gateway.js";
import { auditStats } from "../../../src/runtime/stats.js";
import type { ReadAuditRecord } from "../../../src/runtime/types.js";
import { serveHttp, type HttpHandle } from "../../../src/mcp/transports/http.js";
import { createProxy, type Proxy } from "../../../src/mcp/proxy/proxy.js";
import { DEFAULT_LIST_TTL_MS } from "../../../src/mcp/server/server.js";
import { httpProxies, type Era } from "./http-proxies.js";
import { refusal, tempDir, until } from "../support.js";

const everything = fileURLToPath(import.meta.resolve("@modelcontextprotocol/server-everything/dist/index.js"));
const listing = fileURLToPath(new URL("../fixtures/listing-server.mjs", import.meta.url));
const TRACEPARENT = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

let proxy: Proxy;
let http: HttpHandle;
let auditFile: string;
let grant: string;
let grantId: string;
const clients: Array<{ close(): Promise<void> }> = [];

beforeAll(async () => {
  const keys = keyRingFromMap({ k1: randomBytes(32).toString("base64") }, "test");
  const store = createMemoryStore();
  auditFile = join(tempDir("pass-through-policy"), "state", "audit.jsonl");
  proxy = await createProxy({
    upstream: { command: process.execPath, args: [everything, "stdio"] },
    gateway: (tools) => createGateway({ tools, store, keys, audit: createAuditSink(auditFile) }),
    log: () => {},
    prompts: { exclude: ["args-prompt"], said: { include: "--include-prompt", exclude: "--exclude-prompt" } },
    resources: {
      exclude: ["demo://resource/dynamic/blob/*"],
      said: { include: "--include-resource", exclude: "--exclude-resource" },
    },
  });
  http = await serveHttp(proxy.gateway, { port: 0, warn: () => {}, passThrough: proxy.passThrough });
  const authority = createCapabilityAuthority({ keys, store });
  grant = authority.issue({ rights: ["read"], objects: ["tool:echo"], ttl_ms: 600_000 });
  grantId = (await authority.holder(grant))!.grant;
}, 60_000);

afterAll(async () => {
  await Promise.allSettled(clients.map((c) => c.close()));
  await http?.close();
  await proxy?.close({ grace_ms: 100 });
});

/** An SDK v2 client of `era`, sending the grant as its bearer (or no capability at all). */
async function connect(era: Era, bearer: string | null = grant): Promise<Client> {
  const c = new Client(
    { name: `policy-${era}`, version: "1.0.0" },
    era === "2026-07-28" ? { versionNegotiation: { mode: { pin: "2026-07-28" } } } : {},
  );
  const headers: Record<string, string> = bearer === null ? {} : { authorization: `Bearer ${bearer}` };
  await c.connect(new StreamableHTTPClientTransport(http.url, { requestInit: { headers } }));
  clients.push(c);
  return c;
}

/** The trail's read lines so far. */
function readLines(): ReadAuditRecord[] {
  if (!existsSync(auditFile)) return [];
  return readFileSync(auditFile, "utf8")
    .split("\n")
    .filter(Boolean)
    .map((l) => JSON.parse(l) as ReadAuditRecord & { kind?: string })
    .filter((l) => l.kind === "read");
}

describe.each(["2025-11-25", "2026-07-28"] as const)("a %s client", { timeout: 60_000 }, (era) => {
  it("is not shown what the lists exclude, and a get, read or completion naming it answers as for a name nothing serves", async () => {
    const c = await connect(era);
    const { prompts } = await c.listPrompts();
    expect(prompts.map((p) => p.name)).toEqual(["simple-prompt", "completable-prompt", "resource-prompt"]);
    const { resourceTemplates } = await c.listResourceTemplates();
    expect(resourceTemplates.map((t) => t.uriTemplate)).toEqual(["demo://resource/dynamic/text/{resourceId}"]);
    const got = await refusal(c.getPrompt({ name: "args-prompt", arguments: { city: "Lyon" } }), ProtocolError);
    expect(got.code).toBe(-32602);
    expect(got.message).toContain('prompts/get params.name "args-prompt" is not a prompt this server serves');
    expect(got.message).toContain("call prompts/list for the names");
    const read = await refusal(
      c.readResource({ uri: "demo://resource/dynamic/blob/7" }, { cacheMode: "bypass" }),
      ProtocolError,
    );
    expect(read.code).toBe(-32602);
    expect(read.message).toContain(
      'resources/read params.uri "demo://resource/dynamic/blob/7" is not a resource any upstream lists, and matches none of their templates',
    );
    const template = await refusal(
      c.complete({
        ref: { type: "ref/resource", uri: "demo://resource/dynamic/blob/{resourceId}" },
        argument: { name: "resourceId", value: "" },
      }),
      ProtocolError,
    );
    expect(template.code).toBe(-32602);
    expect(template.message).toContain("is not a resource template this server serves");
    const prompt = await refusal(
      c.complete({ ref: { type: "ref/prompt", name: "args-prompt" }, argument: { name: "city", value: "" } }),
      ProtocolError,
    );
    expect(prompt.message).toContain('completion/complete params.ref.name "args-prompt" is not a prompt');
    // A URI spelled to reach what the lists exclude (dot segments, encoded separators, a
    // backslash) is refused as one the lists cannot judge, whatever the upstream would make of it.
    for (const uri of [
      "demo://resource/dynamic/text/../blob/7",
      "demo://resource/dynamic/text/./../blob/7",
      "demo://resource/dynamic/text%2F..%2Fblob/7",
      "demo://resource/dynamic/%2e%2e/dynamic/blob/7",
      "demo://resource/dynamic/text\\..\\blob/7",
    ]) {
      const sneaked = await refusal(c.readResource({ uri }, { cacheMode: "bypass" }), ProtocolError);
      expect(sneaked.code, uri).toBe(-32602);
      expect(sneaked.message).toContain(
        "which the proxy's resource include/exclude lists cannot judge (the upstream may resolve it elsewhere); send the URI in its normal form",
      );
    }
    // What the lists let through is served as before.
    const text = await c.readResource({ uri: "demo://resource/dynamic/text/3" }, { cacheMode: "bypass" });
    expect(text.contents[0]!.uri).toBe("demo://resource/dynamic/text/3");
  });

  it(
    era === "2026-07-28"
      ? "gets cache hints on every pass-through list, private, for as long as tools/list"
      : "gets no cache fields on the lists",
    async () => {
      const c = await connect(era);
      const answers = [await c.listPrompts(), await c.listResources(), await c.listResourceTemplates()];
      for (const answer of answers) {
        const hint = answer as { ttlMs?: unknown; cacheScope?: unknown };
        if (era === "2026-07-28") expect(hint).toMatchObject({ ttlMs: DEFAULT_LIST_TTL_MS, cacheScope: "private" });
        else {
          expect(hint.ttlMs).toBeUndefined();
          expect(hint.cacheScope).toBeUndefined();
        }
      }
    },
  );
});

describe("the v1 client (2025-11-25)", { timeout: 60_000 }, () => {
  it("gets no cache fields, which its loose result schemas would keep", async () => {
    const c = new V1Client({ name: "v1", version: "1.0.0" });
    await c.connect(new V1HttpTransport(http.url, { requestInit: { headers: { authorization: `Bearer ${grant}` } } }));
    clients.push(c);
    const answer = (await c.listPrompts()) as Record<string, unknown>;
    expect(answer.prompts).toBeDefined();
    expect(Object.keys(answer)).not.toContain("ttlMs");
    expect(Object.keys(answer)).not.toContain("cacheScope");
  });
});

describe("the audit trail", { timeout: 60_000 }, () => {
  it("has one line per read, prompt and completion, ok, refused or failed, beside the tool calls' lines", async () => {
    const before = readLines().length;
    const legacy = await connect("2025-11-25");
    const modern = await connect("2026-07-28");
    const anonymous = await connect("2026-07-28", null);
    const read = await legacy.readResource(
      { uri: "demo://resource/dynamic/text/1", _meta: { traceparent: TRACEPARENT } },
      { cacheMode: "bypass" },
    );
    await modern.getPrompt({ name: "simple-prompt", _meta: { traceparent: "not-a-traceparent" } });
    await modern.complete({
      ref: { type: "ref/prompt", name: "completable-prompt" },
      argument: { name: "department", value: "E" },
    });
    await refusal(anonymous.readResource({ uri: "demo://resource/dynamic/text/2" }, { cacheMode: "bypass" }), Error);
    await refusal(modern.readResource({ uri: "demo://resource/dynamic/blob/1" }, { cacheMode: "bypass" }), Error);
    await refusal(modern.readResource({ uri: "demo://nothing" }, { cacheMode: "bypass" }), Error);
    await modern.callTool({ name: "echo", arguments: { message: "beside" } });
    // The list requests' own lines (pass-through-audit.test.ts), which the SDK client may send
    // before a read or a completion, are not this test's.
    const asked = () =>
      readLines()
        .slice(before)
        .filter((l) => !l.operation.endsWith("/list"));
    await until(() => asked().length >= 6);
    const lines = asked();
    expect(lines).toHaveLength(6);
    const [ok, prompt, completion, anon, hidden, failed] = lines;
    expect(ok).toMatchObject({
      kind: "read",
      operation: "resources/read",
      target: "demo://resource/dynamic/text/1",
      grant: grantId,
      outcome: "ok",
      answer_chars: JSON.stringify(read).length,
      trace: { traceparent: TRACEPARENT },
    });
    expect(ok!.source).toContain("server-everything");
    expect(typeof ok!.principal).toBe("string");
    expect(Number.isNaN(Date.parse(ok!.ts))).toBe(false);
    expect(prompt).toMatchObject({ operation: "prompts/get", target: "simple-prompt", outcome: "ok", grant: grantId });
    expect(prompt!.trace).toBeUndefined();
    expect(prompt!.trace_ignored).toContain("traceparent");
    expect(completion).toMatchObject({
      operation: "completion/complete",
      target: "completable-prompt",
      outcome: "ok",
    });
    expect(completion!.answer_chars).toBeGreaterThan(0);
    expect(anon).toMatchObject({
      target: "demo://resource/dynamic/text/2",
      outcome: "refused",
      grant: null,
      source: null,
    });
    expect(anon!.reason).toContain("resources/read needs a capability on this server");
    expect(hidden).toMatchObject({ target: "demo://resource/dynamic/blob/1", outcome: "refused", source: null });
    expect(hidden!.reason).toContain("is not a resource any upstream lists");
    expect(failed).toMatchObject({ target: "demo://nothing", outcome: "error", answer_chars: 0, grant: grantId });
    expect(failed!.source).toContain("server-everything");
    expect(failed!.reason).toContain("resources/read: the upstream");
    // One trail: the call's line is there too, and the readers of calls count only calls.
    await until(() => auditStats(readFileSync(auditFile, "utf8")).overall.calls >= 1);
    const stats = auditStats(readFileSync(auditFile, "utf8"));
    expect(stats.broken_lines).toBe(0);
    expect(Object.keys(stats.tools)).toEqual(["echo"]);
  });
});

describe("cache hints and list_changed", { timeout: 120_000 }, () => {
  const proxies = httpProxies("policy-list-changed");
  afterAll(proxies.close);

  it("a 2026-07-28 client keeps a list for its ttl, and the upstream's prompts/list_changed makes it stale", async () => {
    const { http: endpoint } = await proxies.serve([listing]);
    const legacy = await proxies.connect(endpoint, "2025-11-25");
    const listening = await proxies.connect(endpoint, "2026-07-28");
    const deaf = await proxies.connect(endpoint, "2026-07-28");
    let heard = 0;
    listening.setNotificationHandler("notifications/prompts/list_changed", () => void (heard += 1));
    const sub = await listening.listen({ promptsListChanged: true });
    const first = await listening.listPrompts();
    expect(first).toMatchObject({ ttlMs: DEFAULT_LIST_TTL_MS, cacheScope: "private" });
    expect(first.prompts.map((p) => p.name)).toEqual(["greet"]);
    expect((await deaf.listPrompts()).prompts.map((p) => p.name)).toEqual(["greet"]);
    await legacy.callTool({ name: "rename", arguments: {} });
    await until(() => heard > 0);
    // The notification invalidated the listener's copy; the one that heard nothing keeps its fresh copy.
    expect((await listening.listPrompts()).prompts.map((p) => p.name)).toEqual(["welcome"]);
    expect((await deaf.listPrompts()).prompts.map((p) => p.name)).toEqual(["greet"]);
    expect((await deaf.listPrompts({}, { cacheMode: "bypass" })).prompts.map((p) => p.name)).toEqual(["welcome"]);
    await sub.close();
  });
});
