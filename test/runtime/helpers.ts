/** Shared set-up for the runtime suites: a gateway over the order catalog with a movable clock. */
import { afterEach } from "vitest";
import { createGateway, type GatewayOptions } from "../../src/runtime/gateway.js";
import { createMemoryAuditSink } from "../../src/runtime/audit.js";
import { createMemoryStore } from "../../src/idempotency/stores/memory.js";
import type { Store } from "../../src/idempotency/store.js";
import type { Proposal } from "../../src/runtime/types.js";
import { orderCatalog } from "./catalog.js";

export const T0 = Date.parse("2026-03-05T10:00:00.000Z");

export function setup(extra: Partial<GatewayOptions> & { store?: Store } = {}) {
  const catalog = orderCatalog();
  const clock = { now: T0 };
  const audit = createMemoryAuditSink();
  const store = extra.store ?? createMemoryStore();
  const gateway = createGateway({ tools: catalog.tools, store, audit, clock: () => clock.now, ...extra });
  let n = 0;
  /** A proposal with a fresh call id (or the given one). */
  const propose = (tool: string, args: unknown, more: Partial<Proposal> = {}): Proposal => ({
    trajectory_id: "traj-1",
    turn: 1,
    call_id: `call-${++n}`,
    tool,
    arguments: args,
    ...more,
  });
  const call = (tool: string, args: unknown, more: Partial<Proposal> = {}) => gateway.call(propose(tool, args, more));
  return { gateway, store, audit, clock, catalog, propose, call };
}

/** Approval ids are random: normalise them for inline snapshots. */
export const stable = (text: string): string =>
  text.replace(/ap_[A-Za-z0-9_-]{16}/g, "ap_<id>").replace(/cap_[A-Za-z0-9_-]{16}/g, "cap_<id>");

/** `setup` for a test file: every gateway made is closed after its test. */
export function gateways(): typeof setup {
  const open: Array<() => Promise<void>> = [];
  afterEach(async () => {
    while (open.length) await open.pop()!();
  });
  return (extra = {}) => {
    const s = setup(extra);
    open.push(() => s.gateway.close());
    return s;
  };
}
