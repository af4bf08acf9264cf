/**
 * Walks the Redis store's lexicographic record index page by page (ZRANGEBYLEX, so keys come in
 * byte order, deterministically) and fetches each page's hashes in one pipeline. Index members
 * whose record has gone (a COMPLETED record that Redis expired through its TTL) are dropped
 * from the index on the way.
 */
import type { Redis } from "ioredis";

const PAGE = 200;

export async function* redisPages(
  redis: Redis,
  index: string,
  after: string | null,
  recKey: (key: string) => string,
): AsyncGenerator<Array<[string, Record<string, string>]>> {
  let from = after === null ? "-" : `(${after}`;
  for (;;) {
    const keys = await redis.zrangebylex(index, from, "+", "LIMIT", 0, PAGE);
    if (keys.length === 0) return;
    const pipeline = redis.pipeline();
    for (const key of keys) pipeline.hgetall(recKey(key));
    const replies = (await pipeline.exec()) ?? [];
    const page: Array<[string, Record<string, string>]> = [];
    const gone: string[] = [];
    keys.forEach((key, i) => {
      const hash = replies[i]?.[1] as Record<string, string> | undefined;
      if (hash?.state) page.push([key, hash]);
      else gone.push(key);
    });
    if (gone.length) await redis.zrem(index, ...gone);
    yield page;
    if (keys.length < PAGE) return;
    from = `(${keys[keys.length - 1]}`;
  }
}
