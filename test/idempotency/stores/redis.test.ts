/** The Redis store against the real server: the conformance suite plus TTL, scripts and a server that is down. */
import { randomBytes } from "node:crypto";
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createRedisStore } from "../../../src/idempotency/stores/redis.js";
import type { Store } from "../../../src/idempotency/store.js";
import { REDIS_URL, serviceAvailable } from "../../support/require.js";
import { dropRedisPrefix } from "../fixtures/service-cleanup.js";
import { describeStoreConformance } from "../store.conformance.js";

const up = await serviceAvailable("Redis", new URL(REDIS_URL).hostname, Number(new URL(REDIS_URL).port || 6379));
const prefix = `tg-test-redis-${randomBytes(4).toString("hex")}:`;

describe.runIf(up)("redis store", () => {
  describeStoreConformance("redis", () => createRedisStore({ url: REDIS_URL, prefix }));

  let store: Store;
  let raw: Redis;
  beforeAll(async () => {
    store = await createRedisStore({ url: REDIS_URL, prefix: `${prefix}own:` });
    raw = new Redis(REDIS_URL);
  });
  afterAll(async () => {
    await store?.close();
    raw.disconnect();
    await dropRedisPrefix(prefix);
  });
  const claim = (owner: string, now: number) => ({
    owner,
    lease_until: now + 60_000,
    fingerprint: null,
    tool: null,
    now,
  });

  it("COMPLETED gets its TTL through PEXPIRE; IN_FLIGHT and IN_DOUBT never expire", async () => {
    const now = Date.now();
    await store.records.claim("done", claim("a", now));
    expect(await raw.pttl(`${prefix}own:rec:done`)).toBe(-1);
    await store.records.transition("done", "a", "IN_FLIGHT", {
      state: "COMPLETED",
      result: 1,
      expires_at: now + 60_000,
      now,
    });
    const ttl = await raw.pttl(`${prefix}own:rec:done`);
    expect(ttl).toBeGreaterThan(50_000);
    expect(ttl).toBeLessThanOrEqual(60_000);
    await store.records.claim("doubt", claim("a", now));
    await store.records.transition("doubt", "a", "IN_FLIGHT", { state: "IN_DOUBT", error: "lease expired", now });
    expect(await raw.pttl(`${prefix}own:rec:doubt`)).toBe(-1);
  });

  it("list skips a record Redis expired through its TTL", async () => {
    const now = Date.now();
    await store.records.claim("gone", claim("a", now));
    await store.records.transition("gone", "a", "IN_FLIGHT", {
      state: "COMPLETED",
      result: 1,
      expires_at: now + 60_000,
      now,
    });
    await raw.del(`${prefix}own:rec:gone`); // what PX does when the TTL passes
    expect((await store.records.list({ now })).map((r) => r.key)).not.toContain("gone");
  });

  it("scripts survive SCRIPT FLUSH (EVALSHA falls back to EVAL on NOSCRIPT)", async () => {
    const now = Date.now();
    await store.records.claim("after-flush", claim("a", now));
    await raw.script("FLUSH");
    expect(
      await store.records.transition("after-flush", "a", "IN_FLIGHT", { state: "COMPLETED", result: 1, now }),
    ).toBe(true);
    expect(await store.records.get("after-flush", now)).toMatchObject({ state: "COMPLETED", result: 1 });
  });

  it("a record is one value: fields as JSON text split by U+001F, the result last and untouched", async () => {
    const now = 1_700_000_000_000;
    const result = { text: "sep\u001f inside", z: 1, a: 0.1 };
    await store.records.claim("shape", { ...claim("o\u001fwner", now), fingerprint: "f", tool: "t" });
    await store.records.transition("shape", "o\u001fwner", "IN_FLIGHT", {
      state: "COMPLETED",
      result,
      expires_at: null,
      now: now + 1,
    });
    expect((await raw.get(`${prefix}own:rec:shape`))!.split("\u001f")).toEqual([
      '"COMPLETED"',
      '"o\\u001fwner"',
      String(now + 60_000),
      "null",
      '"f"',
      '"t"',
      "null",
      String(now),
      String(now + 1),
      JSON.stringify(result),
    ]);
    expect((await store.records.get("shape", now + 2))?.result).toEqual(result);
    expect(await store.records.release("shape", "o\u001fwner", "COMPLETED")).toBe(true);
  });

  it("list walks keys in code-unit order and pages with after, across SCAN batches", async () => {
    const s = await createRedisStore({ url: REDIS_URL, prefix: `${prefix}list*[x]:` }); // glob characters in the prefix are escaped
    const keys = Array.from({ length: 450 }, (_, i) => `k${String(i).padStart(3, "0")}`);
    await Promise.all(keys.map((k) => s.records.claim(k, claim("o", 1))));
    const page1 = await s.records.list({ now: 2, limit: 300 });
    const page2 = await s.records.list({ now: 2, limit: 300, after: page1[page1.length - 1]!.key });
    expect([...page1, ...page2].map((r) => r.key)).toEqual(keys);
    await s.close();
  });

  it("budgets keep exact double arithmetic (no Lua integer truncation)", async () => {
    expect(await store.budgets.spend("frac", 0.1, 1)).toEqual({ ok: true, remaining: 1 - 0.1 });
    expect(await store.budgets.spend("frac", 0.2, 1)).toEqual({ ok: true, remaining: 1 - (0.1 + 0.2) });
    expect(await store.budgets.spent("frac")).toBe(0.1 + 0.2);
  });

  it("a Redis that is down fails fast with store_unavailable, naming the URL without its password", async () => {
    const err = await createRedisStore({ url: "redis://user:s3cret@127.0.0.1:1/0", connectTimeoutMs: 500 }).catch(
      (e: unknown) => e,
    );
    expect(err).toMatchObject({ code: "store_unavailable" });
    expect((err as Error).message).not.toContain("s3cret");
    expect((err as Error).message).toMatchInlineSnapshot(
      `"cannot reach the Redis store at redis://user:***@127.0.0.1:1/0: connect ECONNREFUSED 127.0.0.1:1; is Redis running there?"`,
    );
  });

  it("a closed store rejects further operations, and close() is idempotent", async () => {
    const s = await createRedisStore({ url: REDIS_URL, prefix: `${prefix}closed:` });
    await s.close();
    await s.close();
    await expect(s.records.get("k", 1)).rejects.toThrow();
  });
});
