/**
 * Tasks of the Redis store, on the store's own client: each task a hash under `PREFIX task:ID`
 * (an absent field is null) that expires at its `expires_at` (PEXPIREAT, and compared with the
 * caller's `now` as well, so a reader's clock decides as in the other backends), and each owner's
 * ids in one sorted set read in id order (ZRANGE BYLEX). The ids of tasks not final are in one more
 * sorted set, `PREFIX tasks-live`, scored by their own deadline (`staleDue`: updated_at plus their
 * `stale_ms`), which `stale` reads up to `now` (ZRANGEBYSCORE), so it meets neither an ended task nor
 * a live one whose own bound has not passed (a task created before that set existed is added to it
 * at open, `tasks-redis-backfill.ts`; one scored by its updated_at alone, as before the deadline,
 * is found no later than due, checked as it is read, and scored by its deadline at its next
 * write). Create and the compare-and-set on status are Lua scripts, atomic in Redis, and keep both sets.
 */
import { createHash } from "node:crypto";
import type { Redis } from "ioredis";
import { isFinalStatus, staleDue, type TaskRecord, type TaskStatus, type TaskStore } from "../tasks.js";
import { DEFAULT_LIST_LIMIT } from "./rows.js";
import { APPLY, encodeOptional, hashFromPairs } from "./redis-scripts.js";

/**
 * KEYS: task, owner index, live index. ARGV: expires_at, created_at, its deadline (`staleDue`) when
 * the task is not final (else ""), then field, value pairs. 0 when the id exists. The owner index lives as long
 * as its longest-lived task (PTTL, which Redis 6.2 has).
 */
const CREATE = `
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
redis.call('HSET', KEYS[1], unpack(ARGV, 4))
local id = redis.call('HGET', KEYS[1], 'id')
redis.call('PEXPIREAT', KEYS[1], ARGV[1])
redis.call('ZADD', KEYS[2], 0, id)
if ARGV[3] ~= '' then redis.call('ZADD', KEYS[3], ARGV[3], id) end
local left = redis.call('PTTL', KEYS[2])
if left < 0 or left < tonumber(ARGV[1]) - tonumber(ARGV[2]) then redis.call('PEXPIREAT', KEYS[2], ARGV[1]) end
return 1`;

/**
 * KEYS: task, live index. ARGV: status, message (encoded optional), result (encoded optional),
 * now, updated_before ("" for none), "1" when the new status is not final (else "0"), then the
 * statuses it may move from. The updated hash, or false when the fence did not hold. A live task
 * is scored by its new deadline: now plus its own stale_ms (none: now), as `staleDue`.
 */
const UPDATE = `${APPLY}
local f = redis.call('HMGET', KEYS[1], 'status', 'expires_at', 'updated_at', 'id', 'stale_ms')
if not f[1] or tonumber(f[2]) <= tonumber(ARGV[4]) then return false end
local from = false
for i = 7, #ARGV do if ARGV[i] == f[1] then from = true end end
if not from then return false end
if ARGV[5] ~= '' and tonumber(f[3]) >= tonumber(ARGV[5]) then return false end
local set, del = {'status', ARGV[1], 'updated_at', ARGV[4]}, {}
apply(KEYS[1], set, del, 'status_message', ARGV[2])
apply(KEYS[1], set, del, 'result', ARGV[3])
flush(KEYS[1], set, del)
if ARGV[6] == '1' then
  redis.call('ZADD', KEYS[2], string.format('%d', tonumber(ARGV[4]) + (tonumber(f[5]) or 0)), f[4])
else redis.call('ZREM', KEYS[2], f[4]) end
return redis.call('HGETALL', KEYS[1])`;

interface Scripted extends Redis {
  tgCreateTask(
    task: string,
    index: string,
    live: string,
    expires: string,
    created: string,
    liveScore: string,
    ...pairs: string[]
  ): Promise<0 | 1>;
  tgUpdateTask(task: string, live: string, ...argv: string[]): Promise<string[] | null>;
}

function taskFromHash(h: Record<string, string>): TaskRecord {
  return {
    id: h.id!,
    tool: h.tool!,
    owner: h.owner!,
    status: h.status as TaskStatus,
    status_message: h.status_message ?? null,
    result: h.result === undefined ? null : JSON.parse(h.result),
    created_at: Number(h.created_at),
    updated_at: Number(h.updated_at),
    ttl_ms: Number(h.ttl_ms),
    expires_at: Number(h.expires_at),
    poll_ms: Number(h.poll_ms),
    ...(h.stale_ms === undefined ? {} : { stale_ms: Number(h.stale_ms) }),
  };
}

