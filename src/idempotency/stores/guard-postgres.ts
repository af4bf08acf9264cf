/**
 * The guard store in PostgreSQL, beside the idempotency store's tables (same schema and table
 * prefix), connected the same way (`postgres-connect.ts`). A pin report is one upsert; a rate
 * take is one transaction whose upserts lock each window's row in key order and roll back when
 * one window is full, so it counts in all windows or none.
 */
import type { Pool } from "pg";
import type { GuardStore, RateDecision } from "../guard-store.js";
import { orderedWindows, pinFromRow, windowFull, type PinRow } from "./guard-rows.js";
import { connectPostgres } from "./postgres-connect.js";
import { checkIdentifiers } from "./postgres-schema.js";

export interface PostgresGuardStoreOptions {
  url: string;
  schema?: string | undefined;
  tablePrefix?: string | undefined;
  connectTimeoutMs?: number | undefined;
  maxConnections?: number | undefined;
}

function sql(schema: string, prefix: string) {
  const t = (name: string) => `"${schema}"."${prefix}${name}"`;
  return {
    ddl: `
CREATE SCHEMA IF NOT EXISTS "${schema}";
CREATE TABLE IF NOT EXISTS ${t("guard_pins")} (
  server text COLLATE "C" NOT NULL,
  tool text COLLATE "C" NOT NULL,
  hash text NOT NULL,
  definition text NOT NULL,
  pinned_at bigint NOT NULL,
  pending_hash text,
  pending_definition text,
  pending_seen bigint,
  PRIMARY KEY (server, tool)
);
CREATE TABLE IF NOT EXISTS ${t("guard_rates")} (
  key text COLLATE "C" PRIMARY KEY,
  started_at bigint NOT NULL,
  count integer NOT NULL
);`,
    // A report with the pinned hash leaves the row alone; another hash becomes (or replaces) the pending one.
    observe: `
INSERT INTO ${t("guard_pins")} AS p (server, tool, hash, definition, pinned_at) VALUES ($1, $2, $3, $4, $5)
ON CONFLICT (server, tool) DO UPDATE SET
  pending_hash = CASE WHEN p.hash = EXCLUDED.hash THEN p.pending_hash ELSE EXCLUDED.hash END,
  pending_definition = CASE WHEN p.hash = EXCLUDED.hash THEN p.pending_definition ELSE EXCLUDED.definition END,
  pending_seen = CASE WHEN p.hash = EXCLUDED.hash THEN p.pending_seen ELSE $5 END
RETURNING *`,
    accept: `
UPDATE ${t("guard_pins")} SET hash = pending_hash, definition = pending_definition, pinned_at = $4,
  pending_hash = NULL, pending_definition = NULL, pending_seen = NULL
WHERE server = $1 AND tool = $2 AND pending_hash = $3
RETURNING *`,
    list: `SELECT * FROM ${t("guard_pins")} WHERE server = $1 ORDER BY tool`,
    // The window's rule (guard-rows.ts currentWindow) inside the upsert: a passed window restarts at now.
    take: `
INSERT INTO ${t("guard_rates")} AS r (key, started_at, count) VALUES ($1, $2, 1)
ON CONFLICT (key) DO UPDATE SET
  started_at = CASE WHEN $2 >= r.started_at + $3 THEN $2 ELSE r.started_at END,
  count = CASE WHEN $2 >= r.started_at + $3 THEN 1 ELSE r.count + 1 END
RETURNING started_at, count`,
  };
}

export async function createPostgresGuardStore(options: PostgresGuardStoreOptions): Promise<GuardStore> {
  const schema = options.schema ?? "public";
  const prefix = options.tablePrefix ?? "toolgate_";
  checkIdentifiers(schema, prefix);
  const q = sql(schema, prefix);
  const { pool } = await connectPostgres(options, q.ddl, `toolgate-ddl:${schema}.${prefix}`);
  let closed = false;
  return {
    kind: "postgres",
    capabilities: { shared: true, durable: true },
    pins: {
      async observe(server, tool, hash, definition, now) {
        const { rows } = await pool.query<PinRow>(q.observe, [server, tool, hash, JSON.stringify(definition), now]);
        return pinFromRow(rows[0]!);
      },
      async list(server) {
        return (await pool.query<PinRow>(q.list, [server])).rows.map(pinFromRow);
      },
      async accept(server, tool, hash, now) {
        const { rows } = await pool.query<PinRow>(q.accept, [server, tool, hash, now]);
        return rows[0] ? pinFromRow(rows[0]) : null;
      },
    },
    rates: { take: (asked, now) => take(pool, q.take, asked, now) },
    async close() {
      if (closed) return;
      closed = true;
      await pool.end();
    },
  };
}

async function take(
  pool: Pool,
  text: string,
  asked: Parameters<GuardStore["rates"]["take"]>[0],
  now: number,
): Promise<RateDecision> {
  const ordered = orderedWindows(asked);
  const client = await pool.connect();
  try {
    await client.query("BEGIN");
    for (const w of ordered) {
      const { rows } = await client.query<{ started_at: string; count: number }>(text, [w.key, now, w.window_ms]);
      const state = { started_at: Number(rows[0]!.started_at), count: rows[0]!.count };
      if (state.count > w.limit) {
        await client.query("ROLLBACK");
        return windowFull(w, state, now);
      }
    }
    await client.query("COMMIT");
    return { ok: true };
  } catch (err) {
    await client.query("ROLLBACK").catch(() => {});
    throw err;
  } finally {
    client.release();
  }
}
