/**
 * `records.list` for the Redis store: SCAN over the store's key prefix, sort the keys in
 * JavaScript (code-unit order, exactly as the memory store), then read them in MGET batches
 * until the page is full. There is no index to maintain on every claim, which keeps the claim a
 * single plain SET; listing is an operator's action, O(records under the prefix).
 */
import type { Redis } from "ioredis";
import type { IdempotencyRecord, RecordStore } from "../store.js";
import { decodeRecord } from "./redis-record.js";
import { DEFAULT_LIST_LIMIT, completedExpired } from "./rows.js";

const BATCH = 200;

/** A glob pattern matching exactly the keys that start with `prefix` (SCAN MATCH escapes). */
export function prefixPattern(prefix: string): string {
  return `${prefix.replace(/[*?[\]\\]/g, (c) => `\\${c}`)}*`;
}

async function scanKeys(redis: Redis, prefix: string): Promise<string[]> {
  const keys = new Set<string>(); // SCAN may return a key more than once
  let cursor = "0";
  do {
    const [next, found] = await redis.scan(cursor, "MATCH", prefixPattern(prefix), "COUNT", 1000);
    for (const k of found) keys.add(k.slice(prefix.length));
    cursor = next;
  } while (cursor !== "0");
  return [...keys].sort();
}

/** The Redis store's `records.list`: one page of records as stored (the operator's listing with `reads_as` is
 * inspect.ts `listRecordViews`). */
export async function listRedisRecords(
  redis: Redis,
  recPrefix: string,
  query: Parameters<RecordStore["list"]>[0],
): Promise<IdempotencyRecord[]> {
  const limit = query.limit ?? DEFAULT_LIST_LIMIT;
  const keys = (await scanKeys(redis, recPrefix)).filter((k) => query.after === undefined || k > query.after);
  const out: IdempotencyRecord[] = [];
  for (let i = 0; i < keys.length && out.length < limit; i += BATCH) {
    const batch = keys.slice(i, i + BATCH);
    const values = await redis.mget(batch.map((k) => recPrefix + k));
    batch.forEach((key, j) => {
      const value = values[j];
      if (value === null || value === undefined || out.length >= limit) return; // gone meanwhile (TTL, release)
      const record = decodeRecord(key, value);
      if (completedExpired(record.state, record.expires_at, query.now)) return;
      if (query.state === undefined || record.state === query.state) out.push(record);
    });
  }
  return out;
}
