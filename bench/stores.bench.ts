/**
 * Stores: `runOnce` (claim + complete, two store operations) on each backend against the raw
 * client's single write in the same run, and toolgate over Redis against
 * `@aws-lambda-powertools/idempotency` (`makeIdempotent`, its Redis cache persistence layer over
 * @redis/client) on the same Redis with the same workload. Every operation uses a fresh key, so
 * each one really claims and completes.
 */
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { IdempotencyConfig, makeIdempotent } from "@aws-lambda-powertools/idempotency";
import { CachePersistenceLayer } from "@aws-lambda-powertools/idempotency/cache";
import { createClient } from "@redis/client";
import Database from "better-sqlite3";
import { Redis } from "ioredis";
import pg from "pg";
import { deriveIdempotencyKey, fingerprint } from "../src/canonical/key.js";
import { runOnce } from "../src/idempotency/run-once.js";
import type { Store } from "../src/idempotency/store.js";
import { createPostgresStore } from "../src/idempotency/stores/postgres.js";
import { createRedisStore } from "../src/idempotency/stores/redis.js";
import { createSqliteStore } from "../src/idempotency/stores/sqlite.js";
import { POSTGRES_URL, REDIS_URL, serviceAvailable } from "../test/support/require.js";
import type { Harness } from "./harness.js";

const run = randomBytes(4).toString("hex");
const GOAL_RAW = { op: "<=", value: 2.0, label: "≥ 0.5× raw rate (time ≤ 2.0×)" } as const;
const result = { order_id: "ord_123", refunded_cents: 1250, status: "refunded" };

/** One runOnce per call on a fresh key: claim → execute → complete. */
function settler(store: Store, tag: string) {
  let n = 0;
  return () => runOnce(store, `bench-${run}-${tag}-${n++}`, () => result, { lease_ms: 30_000 });
}

/** The store operations runOnce makes, without runOnce: claim, then the fenced COMPLETED transition. */
function storeOps(store: Store, tag: string, complete: boolean) {
  let n = 0;
  return async () => {
    const key = `bench-${run}-${tag}-ops-${n++}`;
    const now = Date.now();
    await store.records.claim(key, { owner: "bench", lease_until: now + 30_000, fingerprint: null, tool: null, now });
    if (complete)
      await store.records.transition(key, "bench", "IN_FLIGHT", {
        state: "COMPLETED",
        result,
        error: null,
        expires_at: now + 86_400_000,
        now,
      });
  };
}

/**
 * Three rows per store against the same raw single write: runOnce (the goal), the two store
 * operations alone (what the store itself costs), and the claim alone (one op vs one op).
 */
async function againstRaw(
  h: Harness,
  kind: string,
  store: Store,
  peer: { name: string; fn: () => unknown },
  sizes: { batch: number; rounds: number },
) {
  // The first row per backend also pays the JIT warm-up of the store's code paths; on two busy
  // cores that takes longer than the default 3 warm-up batches, so warm this row up longer.
  await h.compare({
    area: "stores",
    hot_path: `settle (claim+complete) · ${kind}`,
    toolgate: settler(store, kind),
    peer,
    goal: GOAL_RAW,
    ...sizes,
    warmup: 10,
  });
  await h.compare({
    area: "stores",
    hot_path: `claim + complete, store ops only · ${kind}`,
    toolgate: storeOps(store, kind, true),
    peer,
    ...sizes,
    note: "the two store operations settle makes, without settle's own work",
  });
  await h.compare({
    area: "stores",
    hot_path: `claim alone · ${kind}`,
    toolgate: storeOps(store, `${kind}-claim`, false),
    peer,
    ...sizes,
    note: "one store operation against one raw operation",
  });
}

async function sqlite(h: Harness, dir: string): Promise<void> {
  const store = await createSqliteStore({ path: join(dir, "toolgate.db") });
  // The peer: the same file settings (WAL, synchronous=NORMAL), one prepared INSERT per op.
  const db = new Database(join(dir, "raw.db"));
  db.pragma("journal_mode = WAL");
  db.pragma("synchronous = NORMAL");
  db.exec("CREATE TABLE IF NOT EXISTS raw (key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID");
  const insert = db.prepare("INSERT INTO raw (key, value) VALUES (?, ?)");
  let n = 0;
  const value = JSON.stringify(result);
  await againstRaw(
    h,
    "sqlite",
    store,
    { name: "better-sqlite3 prepared INSERT", fn: () => insert.run(`raw-${n++}`, value) },
    { batch: 100, rounds: 30 },
  );
  await store.close();
  db.close();
}

