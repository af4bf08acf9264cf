/**
 * How every PostgreSQL-backed store connects (the idempotency store, the guard store): pg loaded
 * lazily, a bounded pool, and its tables created idempotently under a transaction-level advisory
 * lock, so replicas starting at once do not race on DDL; a server that does not answer fails
 * with `store_unavailable`.
 */
import type { Pool, PoolConfig } from "pg";
import { ToolgateError } from "../../core/errors.js";
import { importDriver, redactUrl } from "./driver.js";

export interface PostgresConnectOptions {
  url: string;
  /** Default 2000. */
  connectTimeoutMs?: number | undefined;
  /** Default 10000. */
  queryTimeoutMs?: number | undefined;
  /** Default 10. */
  maxConnections?: number | undefined;
}

export interface PostgresConnection {
  pool: Pool;
  /** A second pool of the same settings, plus `options` (e.g. `-c synchronous_commit=off`). */
  pool2(options: string): Pool;
}

/** Connects and runs `ddl` under the advisory lock named `lock`. */
export async function connectPostgres(
  options: PostgresConnectOptions,
  ddl: string,
  lock: string,
): Promise<PostgresConnection> {
  const { default: pg } = await importDriver("postgres", "pg", 8, () => import("pg"));
  const config: PoolConfig = {
    connectionString: options.url,
    connectionTimeoutMillis: options.connectTimeoutMs ?? 2000,
    query_timeout: options.queryTimeoutMs ?? 10_000,
    max: options.maxConnections ?? 10,
  };
  const pool: Pool = new pg.Pool(config);
  // An idle client losing its connection must not crash the process; the next query reports it.
  pool.on("error", () => {});
  try {
    await createTables(pool, ddl, lock);
  } catch (err) {
    await pool.end().catch(() => {});
    throw new ToolgateError(
      "store_unavailable",
      `cannot open the PostgreSQL store at ${redactUrl(options.url)}: ${(err as Error).message}`,
      { cause: err },
    );
  }
  return {
    pool,
    pool2(extra) {
      const second = new pg.Pool({ ...config, options: extra });
      second.on("error", () => {});
      return second;
    },
  };
}

async function createTables(pool: Pool, ddl: string, lock: string): Promise<void> {
  const client = await pool.connect();
  try {
    await client.query("BEGIN");
    // Two processes starting at once would both run CREATE … IF NOT EXISTS and one could fail
    // on the catalog's unique index; the advisory lock serialises them until COMMIT.
    await client.query("SELECT pg_advisory_xact_lock(hashtext($1))", [lock]);
    await client.query(ddl);
    await client.query("COMMIT");
  } catch (err) {
    await client.query("ROLLBACK").catch(() => {});
    throw err;
  } finally {
    client.release();
  }
}