function hashPairs(t: TaskRecord): string[] {
  const pairs = ["id", t.id, "tool", t.tool, "owner", t.owner, "status", t.status];
  if (t.status_message !== null) pairs.push("status_message", t.status_message);
  if (t.result !== null) pairs.push("result", JSON.stringify(t.result));
  for (const k of ["created_at", "updated_at", "ttl_ms", "expires_at", "poll_ms"] as const) pairs.push(k, String(t[k]));
  if (t.stale_ms !== undefined) pairs.push("stale_ms", String(t.stale_ms));
  return pairs;
}

export function redisTasks(client: Redis, prefix: string): TaskStore {
  const redis = client as Scripted;
  redis.defineCommand("tgCreateTask", { numberOfKeys: 3, lua: CREATE });
  redis.defineCommand("tgUpdateTask", { numberOfKeys: 2, lua: UPDATE });
  const taskKey = (id: string) => `${prefix}task:${id}`;
  const liveKey = `${prefix}tasks-live`;
  // The owner is any string a transport names: hashed, so it never shapes a key.
  const indexKey = (owner: string) => `${prefix}tasks-of:${createHash("sha256").update(owner).digest("hex")}`;
  const read = async (id: string, now: number): Promise<TaskRecord | null> => {
    const h = await redis.hgetall(taskKey(id));
    if (h.id === undefined) return null;
    const task = taskFromHash(h);
    return task.expires_at > now ? task : null;
  };
  return {
    async create(record) {
      const made = await redis.tgCreateTask(
        taskKey(record.id),
        indexKey(record.owner),
        liveKey,
        String(record.expires_at),
        String(record.created_at),
        isFinalStatus(record.status) ? "" : String(staleDue(record)),
        ...hashPairs(record),
      );
      if (made !== 1) throw new Error(`task ${record.id} already exists; task ids are single-use`);
    },
    get: read,
    async update(id, from, patch, fence) {
      const pairs = await redis.tgUpdateTask(
        taskKey(id),
        liveKey,
        patch.status,
        encodeOptional(patch.status_message),
        encodeOptional(
          patch.result === undefined ? undefined : patch.result === null ? null : JSON.stringify(patch.result),
        ),
        String(patch.now),
        fence?.updated_before === undefined ? "" : String(fence.updated_before),
        isFinalStatus(patch.status) ? "0" : "1",
        ...from,
      );
      return pairs ? taskFromHash(hashFromPairs(pairs)) : null;
    },
    async list({ owner, after, limit, now }) {
      const want = limit ?? DEFAULT_LIST_LIMIT;
      const index = indexKey(owner);
      const out: TaskRecord[] = [];
      if (want <= 0) return out;
      let from = after === undefined ? "-" : `(${after}`;
      for (;;) {
        const ids = await redis.zrangebylex(index, from, "+", "LIMIT", 0, want);
        for (const id of ids) {
          const task = await read(id, now);
          if (task === null) {
            // Gone with its TTL (or expired for this reader's clock): the index forgets ids whose hash has gone.
            if ((await redis.exists(taskKey(id))) === 0) await redis.zrem(index, id);
          } else if (task.owner === owner) out.push(task);
          if (out.length >= want) return out;
        }
        if (ids.length < want) return out;
        from = `(${ids.at(-1)!}`;
      }
    },
    async stale({ before, now, limit }) {
      const want = limit ?? DEFAULT_LIST_LIMIT;
      const out: TaskRecord[] = [];
      if (want <= 0) return out;
      let offset = 0;
      for (;;) {
        // Due by their own bound up to now; the reader's (`before`) is checked on each one read.
        const ids = await redis.zrangebyscore(liveKey, "-inf", String(now), "LIMIT", offset, want);
        let kept = 0;
        for (const id of ids) {
          const task = await read(id, now);
          if (task === null && (await redis.exists(taskKey(id))) === 0) {
            // Gone with its TTL: the live index forgets it.
            await redis.zrem(liveKey, id);
            continue;
          }
          kept++;
          if (task !== null && !isFinalStatus(task.status) && task.updated_at < before && staleDue(task) <= now)
            out.push(task);
          if (out.length >= want) return out;
        }
        if (ids.length < want) return out;
        offset += kept;
      }
    },
  };
}
