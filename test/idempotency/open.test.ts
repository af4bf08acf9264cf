/** `openStore(url)`: every scheme, the typo and down-store messages, and lazy driver loading. */
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { randomBytes } from "node:crypto";
import { Redis } from "ioredis";
import { afterAll, describe, expect, it } from "vitest";
import { openStore } from "../../src/idempotency/open.js";
import { defaultStateDir } from "../../src/state/location.js";
import { runOnce } from "../../src/idempotency/run-once.js";
import { importDriver } from "../../src/idempotency/stores/driver.js";
import { POSTGRES_URL, REDIS_URL, projectRoot, serviceAvailable } from "../support/require.js";

const dir = mkdtempSync(join(tmpdir(), "toolgate-open-test-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const redisUp = await serviceAvailable("Redis", new URL(REDIS_URL).hostname, Number(new URL(REDIS_URL).port || 6379));
const postgresUp = await serviceAvailable(
  "PostgreSQL",
  new URL(POSTGRES_URL).hostname,
  Number(new URL(POSTGRES_URL).port || 5432),
);

describe("openStore: URL forms", () => {
  it("memory: opens the in-process store", async () => {
    const store = await openStore("memory:");
    expect([store.kind, store.capabilities]).toEqual(["memory", { shared: false, durable: false }]);
  });

  it("sqlite: alone puts the database in the workspace's state folder, outside it (or in stateDir), creating the folder", async () => {
    const store = await openStore("sqlite:", { workspace: join(dir, "ws") });
    expect(store.kind).toBe("sqlite");
    await store.close();
    expect(existsSync(join(defaultStateDir(join(dir, "ws")), "state.db"))).toBe(true);
    expect(existsSync(join(dir, "ws"))).toBe(false);
    await (await openStore("sqlite:", { workspace: join(dir, "ws"), stateDir: join(dir, "chosen") })).close();
    expect(existsSync(join(dir, "chosen", "state.db"))).toBe(true);
  });

  it("sqlite:PATH resolves a relative path against the workspace; sqlite:///abs is absolute", async () => {
    await (await openStore("sqlite:data/x.db", { workspace: dir })).close();
    expect(existsSync(join(dir, "data", "x.db"))).toBe(true);
    await (await openStore(`sqlite://${join(dir, "abs.db")}`, { workspace: "/nonexistent" })).close();
    expect(existsSync(join(dir, "abs.db"))).toBe(true);
  });

  it.runIf(redisUp)("redis://…?prefix= keeps every key under that prefix", async () => {
    const prefix = `tg-test-open-${randomBytes(4).toString("hex")}:`;
    const store = await openStore(`${REDIS_URL}?prefix=${prefix}`);
    await store.records.claim("k", { owner: "o", lease_until: 2, fingerprint: null, tool: null, now: 1 });
    await store.close();
    const raw = new Redis(REDIS_URL);
    const keys = await raw.keys(`${prefix}*`);
    // Beside the record, the cursor of the live set's backfill once its first step has run (tasks-redis-backfill.ts).
    expect(keys.filter((k) => k !== `${prefix}tasks-live-backfill`)).toEqual([`${prefix}rec:k`]);
    await raw.del(...keys);
    raw.disconnect();
  });

  it.runIf(postgresUp)("postgresql://…?schema=&table_prefix= names where the tables go", async () => {
    const schema = `tg_test_open_${randomBytes(4).toString("hex")}`;
    const store = await openStore(
      `${POSTGRES_URL.replace(/^postgres:/, "postgresql:")}?schema=${schema}&table_prefix=t_`,
    );
    expect(store.kind).toBe("postgres");
    await store.records.claim("k", { owner: "o", lease_until: 2, fingerprint: null, tool: null, now: 1 });
    await store.close();
    const { default: pg } = await import("pg");
    const client = new pg.Client({ connectionString: POSTGRES_URL });
    await client.connect();
    const { rows } = await client.query(`SELECT key FROM "${schema}"."t_records"`);
    await client.query(`DROP SCHEMA "${schema}" CASCADE`);
    await client.end();
    expect(rows).toEqual([{ key: "k" }]);
  });

  it.runIf(postgresUp)(
    "postgres://…?async_transitions=on opens a store whose writes after the claim are not flushed one by one, and runOnce works over it",
    async () => {
      const schema = `tg_test_open_${randomBytes(4).toString("hex")}`;
      const store = await openStore(`${POSTGRES_URL}?schema=${schema}&async_transitions=on`);
      const out = await runOnce(store, "k-async", () => ({ done: true }), { lease_ms: 60_000 });
      expect(out).toMatchObject({ status: "executed", result: { done: true } });
      expect(await store.records.get("k-async", Date.now())).toMatchObject({ state: "COMPLETED" });
      await store.close();
      const { default: pg } = await import("pg");
      const client = new pg.Client({ connectionString: POSTGRES_URL });
      await client.connect();
      await client.query(`DROP SCHEMA "${schema}" CASCADE`);
      await client.end();
    },
  );
});

describe("openStore: bad input", () => {
  it("?async_transitions= takes on or off, and says so otherwise (before connecting)", async () => {
    await expect(
      openStore("postgres://postgres@127.0.0.1:5432/test?async_transitions=maybe"),
    ).rejects.toThrowErrorMatchingInlineSnapshot(
      `[ToolgateError: ?async_transitions= must be on or off (also true/false, 1/0); received "maybe"; example ?async_transitions=on]`,
    );
  });

  it("a typo'd scheme names the scheme, the nearest one and every accepted form", async () => {
    await expect(openStore("reddis://127.0.0.1:6379/0")).rejects.toThrowErrorMatchingInlineSnapshot(
      `[ToolgateError: unknown store scheme "reddis:" in "reddis://127.0.0.1:6379/0"; did you mean "redis:"?; accepted: memory:, sqlite:PATH, redis://HOST:PORT/DB, rediss://HOST:PORT/DB, postgres://USER@HOST:PORT/DB, postgresql://…]`,
    );
    await expect(openStore("sqlit:state.db")).rejects.toMatchObject({
      code: "bad_store_url",
      message: expect.stringContaining('did you mean "sqlite:"?'),
    });
  });

  it("a scheme nothing like an accepted one gets no guess, and the password is not echoed", async () => {
    await expect(openStore("mysql://root:hunter2@db/x")).rejects.toThrowErrorMatchingInlineSnapshot(
      `[ToolgateError: unknown store scheme "mysql:" in "mysql://root:***@db/x"; accepted: memory:, sqlite:PATH, redis://HOST:PORT/DB, rediss://HOST:PORT/DB, postgres://USER@HOST:PORT/DB, postgresql://…]`,
    );
  });

  it("a bare path without a scheme", async () => {
    await expect(openStore("state.db")).rejects.toThrowErrorMatchingInlineSnapshot(
      `[ToolgateError: store URL "state.db" has no scheme; accepted: memory:, sqlite:PATH, redis://HOST:PORT/DB, rediss://HOST:PORT/DB, postgres://USER@HOST:PORT/DB, postgresql://…]`,
    );
  });

  it("a URL that does not parse", async () => {
    await expect(openStore("redis://[::1/0")).rejects.toThrowErrorMatchingInlineSnapshot(
      `[ToolgateError: redis://[::1/0 is not a valid URL; example redis://127.0.0.1:6379/0]`,
    );
  });

  it("memory: with a path", async () => {
    await expect(openStore("memory:cache")).rejects.toThrowErrorMatchingInlineSnapshot(
      `[ToolgateError: memory: takes no path; received "memory:cache"; use memory:]`,
    );
  });

  it("mustExist refuses a missing SQLite file, naming the path, and creates nothing", async () => {
    const missing = join(dir, "no-such-dir", "x.db");
    await expect(openStore(`sqlite:${missing}`, { mustExist: true })).rejects.toMatchObject({
      code: "store_missing",
      message: `no toolgate state at ${missing}: nothing has been recorded there yet; run from the workspace toolgate serves (or pass --workspace DIR), or name the store with --store`,
    });
    expect(existsSync(join(dir, "no-such-dir"))).toBe(false);
    await expect(openStore("sqlite:", { workspace: join(dir, "fresh"), mustExist: true })).rejects.toMatchObject({
      code: "store_missing",
    });
    expect(existsSync(defaultStateDir(join(dir, "fresh")))).toBe(false);
    // An existing file opens as usual; memory: is unaffected.
    await (await openStore(`sqlite:${join(dir, "exists.db")}`)).close();
    await (await openStore(`sqlite:${join(dir, "exists.db")}`, { mustExist: true })).close();
    expect((await openStore("memory:", { mustExist: true })).kind).toBe("memory");
  });

  it("a Redis and a PostgreSQL that are down fail with store_unavailable", async () => {
    await expect(openStore("redis://127.0.0.1:1/0", { connectTimeoutMs: 500 })).rejects.toMatchObject({
      code: "store_unavailable",
    });
    await expect(openStore("postgres://postgres@127.0.0.1:1/test", { connectTimeoutMs: 500 })).rejects.toMatchObject({
      code: "store_unavailable",
    });
  });

  it("a missing driver package says what to install", async () => {
    const missing = "toolgate-no-such-driver";
    await expect(importDriver("redis", missing, 5, () => import(missing))).rejects.toThrowErrorMatchingInlineSnapshot(
      `[ToolgateError: the redis store needs the toolgate-no-such-driver package, which is not installed; install toolgate-no-such-driver: npm install toolgate-no-such-driver@5]`,
    );
  });

  it("any other driver failure passes through unchanged", async () => {
    await expect(importDriver("redis", "ioredis", 5, () => Promise.reject(new TypeError("boom")))).rejects.toThrow(
      TypeError,
    );
  });
});

describe("lazy drivers", () => {
  const probe = (url?: string) => {
    const r = spawnSync(
      process.execPath,
      ["--import", "tsx", join(projectRoot, "test/idempotency/fixtures/root-import-drivers.ts"), ...(url ? [url] : [])],
      {
        cwd: projectRoot,
        encoding: "utf8",
      },
    );
    if (r.status !== 0) throw new Error(r.stderr);
    return JSON.parse(r.stdout) as { before: string[]; after: string[] };
  };

  it("importing the root and toolgate/stores loads neither ioredis nor pg", () => {
    const { before } = probe();
    expect(before).not.toContain("ioredis");
    expect(before).not.toContain("pg");
  });

  it.runIf(redisUp)("opening a redis:// URL is what loads ioredis", () => {
    const { before, after } = probe(`${REDIS_URL}?prefix=tg-test-open-lazy:`);
    expect([before.includes("ioredis"), after.includes("ioredis"), after.includes("pg")]).toEqual([false, true, false]);
  });
});
