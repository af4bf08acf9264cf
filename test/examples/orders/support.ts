/** A gateway over the order assistant's catalog on a fresh database, with keys, and capabilities for its tenants. */
import { join } from "node:path";
import { createCapabilityAuthority } from "../../../src/capability/authority.js";
import { keyRingFromMap } from "../../../src/capability/keys.js";
import { createMemoryStore } from "../../../src/idempotency/stores/memory.js";
import { createGateway, type GatewayOptions } from "../../../src/runtime/gateway.js";
import type { Store } from "../../../src/idempotency/store.js";
import type { Observation } from "../../../src/core/observation.js";
import type { Proposal } from "../../../src/runtime/types.js";
import { createOrderTools } from "../../../examples/orders/index.js";
import { openOrdersDb, type Db } from "../../../examples/orders/db.js";
import { tempDir } from "../../mcp/support.js";

/** Test-only key (never used outside these tests). */
export const ORDERS_KEY = Buffer.alloc(32, 0x5a).toString("base64");
export const HOUR = 3_600_000;

export function ordersGateway(
  options: { dir?: string; store?: Store; clock?: () => number } & Partial<GatewayOptions> = {},
) {
  const dir = options.dir ?? tempDir("orders");
  const dbPath = join(dir, "orders.sqlite");
  const store = options.store ?? createMemoryStore();
  const clock = options.clock ?? Date.now;
  const keys = keyRingFromMap({ k1: ORDERS_KEY }, "orders test keys", "k1");
  const authority = createCapabilityAuthority({ keys, store, now: clock });
  const gateway = createGateway({ tools: createOrderTools(dbPath), store, authority, audit: false, clock, ...options });
  /** A capability for one tenant: reads, and refunds up to `max` cents per call when given. */
  const capability = (tenant: string, max?: number) =>
    authority.issue({
      rights: max === undefined ? ["read"] : ["read", "write"],
      objects: [`tenant:${tenant}`],
      ...(max === undefined ? {} : { args: [{ arg: "amount_cents", max }] }),
      ttl_ms: HOUR,
    });
  let seq = 0;
  const call = (tool: string, args: Record<string, unknown>, cap: string, extra: Partial<Proposal> = {}) =>
    gateway.call({
      trajectory_id: "t_orders",
      turn: 1,
      call_id: `c${++seq}`,
      tool,
      arguments: args,
      capability: cap,
      ...extra,
    }) as Promise<Observation>;
  // The test's own connection to the database, beside the catalog's.
  let conn: Db | null = null;
  const db = (): Db => (conn ??= openOrdersDb(dbPath));
  return { gateway, call, capability, authority, dir, dbPath, store, db };
}
