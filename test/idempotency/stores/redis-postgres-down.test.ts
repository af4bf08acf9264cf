/**
 * A shared store that goes away in the middle of a call (a store that is
 * down → a clear error, nothing marked completed): the connection to real Redis / PostgreSQL
 * runs through a proxy the test cuts while the tool executes.
 */
import { randomBytes } from "node:crypto";
import { afterAll, describe, expect, it } from "vitest";
import { runOnce } from "../../../src/idempotency/run-once.js";
import type { Store } from "../../../src/idempotency/store.js";
import { createPostgresStore } from "../../../src/idempotency/stores/postgres.js";
import { createRedisStore } from "../../../src/idempotency/stores/redis.js";
import { POSTGRES_URL, REDIS_URL, serviceAvailable } from "../../support/require.js";
import { dropPgSchema, dropRedisPrefix } from "../fixtures/service-cleanup.js";
import { startTcpProxy } from "../fixtures/tcp-proxy.js";

const redisUrl = new URL(REDIS_URL);
const pgUrl = new URL(POSTGRES_URL);
const redisUp = await serviceAvailable("Redis", redisUrl.hostname, Number(redisUrl.port || 6379));
const postgresUp = await serviceAvailable("PostgreSQL", pgUrl.hostname, Number(pgUrl.port || 5432));
const run = randomBytes(4).toString("hex");
const redisPrefix = `tg-test-down-${run}:`;
const pgSchema = `tg_test_down_${run}`;

afterAll(async () => {
  if (redisUp) await dropRedisPrefix(redisPrefix);
  if (postgresUp) await dropPgSchema(pgSchema);
});

/** Settles one key through `viaProxy`, cutting the connection while the tool runs; reads the record back through
 * `direct`. */
async function cutDuringExecute(viaProxy: Store, direct: Store, cut: () => Promise<void>) {
  const key = `down-${run}`;
  let executed = 0;
  const outcome = runOnce(
    viaProxy,
    key,
    async () => {
      executed++;
      await cut();
      return { refunded: true };
    },
    { lease_ms: 60_000 },
  );
  const error = await outcome.then(
    () => null,
    (e: unknown) => e as Error & { code?: string; step?: string; effect?: string },
  );
  return { executed, error, record: await direct.records.get(key, Date.now()) };
}

describe("a store that goes down mid-call", () => {
  it.runIf(redisUp)("redis: runOnce fails with store_unavailable and the record is not COMPLETED", async () => {
    const proxy = await startTcpProxy(redisUrl.hostname, Number(redisUrl.port || 6379));
    const proxied = new URL(REDIS_URL);
    proxied.hostname = "127.0.0.1";
    proxied.port = String(proxy.port);
    const viaProxy = await createRedisStore({ url: proxied.toString(), prefix: redisPrefix, connectTimeoutMs: 10_000 });
    const direct = await createRedisStore({ url: REDIS_URL, prefix: redisPrefix });
    const { executed, error, record } = await cutDuringExecute(viaProxy, direct, () => proxy.cut());
    expect(executed).toBe(1);
    expect(error).toMatchObject({ code: "store_unavailable", step: "complete", effect: "happened" });
    expect(record).toMatchObject({ state: "IN_FLIGHT", result: null }); // reads IN_DOUBT once the lease passes
    await Promise.all([viaProxy.close(), direct.close()]);
  });

  it.runIf(postgresUp)("postgres: runOnce fails with store_unavailable and the record is not COMPLETED", async () => {
    const proxy = await startTcpProxy(pgUrl.hostname, Number(pgUrl.port || 5432));
    const proxied = new URL(POSTGRES_URL);
    proxied.hostname = "127.0.0.1";
    proxied.port = String(proxy.port);
    const viaProxy = await createPostgresStore({ url: proxied.toString(), schema: pgSchema, connectTimeoutMs: 10_000 });
    const direct = await createPostgresStore({ url: POSTGRES_URL, schema: pgSchema });
    const { executed, error, record } = await cutDuringExecute(viaProxy, direct, () => proxy.cut());
    expect(executed).toBe(1);
    expect(error).toMatchObject({ code: "store_unavailable", step: "complete", effect: "happened" });
    expect(record).toMatchObject({ state: "IN_FLIGHT", result: null });
    await Promise.all([viaProxy.close(), direct.close()]);
  });
});