async function redis(h: Harness): Promise<void> {
  const prefix = `tg-bench-${run}:`;
  const store = await createRedisStore({ url: REDIS_URL, prefix });
  const raw = new Redis(REDIS_URL);
  let n = 0;
  const value = JSON.stringify(result);
  const set = { name: "ioredis SET NX PX", fn: () => raw.set(`${prefix}raw-${n++}`, value, "PX", 600_000, "NX") };
  await againstRaw(h, "redis", store, set, { batch: 50, rounds: 30 });

  // Same workload on both sides: a fresh event per call, its key derived from the payload,
  // the handler run once and its result stored in Redis.
  const client = await createClient({ url: REDIS_URL }).connect();
  const config = new IdempotencyConfig({ expiresAfterSeconds: 600 });
  // Outside Lambda, Powertools warns on every call unless it can ask for the remaining time;
  // give it a context so the peer is measured without that cost.
  config.registerLambdaContext({ getRemainingTimeInMillis: () => 60_000 } as never);
  const refund = makeIdempotent(
    async (event: { order_id: string; amount_cents: number }) => ({ ...result, order_id: event.order_id }),
    {
      persistenceStore: new CachePersistenceLayer({ client: client as never }),
      config,
      keyPrefix: `${prefix}pt`,
    },
  );
  let p = 0;
  let t = 0;
  await h.compare({
    area: "stores",
    hot_path: "idempotent call over redis (key + settle)",
    toolgate: () => {
      const args = { order_id: `ord_${t++}`, amount_cents: 1250 };
      const key = deriveIdempotencyKey({
        trajectory_id: `traj-${run}`,
        turn: 1,
        call_id: "c1",
        tool: "orders.refund",
        args,
      });
      return runOnce(store, key, () => ({ ...result, order_id: args.order_id }), {
        lease_ms: 30_000,
        fingerprint: fingerprint(args),
        tool: "orders.refund",
      });
    },
    peer: {
      name: "powertools makeIdempotent (redis)",
      fn: () => refund({ order_id: `ord_${p++}`, amount_cents: 1250 }),
    },
    goal: { op: "<=", value: 1.0, label: "≥ 1.0× powertools (time ≤ 1.0×)" },
    note: "toolgate side also derives the key (RFC 8785 + SHA-256) and stores an argument fingerprint",
  });

  const keys = await raw.keys(`${prefix}*`);
  for (let i = 0; i < keys.length; i += 1000) await raw.del(...keys.slice(i, i + 1000));
  await store.close();
  raw.disconnect();
  await client.quit();
}

async function postgres(h: Harness): Promise<void> {
  const schema = `tg_bench_${run}`;
  const store = await createPostgresStore({ url: POSTGRES_URL, schema });
  const pool = new pg.Pool({ connectionString: POSTGRES_URL, max: 10 });
  await pool.query(`CREATE TABLE "${schema}".raw (key text PRIMARY KEY, value text NOT NULL)`);
  let n = 0;
  const value = JSON.stringify(result);
  const text = `INSERT INTO "${schema}".raw (key, value) VALUES ($1, $2) ON CONFLICT DO NOTHING`;
  const insert = {
    name: "pg INSERT … ON CONFLICT DO NOTHING",
    fn: () => pool.query({ name: "bench_raw_insert", text, values: [`raw-${n++}`, value] }),
  };
  // Each write waits for a WAL flush (milliseconds on this disk): smaller batches keep the file short.
  await againstRaw(h, "postgres", store, insert, { batch: 20, rounds: 20 });
  await store.close();
  await pool.query(`DROP SCHEMA "${schema}" CASCADE`);
  await pool.end();
}

export default async function (h: Harness): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), "toolgate-bench-stores-"));
  try {
    await sqlite(h, dir);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  if (await serviceAvailable("Redis", new URL(REDIS_URL).hostname, Number(new URL(REDIS_URL).port || 6379)))
    await redis(h);
  if (await serviceAvailable("PostgreSQL", new URL(POSTGRES_URL).hostname, Number(new URL(POSTGRES_URL).port || 5432)))
    await postgres(h);
}
