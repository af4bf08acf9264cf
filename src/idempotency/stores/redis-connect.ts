/**
 * How every Redis-backed store connects (the idempotency store, the guard store): ioredis loaded
 * lazily, no offline queue, bounded retries, and the whole handshake bounded by the connect
 * timeout; a server that does not answer fails with `store_unavailable` (URL without password).
 */
import type { Redis, RedisOptions } from "ioredis";
import { ToolgateError } from "../../core/errors.js";
import { importDriver, redactUrl } from "./driver.js";

export interface RedisConnectOptions {
  url: string;
  /** Default 2000. */
  connectTimeoutMs?: number | undefined;
  /** Default 10000. */
  commandTimeoutMs?: number | undefined;
}

export async function connectRedis(options: RedisConnectOptions): Promise<Redis> {
  const { Redis } = await importDriver("redis", "ioredis", 5, () => import("ioredis"));
  const where = redactUrl(options.url);
  const connectTimeout = options.connectTimeoutMs ?? 2000;
  const settings: RedisOptions = {
    lazyConnect: true,
    connectTimeout,
    commandTimeout: options.commandTimeoutMs ?? 10_000,
    // Fail fast instead of queueing or retrying forever: a command that cannot reach Redis
    // rejects, and settle leaves the record as the store last saw it (never "completed").
    enableOfflineQueue: false,
    maxRetriesPerRequest: 1,
    retryStrategy: (times) => (times > 5 ? null : Math.min(times * 100, 1000)),
  };
  const redis = new Redis(options.url, settings);
  let lastError: Error | null = null;
  redis.on("error", (err: Error) => (lastError = err));
  let timer: NodeJS.Timeout | undefined;
  try {
    // connectTimeout bounds the TCP connect only; a server that accepts and never answers
    // would hold the ready check forever, so the whole handshake gets the same bound.
    const silent = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`no answer within ${connectTimeout} ms`)), connectTimeout);
    });
    await Promise.race([redis.connect(), silent]);
  } catch (err) {
    redis.disconnect();
    const reason = (lastError ?? (err as Error)).message;
    throw new ToolgateError(
      "store_unavailable",
      `cannot reach the Redis store at ${where}: ${reason}; is Redis running there?`,
      {
        cause: err,
      },
    );
  } finally {
    clearTimeout(timer);
  }
  return redis;
}
