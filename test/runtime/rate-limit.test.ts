import { randomBytes } from "node:crypto";
import { afterAll, describe, expect, it } from "vitest";
import { createCapabilityAuthority } from "../../src/capability/authority.js";
import { keyRingFromMap } from "../../src/capability/keys.js";
import type { GuardStore } from "../../src/idempotency/guard-store.js";
import { openGuardStore } from "../../src/idempotency/open-guard.js";
import { createMemoryStore } from "../../src/idempotency/stores/memory.js";
import type { LabelledWindow, RateLimits } from "../../src/runtime/rate-limit.js";
import { POSTGRES_URL, REDIS_URL, serviceAvailable } from "../support/require.js";
import { dropPgSchema, dropRedisPrefix } from "../idempotency/fixtures/service-cleanup.js";
import { gateways } from "./helpers.js";

const make = gateways();

/** get_order: at most `limit` calls per minute; per holder too when `perHolder`. */
function limits(store: GuardStore["rates"], limit: number, perHolder = false): RateLimits {
  return {
    store,
    perHolder,
    windows: (tool, holder): LabelledWindow[] =>
      tool !== "get_order"
        ? []
        : [
            perHolder
              ? { key: `grant:${holder ?? "none"}:${tool}`, limit, window_ms: 60_000, label: `your calls of ${tool}` }
              : { key: `tool:${tool}`, limit, window_ms: 60_000, label: `calls of ${tool}` },
          ],
  };
}

describe("rate limits", () => {
  it("refuses the call past the limit with when to retry, runs nothing, and lets calls through once the window ends", async () => {
    const guard = await openGuardStore("memory:");
    const { call, catalog, clock, audit } = make({ rate_limits: limits(guard.rates, 2) });
    expect((await call("get_order", { order_id: "o_001" })).ok).toBe(true);
    clock.now += 10_000;
    expect((await call("get_order", { order_id: "o_001" })).ok).toBe(true);
    clock.now += 5_000;
    const o = await call("get_order", { order_id: "o_001" });
    expect(o.error?.code).toBe("rate_limited");
    expect(o.error?.detail).toEqual({ code: "rate_limited", retry_after_ms: 45_000, limit: 2, window_ms: 60_000 });
    expect(o.text).toContain(
      "Too many calls: calls of get_order may run at most 2 times per 60 s, and that many already ran in this window. Nothing was executed; retry after 45 s (retry_after_ms 45000)",
    );
    expect(catalog.calls.get_order).toBe(2);
    expect(audit.records.at(-1)!.stages.rate?.outcome).toBe("rate_limited");
    // Other tools count in no window.
    expect((await call("search_customer_orders", { customer_id: "c_7" })).ok).toBe(true);
    clock.now += 45_000;
    expect((await call("get_order", { order_id: "o_001" })).ok).toBe(true);
    await guard.close();
  });

  it("per grant holder: each issued grant has its own window, and an attenuated token shares its grant's", async () => {
    const store = createMemoryStore();
    const keys = keyRingFromMap({ k1: randomBytes(32).toString("base64") }, "test");
    const guard = await openGuardStore("memory:");
    const { call, clock } = make({ store, keys, rate_limits: limits(guard.rates, 1, true) });
    const authority = createCapabilityAuthority({ keys, store, now: () => clock.now });
    const grant = { rights: ["read"], objects: ["tool:get_order"], ttl_ms: 3_600_000 };
    const alice = authority.issue(grant);
    const bob = authority.issue(grant);
    const narrowed = authority.attenuate(alice, { ttl_ms: 60_000 });
    expect((await call("get_order", { order_id: "o_001" }, { capability: alice })).ok).toBe(true);
    expect((await call("get_order", { order_id: "o_001" }, { capability: bob })).ok).toBe(true);
    const again = await call("get_order", { order_id: "o_001" }, { capability: narrowed });
    expect(again.error?.code).toBe("rate_limited");
    expect(again.text).toContain("your calls of get_order may run at most 1 times");
    await guard.close();
  });

  it("a guard store that fails refuses the call as store_unavailable, with nothing executed", async () => {
    const broken: RateLimits = {
      ...limits({ take: () => Promise.reject(new Error("connection reset")) }, 5),
    };
    const { call, catalog } = make({ rate_limits: broken });
    const o = await call("get_order", { order_id: "o_001" });
    expect(o.error?.code).toBe("store_unavailable");
    expect(o.text).toContain("could not be checked, so the call was not run");
    expect(catalog.calls.get_order).toBeUndefined();
  });
});

const hostPort = (url: string, port: number) => [new URL(url).hostname, Number(new URL(url).port || port)] as const;
const redisUp = await serviceAvailable("Redis", ...hostPort(REDIS_URL, 6379));
const pgUp = await serviceAvailable("PostgreSQL", ...hostPort(POSTGRES_URL, 5432));
const tag = randomBytes(4).toString("hex");
const shared = [
  { name: "Redis", up: redisUp, url: `${REDIS_URL}?prefix=tg-test-rate-${tag}:` },
  { name: "PostgreSQL", up: pgUp, url: `${POSTGRES_URL}?schema=tg_test_rate_${tag}` },
];
afterAll(async () => {
  if (redisUp) await dropRedisPrefix(`tg-test-rate-${tag}:`);
  if (pgUp) await dropPgSchema(`tg_test_rate_${tag}`);
});

for (const { name, up, url } of shared) {
  describe.runIf(up)(`two gateways sharing a limit on ${name}`, () => {
    it("concurrent calls through both: exactly the allowed count runs, the rest are told when to retry", async () => {
      const guards = [await openGuardStore(url), await openGuardStore(url)];
      const replicas = guards.map((g) => make({ rate_limits: limits(g.rates, 5) }));
      const results = await Promise.all(
        Array.from({ length: 24 }, (_, i) => replicas[i % 2]!.call("get_order", { order_id: "o_001" })),
      );
      expect(results.filter((o) => o.ok)).toHaveLength(5);
      const refused = results.filter((o) => !o.ok);
      expect(refused.every((o) => o.error?.code === "rate_limited")).toBe(true);
      expect(refused.every((o) => (o.error?.detail?.retry_after_ms as number) > 0)).toBe(true);
      expect((replicas[0]!.catalog.calls.get_order ?? 0) + (replicas[1]!.catalog.calls.get_order ?? 0)).toBe(5);
      await Promise.all(guards.map((g) => g.close()));
    });
  });
}