describe("a store that hangs (accepts connections, never answers)", () => {
  /** commandTimeoutMs / queryTimeoutMs of the proxied stores below. */
  const HANG_MS = 2000;

  it.runIf(redisUp)("redis: opening fails within the connect timeout", async () => {
    const proxy = await startTcpProxy(redisUrl.hostname, Number(redisUrl.port || 6379));
    proxy.freeze();
    await expect(createRedisStore({ url: `redis://127.0.0.1:${proxy.port}/0`, connectTimeoutMs: 300 })).rejects.toThrow(
      `cannot reach the Redis store at redis://127.0.0.1:${proxy.port}/0: no answer within 300 ms; is Redis running there?`,
    );
    await proxy.cut();
  });

  it.runIf(postgresUp)("postgres: opening fails within the connect timeout", async () => {
    const proxy = await startTcpProxy(pgUrl.hostname, Number(pgUrl.port || 5432));
    proxy.freeze();
    await expect(
      createPostgresStore({ url: `postgres://postgres@127.0.0.1:${proxy.port}/test`, connectTimeoutMs: 300 }),
    ).rejects.toMatchObject({
      code: "store_unavailable",
    });
    await proxy.cut();
  });

  it.runIf(redisUp)(
    "redis: a command that gets no answer fails after commandTimeoutMs, nothing COMPLETED",
    async () => {
      const proxy = await startTcpProxy(redisUrl.hostname, Number(redisUrl.port || 6379));
      // The bound applies to every command through the proxy, the claim before the freeze too: short
      // enough to keep the test quick, long enough that a loaded machine still answers the claim.
      const viaProxy = await createRedisStore({
        url: `redis://127.0.0.1:${proxy.port}/0`,
        prefix: `${redisPrefix}hang:`,
        commandTimeoutMs: HANG_MS,
      });
      const direct = await createRedisStore({ url: REDIS_URL, prefix: `${redisPrefix}hang:` });
      const { executed, error, record } = await cutDuringExecute(viaProxy, direct, async () => proxy.freeze());
      expect(executed).toBe(1);
      expect(error).toMatchObject({ code: "store_unavailable", step: "complete", effect: "happened" });
      expect(error?.message).toContain("Command timed out");
      expect(record).toMatchObject({ state: "IN_FLIGHT", result: null });
      await proxy.cut();
      await Promise.all([viaProxy.close(), direct.close()]);
    },
  );

  it.runIf(postgresUp)(
    "postgres: a query that gets no answer fails after queryTimeoutMs, nothing COMPLETED",
    async () => {
      const proxy = await startTcpProxy(pgUrl.hostname, Number(pgUrl.port || 5432));
      const url = `postgres://postgres@127.0.0.1:${proxy.port}${pgUrl.pathname}`;
      // The direct store creates the tables first, so the proxied one's bound (which applies to its
      // own DDL and the claim too) only meets quick statements before the freeze.
      const direct = await createPostgresStore({ url: POSTGRES_URL, schema: pgSchema, tablePrefix: "hang_" });
      const viaProxy = await createPostgresStore({
        url,
        schema: pgSchema,
        tablePrefix: "hang_",
        queryTimeoutMs: HANG_MS,
      });
      const { executed, error, record } = await cutDuringExecute(viaProxy, direct, async () => proxy.freeze());
      expect(executed).toBe(1);
      expect(error).toMatchObject({ code: "store_unavailable", step: "complete", effect: "happened" });
      expect(error?.message).toContain("Query read timeout");
      expect(record).toMatchObject({ state: "IN_FLIGHT", result: null });
      await proxy.cut();
      await Promise.all([viaProxy.close().catch(() => {}), direct.close()]);
    },
  );
});
