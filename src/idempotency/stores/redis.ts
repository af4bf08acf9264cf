/**
 * The Redis store (ioredis, loaded lazily): each record is one string value under `PREFIX rec:KEY`
 * (`redis-record.ts`). The claim is `SET NX`, with a script only when a record exists; every
 * other atomic transition is a Lua script (`redis-scripts.ts`). COMPLETED records expire
 * through PX; IN_DOUBT ones never do.
 */
import type { Redis } from "ioredis";
import { ToolgateError } from "../../core/errors.js";
import { createHash } from "node:crypto";
import type { ApprovalRecord, ApprovalStore, BudgetStore, RecordStore, RevocationStore, Store } from "../store.js";
import { approvalBinding } from "./approval-binding.js";
import { connectRedis } from "./redis-connect.js";
import { approvalFromRow, approvalToRow, checkSpend, claimedRecord, completedExpired } from "./rows.js";
import type { ApprovalRow } from "./rows.js";
import * as lua from "./redis-scripts.js";
import { encodeOptional as enc, hashFromPairs } from "./redis-scripts.js";
import { listRedisRecords } from "./redis-list.js";
import { decodeRecord, encodeClaim, keepOr } from "./redis-record.js";
import { redisTasks } from "./tasks-redis.js";
import { backfillLiveTasks } from "./tasks-redis-backfill.js";

export interface RedisStoreOptions {
  /** `redis://[user:password@]HOST:PORT/DB` or `rediss://…` (TLS). */
  url: string;
  /** Prefix of every key this store writes, so stores can share one database. Default `toolgate:`. */
  prefix?: string;
  /** Connect timeout in ms; a store that does not answer in time fails with `store_unavailable`. Default 2000. */
  connectTimeoutMs?: number;
  /** A command not answered within this many ms fails instead of waiting on a hung server. Default 10000. */
  commandTimeoutMs?: number;
}

/** The scripts as ioredis commands (`defineCommand`: EVALSHA, EVAL on NOSCRIPT). */
interface Scripted extends Redis {
  tgClaimExisting(rec: string, value: string, now: string): Promise<1 | string>;
  tgTransition(rec: string, ...argv: string[]): Promise<0 | 1>;
  tgRelease(rec: string, owner: string, from: string): Promise<number>;
  tgSpend(budgets: string, ...argv: string[]): Promise<[number, string]>;
  tgCreateApproval(rec: string, index: string, latest: string, ...argv: string[]): Promise<number | string[]>;
  tgUpdateApproval(rec: string, ...argv: string[]): Promise<string[] | null>;
}

/** Opens the Redis store; fails fast with `store_unavailable` (URL without password) when Redis does not answer. */
export async function createRedisStore(options: RedisStoreOptions): Promise<Store> {
  const redis = (await connectRedis(options)) as Scripted;
  redis.defineCommand("tgClaimExisting", { numberOfKeys: 1, lua: lua.CLAIM_EXISTING });
  redis.defineCommand("tgTransition", { numberOfKeys: 1, lua: lua.TRANSITION });
  redis.defineCommand("tgRelease", { numberOfKeys: 1, lua: lua.RELEASE });
  redis.defineCommand("tgSpend", { numberOfKeys: 1, lua: lua.SPEND });
  redis.defineCommand("tgCreateApproval", { numberOfKeys: 3, lua: lua.CREATE_APPROVAL });
  redis.defineCommand("tgUpdateApproval", { numberOfKeys: 1, lua: lua.UPDATE_APPROVAL });

  const prefix = options.prefix ?? "toolgate:";
  // Tasks stored before the live set existed, added to it in the background (not awaited).
  const backfill = backfillLiveTasks(redis, prefix);
  let closed = false;
  return {
    kind: "redis",
    capabilities: { shared: true, durable: true },
    records: redisRecords(redis, prefix),
    revocations: redisRevocations(redis, prefix),
    budgets: redisBudgets(redis, prefix),
    approvals: redisApprovals(redis, prefix),
    tasks: redisTasks(redis, prefix),
    async close() {
      if (closed) return;
      closed = true;
      await backfill.stop();
      await redis.quit().catch(() => redis.disconnect());
    },
  };
}

function redisRecords(redis: Scripted, prefix: string): RecordStore {
  const recPrefix = `${prefix}rec:`;
  return {
    async claim(key, input) {
      const value = encodeClaim(input);
      // Fast path: one plain SET NX, as cheap as the raw client's own write.
      if ((await redis.set(recPrefix + key, value, "NX")) === "OK")
        return { claimed: true, record: claimedRecord(key, input) };
      const existing = await redis.tgClaimExisting(recPrefix + key, value, String(input.now));
      if (existing === 1) return { claimed: true, record: claimedRecord(key, input) };
      return { claimed: false, record: decodeRecord(key, existing) };
    },
    async get(key, now) {
      const value = await redis.get(recPrefix + key);
      if (value === null) return null;
      const record = decodeRecord(key, value);
      return completedExpired(record.state, record.expires_at, now) ? null : record;
    },
    async transition(key, owner, from, patch) {
      const applied = await redis.tgTransition(
        recPrefix + key,
        JSON.stringify(owner),
        JSON.stringify(from),
        JSON.stringify(patch.state),
        keepOr(patch.owner),
        keepOr(patch.lease_until),
        keepOr(patch.result),
        keepOr(patch.error),
        keepOr(patch.expires_at),
        String(patch.now),
      );
      return applied === 1;
    },
    async release(key, owner, from) {
      return (await redis.tgRelease(recPrefix + key, JSON.stringify(owner), JSON.stringify(from))) === 1;
    },
    list: (query) => listRedisRecords(redis, recPrefix, query),
  };
}

