/**
 * `openGuardStore(url)`: the pins and rate windows kept where the idempotency store keeps its
 * state, from the same URL (`open.ts` `storeTarget`): the same SQLite file, Redis prefix or
 * PostgreSQL schema and table prefix. Drivers load lazily, as for `openStore`.
 */
import type { GuardStore } from "./guard-store.js";
import { storeTarget, type OpenStoreOptions } from "./open.js";
import { createMemoryGuardStore } from "./stores/guard-memory.js";
import { createPostgresGuardStore } from "./stores/guard-postgres.js";
import { createRedisGuardStore } from "./stores/guard-redis.js";
import { createSqliteGuardStore } from "./stores/guard-sqlite.js";

export async function openGuardStore(url: string, options: OpenStoreOptions = {}): Promise<GuardStore> {
  const target = storeTarget(url, options);
  switch (target.kind) {
    case "memory":
      return createMemoryGuardStore();
    case "sqlite":
      return createSqliteGuardStore(target);
    case "redis":
      return createRedisGuardStore(target);
    case "postgres":
      return createPostgresGuardStore(target);
  }
}
