/**
 * tools/list in one order whatever order the tools were registered in, and with the 2026-07-28
 * revision's cache fields (a 2025-11-25 result has none), asked by the real SDK v2 client over
 * Streamable HTTP in both revisions.
 */
import { afterEach, describe, expect, it } from "vitest";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { createGateway } from "../../../src/runtime/gateway.js";
import { openStore } from "../../../src/idempotency/open.js";
import { createMcpServer, DEFAULT_LIST_TTL_MS } from "../../../src/mcp/server/server.js";
import { serveHttp, type HttpOptions } from "../../../src/mcp/transports/http.js";
import type { ToolSpec } from "../../../src/core/tool.js";
import catalog from "../fixtures/notes-catalog.js";

const cleanup: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const done of cleanup.splice(0).reverse()) await done().catch(() => {});
});

async function list(era: "2025-11-25" | "2026-07-28", tools: ToolSpec[], options: Partial<HttpOptions> = {}) {
  const gateway = createGateway({ tools, store: await openStore("memory:"), audit: false });
  const http = await serveHttp(gateway, { port: 0, warn: () => {}, ...options });
  cleanup.push(async () => {
    await http.close();
    await gateway.close();
  });
  const c = new Client(
    { name: `list-${era}`, version: "1.0.0" },
    era === "2026-07-28" ? { versionNegotiation: { mode: { pin: "2026-07-28" } } } : {},
  );
  await c.connect(new StreamableHTTPClientTransport(http.url));
  cleanup.push(() => c.close());
  return (await c.listTools()) as { tools: { name: string }[]; ttlMs?: number; cacheScope?: string };
}

describe.each(["2025-11-25", "2026-07-28"] as const)("tools/list to a %s client", { timeout: 30_000 }, (era) => {
  it("is in name order whatever order the tools were registered in", async () => {
    const forward = await list(era, catalog);
    const backward = await list(era, [...catalog].reverse());
    const names = catalog.map((t) => t.name);
    expect(forward.tools.map((t) => t.name)).toEqual([...names].sort());
    expect(backward.tools).toEqual(forward.tools);
  });

  it(
    era === "2026-07-28"
      ? "says how long the client may keep it, for this client only (ttlMs, cacheScope private)"
      : "carries no cache fields, which this revision does not have",
    async () => {
      const result = await list(era, catalog);
      const shorter = await list(era, catalog, { listTtlMs: 0 });
      if (era === "2026-07-28") {
        expect([result.ttlMs, result.cacheScope]).toEqual([DEFAULT_LIST_TTL_MS, "private"]);
        expect([shorter.ttlMs, shorter.cacheScope]).toEqual([0, "private"]);
      } else {
        expect(result).not.toHaveProperty("ttlMs");
        expect(result).not.toHaveProperty("cacheScope");
      }
    },
  );
});

describe("listTtlMs", () => {
  it("is refused unless a whole number of milliseconds, naming what came", async () => {
    const gateway = createGateway({ tools: catalog, store: await openStore("memory:"), audit: false });
    cleanup.push(() => gateway.close());
    for (const [bad, shown] of [
      [-1, "-1"],
      [1.5, "1.5"],
      [Number.POSITIVE_INFINITY, "Infinity"],
      ["300000", '"300000"'],
    ] as const) {
      expect(() => createMcpServer(gateway, { listTtlMs: bad as number })).toThrow(
        `listTtlMs must be a whole number of milliseconds, 0 or more, e.g. 300000; received ${shown}`,
      );
    }
  });
});