function redisRevocations(redis: Scripted, prefix: string): RevocationStore {
  const entries = `${prefix}revoked`;
  const firstAt = `${prefix}revoked-at`;
  const live = (text: string | null, now: number) => {
    if (text === null) return null;
    const entry = JSON.parse(text) as { reason: string | null; until: number | null };
    return entry.until === null || entry.until > now ? entry : null;
  };
  return {
    async revoke(id, input) {
      // revoked_at keeps the first revocation; reason and until take the latest.
      await redis
        .multi()
        .hset(entries, id, JSON.stringify({ reason: input.reason, until: input.until }))
        .hsetnx(firstAt, id, String(input.now))
        .exec();
    },
    async firstRevoked(ids, now) {
      if (ids.length === 0) return null;
      const found = await redis.hmget(entries, ...ids);
      const i = found.findIndex((text) => live(text, now) !== null);
      return i === -1 ? null : ids[i]!;
    },
    async list(now) {
      const [all, at] = await Promise.all([redis.hgetall(entries), redis.hgetall(firstAt)]);
      const revokedAt = (id: string) => Number(at[id] ?? now);
      return Object.keys(all)
        .sort((a, b) => revokedAt(a) - revokedAt(b) || (a < b ? -1 : a > b ? 1 : 0))
        .flatMap((id) => {
          const entry = live(all[id]!, now);
          return entry ? [{ id, reason: entry.reason, revoked_at: revokedAt(id), until: entry.until }] : [];
        });
    },
  };
}

function redisBudgets(redis: Scripted, prefix: string): BudgetStore {
  const budgets = `${prefix}budgets`;
  return {
    async spend(id, amount, limit) {
      checkSpend(id, amount, limit);
      const [ok, spent] = await redis.tgSpend(budgets, id, String(amount), String(limit));
      return { ok: ok === 1, remaining: limit - Number(spent) };
    },
    async spent(id) {
      return Number((await redis.hget(budgets, id)) ?? 0);
    },
  };
}

function redisApprovals(redis: Scripted, prefix: string): ApprovalStore {
  const recKey = (id: string) => `${prefix}apr:${id}`;
  const index = `${prefix}apr-index`;
  const fromHash = (hash: Record<string, string>) => approvalFromRow(hash as unknown as ApprovalRow);
  /** One script creates, or with `now` first returns the approval still live for the same call. */
  const create = async (record: ApprovalRecord, now: number | null): Promise<ApprovalRecord> => {
    const fields = Object.entries(approvalToRow(record)).flatMap(([field, value]) =>
      value === null ? [] : [field, String(value)],
    );
    const latest = `${prefix}apr-latest:${createHash("sha256").update(approvalBinding(record)).digest("base64url")}`;
    const ttl = record.state === "pending" ? Math.max(0, record.expires_at - record.created_at) : 0;
    const reply = await redis.tgCreateApproval(
      recKey(record.id),
      index,
      latest,
      record.id,
      String(record.created_at),
      now === null ? "" : String(now),
      recKey(""),
      String(ttl),
      ...fields,
    );
    if (Array.isArray(reply)) return fromHash(hashFromPairs(reply));
    if (reply !== 1)
      throw new ToolgateError(
        "approval_exists",
        `approval ${record.id} already exists; create each approval once with a fresh id`,
      );
    return record;
  };
  return {
    async create(record) {
      await create(record, null);
    },
    createOrReuse: create,
    async get(id) {
      const hash = await redis.hgetall(recKey(id));
      return hash.id ? fromHash(hash) : null;
    },
    async update(id, from, patch) {
      const pairs = await redis.tgUpdateApproval(
        recKey(id),
        from,
        enc(patch.state),
        enc(patch.decided_at),
        enc(patch.approver),
        enc(patch.note),
      );
      return pairs ? fromHash(hashFromPairs(pairs)) : null;
    },
    async list(query) {
      // Newest first; equal created_at in descending id order (ZREVRANGE on equal scores).
      const ids = await redis.zrevrange(index, 0, -1);
      const out = [];
      const limit = query.limit ?? Infinity;
      for (let i = 0; i < ids.length && out.length < limit; i += 100) {
        const batch = ids.slice(i, i + 100);
        const pipeline = redis.pipeline();
        for (const id of batch) pipeline.hgetall(recKey(id));
        for (const [, hash] of (await pipeline.exec()) ?? []) {
          const h = hash as Record<string, string>;
          if (!h.id || (query.state && h.state !== query.state)) continue;
          out.push(fromHash(h));
          if (out.length >= limit) break;
        }
      }
      return out;
    },
  };
}
