/** Starting an aggregate proxy from an mcpServers file, with a real MCP client in front of it. */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { parseServersConfig } from "../../../src/cli/config/load.js";
import { aggregateUpstreams, configRateLimits } from "../../../src/cli/host/config-proxy.js";
import type { KeyRing } from "../../../src/capability/keys.js";
import type { GuardStore } from "../../../src/idempotency/guard-store.js";
import { openStore } from "../../../src/idempotency/open.js";
import type { Store } from "../../../src/idempotency/store.js";
import { createAggregateProxy, type AggregateProxy } from "../../../src/mcp/proxy/aggregate.js";
import { createMcpServer } from "../../../src/mcp/server/server.js";
import { createGateway } from "../../../src/runtime/gateway.js";

export const wrapper = fileURLToPath(new URL("../fixtures/logging-wrapper.mjs", import.meta.url));
export const changingServer = fileURLToPath(new URL("../fixtures/changing-server.mjs", import.meta.url));
export const memoryServer = fileURLToPath(import.meta.resolve("@modelcontextprotocol/server-memory/dist/index.js"));
export const filesystemServer = fileURLToPath(
  import.meta.resolve("@modelcontextprotocol/server-filesystem/dist/index.js"),
);
export const everythingServer = fileURLToPath(
  import.meta.resolve("@modelcontextprotocol/server-everything/dist/index.js"),
);

export interface Aggregate {
  proxy: AggregateProxy;
  client: Client;
  store: Store;
  logs: string[];
  close(): Promise<void>;
}

/** Writes `config` as an mcpServers file in `dir`, reads it as the CLI does, and serves it to a client. */
export async function startAggregate(
  dir: string,
  config: unknown,
  guard: GuardStore,
  /** `closeGuard`: the aggregate owns the guard store and closes it with itself. */
  options: { store?: Store; closeGuard?: boolean; keys?: KeyRing } = {},
): Promise<Aggregate> {
  const file = join(dir, `mcp-${Math.random().toString(36).slice(2)}.json`);
  writeFileSync(file, JSON.stringify(config, null, 2));
  const checked = parseServersConfig(JSON.stringify(config), file, { env: process.env });
  const logs: string[] = [];
  const store = options.store ?? (await openStore("memory:"));
  const proxy = await createAggregateProxy({
    upstreams: aggregateUpstreams(checked),
    separator: checked.separator,
    guard,
    log: (line) => logs.push(line),
    gateway: (tools, published) => {
      const limits = configRateLimits(checked, published, guard.rates);
      return createGateway({
        tools,
        store,
        audit: false,
        ...(options.keys ? { keys: options.keys } : {}),
        ...(limits ? { rate_limits: limits } : {}),
      });
    },
  });
  const mcp = createMcpServer(proxy.gateway, { passThrough: proxy.passThrough });
  const [a, b] = InMemoryTransport.createLinkedPair();
  await mcp.connect(a);
  const client = new Client({ name: "aggregate-test", version: "1.0.0" });
  await client.connect(b);
  return {
    proxy,
    client,
    store,
    logs,
    async close() {
      await client.close();
      await proxy.close({ grace_ms: 100 });
      if (options.closeGuard) await guard.close();
    },
  };
}
