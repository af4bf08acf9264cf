/**
 * `openStore(url)`: the one way a library user, the CLI (`--store`) and the runtime pick a
 * store. The Redis and PostgreSQL factories import their drivers only when
 * such a URL is opened, so the root import never loads `ioredis` or `pg`.
 */
import { existsSync } from "node:fs";
import { defaultStateDir, sqliteUrlPath } from "../state/location.js";
import { ToolgateError } from "../core/errors.js";
import { closest } from "../core/closest.js";
import type { Store } from "./store.js";
import { redactUrl } from "./stores/driver.js";
import { createMemoryStore } from "./stores/memory.js";
import { createPostgresStore } from "./stores/postgres.js";
import { createRedisStore } from "./stores/redis.js";
import { createSqliteStore } from "./stores/sqlite.js";

export interface OpenStoreOptions {
  /** Directory a relative `sqlite:PATH` resolves against, and whose state `sqlite:` alone opens. Default: the current
   * directory. */
  workspace?: string;
  /** Folder `sqlite:` alone keeps `state.db` in. Default `defaultStateDir(workspace)`, outside the workspace. */
  stateDir?: string;
  /** Redis key prefix (also `?prefix=` in the URL). Default `toolgate:`. */
  prefix?: string;
  /** PostgreSQL schema (also `?schema=`). Default `public`. */
  schema?: string;
  /** PostgreSQL table-name prefix (also `?table_prefix=`). Default `toolgate_`. */
  tablePrefix?: string;
  /**
   * PostgreSQL: commit the writes after the claim without waiting for their WAL flush (also
   * `?async_transitions=on`); see `PostgresStoreOptions.asyncTransitions` for the trade. Default off.
   */
  asyncTransitions?: boolean;
  /** Connect timeout for Redis and PostgreSQL, in ms. Default 2000. */
  connectTimeoutMs?: number;
  /**
   * Refuse a `sqlite:` file that does not exist instead of creating it (ToolgateError
   * `store_missing`). For commands that read or decide existing state: a mistyped path must not
   * read as an empty store nor leave a new database behind. Other schemes are unaffected.
   */
  mustExist?: boolean;
}

/** The accepted URL forms, as error messages list them. */
export const STORE_URL_FORMS = [
  "memory:",
  "sqlite:PATH",
  "redis://HOST:PORT/DB",
  "rediss://HOST:PORT/DB",
  "postgres://USER@HOST:PORT/DB",
  "postgresql://…",
];

const SCHEMES = ["memory", "sqlite", "redis", "rediss", "postgres", "postgresql"];

/**
 * Opens the store a URL names: `memory:`, `sqlite:PATH` (`sqlite:` alone → `state.db` in the
 * workspace's state folder, `defaultStateDir(workspace)`, outside the workspace), `redis://…`, `rediss://…`,
 * `postgres://…`, `postgresql://…`.
 * Throws ToolgateError `bad_store_url` for an unknown scheme, `store_unavailable` for a
 * store that does not answer and, with `mustExist`, `store_missing` for an absent SQLite file.
 */
export async function openStore(url: string, options: OpenStoreOptions = {}): Promise<Store> {
  const target = storeTarget(url, options);
  switch (target.kind) {
    case "memory":
      return createMemoryStore();
    case "sqlite":
      return createSqliteStore(target);
    case "redis":
      return createRedisStore(target);
    case "postgres":
      return createPostgresStore(target);
  }
}

/** What a store URL names, with toolgate's own query parameters taken out: every store opened from a URL reads it so. */
export type StoreTarget =
  | { kind: "memory" }
  | { kind: "sqlite"; path: string }
  | { kind: "redis"; url: string; prefix: string; connectTimeoutMs: number | undefined }
  | {
      kind: "postgres";
      url: string;
      schema: string | undefined;
      tablePrefix: string | undefined;
      asyncTransitions: boolean | undefined;
      connectTimeoutMs: number | undefined;
    };

