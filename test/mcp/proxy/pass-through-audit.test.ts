/**
 * The audit lines of the pass-through requests besides the reads (those are in
 * pass-through-policy.test.ts): each resources/list, resources/templates/list, prompts/list,
 * resources/subscribe and resources/unsubscribe through a real `toolgate proxy` process over stdio,
 * asked by the SDK v2 client in both revisions, leaves one `kind: "read"` line in the real audit
 * file, ok or refused; and `toolgate stats` reports those lines per operation.
 */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { Client, ProtocolError } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import type { ReadAuditRecord } from "../../../src/runtime/types.js";
import type { Stats } from "../../../src/runtime/stats.js";
import { proxyProcess } from "../../support/proxy-process.js";
import { cli } from "../../support/cli.js";
import { refusal, tempDir, textOf, until } from "../support.js";

const listing = fileURLToPath(new URL("../fixtures/listing-server.mjs", import.meta.url));

const clients: Client[] = [];
afterEach(async () => {
  await Promise.allSettled(clients.splice(0).map((c) => c.close()));
});

function readLines(file: string): ReadAuditRecord[] {
  if (!existsSync(file)) return [];
  return readFileSync(file, "utf8")
    .split("\n")
    .filter(Boolean)
    .map((l) => JSON.parse(l) as ReadAuditRecord & { kind?: string })
    .filter((l) => l.kind === "read");
}

async function connect(era: "2025-11-25" | "2026-07-28", audit: string): Promise<Client> {
  const client = new Client(
    { name: `audit-${era}`, version: "1.0.0" },
    era === "2026-07-28" ? { versionNegotiation: { mode: { pin: "2026-07-28" } } } : {},
  );
  await client.connect(new StdioClientTransport(proxyProcess([listing], `pass-through-audit-${era}`, [], audit)));
  clients.push(client);
  return client;
}

describe.each(["2025-11-25", "2026-07-28"] as const)(
  "a %s client of toolgate proxy over stdio",
  { timeout: 60_000 },
  (era) => {
    it("leaves one audit line per list request, ok or refused, with no target and no source", async () => {
      const audit = join(tempDir(`pass-through-audit-${era}-state`), "audit.jsonl");
      const c = await connect(era, audit);
      const resources = await c.listResources(undefined, { cacheMode: "bypass" });
      const templates = await c.listResourceTemplates(undefined, { cacheMode: "bypass" });
      const prompts = await c.listPrompts(undefined, { cacheMode: "bypass" });
      const bad = await refusal(c.listPrompts({ cursor: "not-a-cursor" }, { cacheMode: "bypass" }), ProtocolError);
      expect(bad.code).toBe(-32602);
      await until(() => readLines(audit).length >= 4);
      const lines = readLines(audit);
      expect(lines.map((l) => [l.operation, l.target, l.source, l.outcome, l.grant])).toEqual([
        ["resources/list", null, null, "ok", null],
        ["resources/templates/list", null, null, "ok", null],
        ["prompts/list", null, null, "ok", null],
        ["prompts/list", null, null, "refused", null],
      ]);
      // The answer's size as for a read: the JSON of the result sent.
      expect(lines[0]!.answer_chars).toBeGreaterThanOrEqual(JSON.stringify(resources.resources).length);
      expect(lines[1]!.answer_chars).toBeGreaterThanOrEqual(JSON.stringify(templates.resourceTemplates).length);
      expect(lines[2]!.answer_chars).toBeGreaterThanOrEqual(JSON.stringify(prompts.prompts).length);
      expect(lines[3]!.reason).toBe(bad.message.replace(/^MCP error -32602: /, ""));
      expect(lines.every((l) => l.principal === "stdio client" && typeof l.latency_ms === "number")).toBe(true);
    });
  },
);

describe("resources/subscribe and resources/unsubscribe through toolgate proxy over stdio", { timeout: 60_000 }, () => {
  it("leave one audit line each: the URI, the upstream holding it, the outcome; toolgate stats reports them", async () => {
    const audit = join(tempDir("pass-through-audit-subscribe-state"), "audit.jsonl");
    const c = await connect("2025-11-25", audit);
    await c.subscribeResource({ uri: "listing://item/0" });
    expect(textOf(await c.callTool({ name: "subs", arguments: {} }))).toContain("subscribed=listing://item/0 ");
    const refused = await refusal(c.subscribeResource({ uri: "listing://\u202eitem" }), ProtocolError);
    expect(refused.code).toBe(-32602);
    await c.unsubscribeResource({ uri: "listing://item/0" });
    await until(() => readLines(audit).length >= 3);
    const lines = readLines(audit);
    expect(lines.map((l) => [l.operation, l.target, l.outcome, l.answer_chars])).toEqual([
      ["resources/subscribe", "listing://item/0", "ok", 2],
      ["resources/subscribe", "listing://\u202eitem", "refused", 0],
      ["resources/unsubscribe", "listing://item/0", "ok", 2],
    ]);
    expect(lines[0]!.source).toContain("listing");
    expect(lines[1]!.source).toBeNull();
    expect(lines[1]!.reason).toMatch(
      /^resources\/subscribe params\.uri must be a resource's URI .*control or invisible characters/,
    );
    expect(lines[2]!.source).toBeNull();

    // The call's line is there too; stats counts it as a call and the others as reads, per operation.
    await until(() => readFileSync(audit, "utf8").includes('"tool":"subs"'));
    const run = await cli("stats", "--audit", audit, "--json");
    expect(run.code).toBe(0);
    const stats = JSON.parse(run.out) as Stats;
    expect(Object.keys(stats.tools)).toEqual(["subs"]);
    expect(stats.reads.operations["resources/subscribe"]).toMatchObject({ requests: 2, ok: 1, refused: 1, error: 0 });
    expect(stats.reads.operations["resources/unsubscribe"]).toMatchObject({ requests: 1, ok: 1 });
    expect(stats.reads.overall.requests).toBe(3);
    const table = await cli("stats", "--audit", audit);
    expect(table.out).toMatch(/^resources\/subscribe +2 +1 +1 +0 /m);
  });
});
