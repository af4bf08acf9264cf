/**
 * One gateway in front of several MCP servers (`proxy --config`), in process over the SDK's
 * InMemoryTransport towards toolgate and stdio towards the real upstreams (server-memory,
 * server-filesystem, server-everything), under tsx:
 * - the aggregate's `tools/list` (three upstreams) vs the slowest upstream's own `tools/list`
 *   (goal ≤ 1.2×: pins and lint run once at start, not per list);
 * - a call through the aggregate vs the same call through the single-upstream proxy (goal ≤ 1.05×);
 * - a rate-limit check (one window) on each guard store vs the same backend's atomic budget spend,
 *   the nearest existing one-round-trip write.
 */
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { openGuardStore } from "../src/idempotency/open-guard.js";
import { openStore } from "../src/idempotency/open.js";
import { createAggregateProxy } from "../src/mcp/proxy/aggregate.js";
import { createProxy } from "../src/mcp/proxy/proxy.js";
import { createMcpServer } from "../src/mcp/server/server.js";
import { createGateway } from "../src/runtime/gateway.js";
import type { Gateway } from "../src/runtime/types.js";
import { POSTGRES_URL, REDIS_URL, serviceAvailable } from "../test/support/require.js";
import type { Harness } from "./harness.js";

const resolve = (p: string) => fileURLToPath(import.meta.resolve(p));
const node = process.execPath;

async function inMemoryClient(gateway: Gateway): Promise<Client> {
  const [a, b] = InMemoryTransport.createLinkedPair();
  await createMcpServer(gateway).connect(a);
  const client = new Client({ name: "bench", version: "1.0.0" });
  await client.connect(b);
  return client;
}

export default async function aggregate(h: Harness): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), "tg-bench-aggregate-"));
  const targets = {
    memory: {
      command: node,
      args: [resolve("@modelcontextprotocol/server-memory/dist/index.js")],
      env: { MEMORY_FILE_PATH: join(dir, "m.jsonl") },
    },
    filesystem: { command: node, args: [resolve("@modelcontextprotocol/server-filesystem/dist/index.js"), dir] },
    everything: { command: node, args: [resolve("@modelcontextprotocol/server-everything/dist/index.js"), "stdio"] },
  };
  const guard = await openGuardStore("memory:");
  const agg = await createAggregateProxy({
    upstreams: Object.entries(targets).map(([name, target]) => ({
      name,
      namespace: name,
      target,
      exclude: [],
      tools: {},
    })),
    guard,
    log: () => {},
    gateway: async (tools) => createGateway({ tools, store: await openStore("memory:"), audit: false }),
  });
  const single = await createProxy({
    upstream: targets.everything,
    log: () => {},
    gateway: async (tools) => createGateway({ tools, store: await openStore("memory:"), audit: false }),
  });
  const direct = await Promise.all(
    Object.values(targets).map(async (t) => {
      const c = new Client({ name: "bench-direct", version: "1.0.0" });
      await c.connect(new StdioClientTransport({ ...t, stderr: "ignore" }));
      return c;
    }),
  );
  const aggClient = await inMemoryClient(agg.gateway);
  const singleClient = await inMemoryClient(single.gateway);
  try {
    // The slowest upstream's own tools/list is the peer: the aggregate cannot answer before it could.
    const own = await Promise.all(
      direct.map(async (c) => {
        const t0 = performance.now();
        for (let i = 0; i < 20; i++) await c.listTools();
        return { c, us: ((performance.now() - t0) * 1000) / 20 };
      }),
    );
    const slowest = own.sort((a, b) => b.us - a.us)[0]!.c;
    await h.compare({
      area: "aggregate",
      hot_path: "tools/list of 3 upstreams (in process) vs the slowest upstream's own (stdio)",
      toolgate: () => aggClient.listTools(),
      peer: { name: "slowest upstream tools/list", fn: () => slowest.listTools() },
      goal: { op: "<=", value: 1.2, label: "≤ 1.2×" },
      batch: 20,
      rounds: 10,
    });
    await h.compare({
      area: "aggregate",
      hot_path: "A0 call (everything echo) through the aggregate vs the single-upstream proxy",
      toolgate: () => aggClient.callTool({ name: "everything__echo", arguments: { message: "hi" } }),
      peer: {
        name: "toolgate proxy, one upstream",
        fn: () => singleClient.callTool({ name: "echo", arguments: { message: "hi" } }),
      },
      goal: { op: "<=", value: 1.05, label: "≤ 1.05×" },
      batch: 20,
      rounds: 10,
    });
  } finally {
    await aggClient.close();
    await singleClient.close();
    await Promise.all(direct.map((c) => c.close()));
    await agg.close();
    await single.close();
    await guard.close();
  }

  const tag = randomBytes(4).toString("hex");
  const urls: Array<[string, string]> = [
    ["memory", "memory:"],
    ["sqlite", `sqlite:${join(dir, "state.db")}`],
  ];
  const r = new URL(REDIS_URL);
  if (await serviceAvailable("Redis", r.hostname, Number(r.port || 6379)))
    urls.push(["redis", `${REDIS_URL}?prefix=tg-bench-rate-${tag}:`]);
  const p = new URL(POSTGRES_URL);
  if (await serviceAvailable("PostgreSQL", p.hostname, Number(p.port || 5432)))
    urls.push(["postgres", `${POSTGRES_URL}?schema=tg_bench_rate_${tag}`]);
  for (const [kind, url] of urls) {
    const rates = await openGuardStore(url);
    const store = await openStore(url);
    let n = 0;
    try {
      await h.compare({
        area: "aggregate",
        hot_path: `rate-limit check, one window (${kind})`,
        toolgate: () => rates.rates.take([{ key: `bench-${tag}`, limit: 1e9, window_ms: 3_600_000 }], Date.now()),
        peer: { name: `${kind} budget spend`, fn: () => store.budgets.spend(`bench-${tag}-${n++ % 8}`, 1, 1e12) },
        batch: 50,
        rounds: 10,
      });
    } finally {
      await rates.close();
      await store.close();
    }
  }
  rmSync(dir, { recursive: true, force: true });
}