/** Reads a store URL (the errors of `openStore`); the stores beside the idempotency store open from it too. */
export function storeTarget(url: string, options: OpenStoreOptions = {}): StoreTarget {
  const scheme = /^([a-zA-Z][a-zA-Z0-9+.-]*):/.exec(url)?.[1]?.toLowerCase();
  switch (scheme) {
    case "memory":
      if (url.length > "memory:".length)
        throw badUrl(`memory: takes no path; received ${JSON.stringify(url)}; use memory:`);
      return { kind: "memory" };
    case "sqlite": {
      const path = sqlitePath(url, options.workspace ?? process.cwd(), options.stateDir);
      if (options.mustExist && path !== ":memory:" && !existsSync(path)) {
        throw new ToolgateError(
          "store_missing",
          `no toolgate state at ${path}: nothing has been recorded there yet; run from the workspace toolgate serves (or pass --workspace DIR), or name the store with --store`,
        );
      }
      return { kind: "sqlite", path };
    }
    case "redis":
    case "rediss": {
      const { base, params } = splitParams(url, ["prefix"]);
      return {
        kind: "redis",
        url: base,
        prefix: options.prefix ?? params.prefix ?? "toolgate:",
        connectTimeoutMs: options.connectTimeoutMs,
      };
    }
    case "postgres":
    case "postgresql": {
      const { base, params } = splitParams(url, ["schema", "table_prefix", "async_transitions"]);
      return {
        kind: "postgres",
        url: base,
        schema: options.schema ?? params.schema,
        tablePrefix: options.tablePrefix ?? params.table_prefix,
        asyncTransitions: options.asyncTransitions ?? onOff("async_transitions", params.async_transitions),
        connectTimeoutMs: options.connectTimeoutMs,
      };
    }
    default:
      throw badUrl(unknownScheme(url, scheme));
  }
}

/** `sqlite:` → `state.db` in the state folder; `sqlite:rel/x.db` → under the workspace; `sqlite:/abs.db` or
 * `sqlite:///abs.db` as given. */
export function sqlitePath(url: string, workspace: string, stateDir?: string): string {
  return sqliteUrlPath(url, workspace, () => stateDir ?? defaultStateDir(workspace));
}

/** Removes toolgate's own query parameters so the driver never sees them. */
function splitParams(url: string, names: string[]): { base: string; params: Record<string, string | undefined> } {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw badUrl(
      `${redactUrl(url)} is not a valid URL; example ${url.startsWith("redis") ? "redis://127.0.0.1:6379/0" : "postgres://postgres@127.0.0.1:5432/test"}`,
    );
  }
  const params: Record<string, string | undefined> = {};
  for (const name of names) {
    params[name] = parsed.searchParams.get(name) ?? undefined;
    parsed.searchParams.delete(name);
  }
  return { base: parsed.toString(), params };
}

/** A boolean URL parameter: on/off, true/false, 1/0 (absent → undefined); anything else is refused. */
function onOff(name: string, value: string | undefined): boolean | undefined {
  if (value === undefined) return undefined;
  const v = value.toLowerCase();
  if (v === "on" || v === "true" || v === "1") return true;
  if (v === "off" || v === "false" || v === "0") return false;
  throw badUrl(
    `?${name}= must be on or off (also true/false, 1/0); received ${JSON.stringify(value)}; example ?${name}=on`,
  );
}

function unknownScheme(url: string, scheme: string | undefined): string {
  const accepted = `accepted: ${STORE_URL_FORMS.join(", ")}`;
  if (scheme === undefined) return `store URL ${JSON.stringify(redactUrl(url))} has no scheme; ${accepted}`;
  const near = closest(scheme, SCHEMES);
  return `unknown store scheme "${scheme}:" in ${JSON.stringify(redactUrl(url))}${near ? `; did you mean "${near}:"?` : ""}; ${accepted}`;
}

function badUrl(message: string): ToolgateError {
  return new ToolgateError("bad_store_url", message);
}
