/**
 * The guard store in Redis, beside the idempotency store's keys (same prefix), connected the
 * same way (`redis-connect.ts`). A pin is one hash (`PREFIX pin:["server","tool"]`) listed in a
 * set per server; a report and a take are each one Lua script, so each is atomic across
 * replicas. A rate window is a hash that expires (PEXPIRE, the time left from the caller's now) when the window ends.
 */
import type { Redis } from "ioredis";
import type { GuardStore } from "../guard-store.js";
import { orderedWindows, pinFromRow, windowFull, type PinRow } from "./guard-rows.js";
import { connectRedis } from "./redis-connect.js";

export interface RedisGuardStoreOptions {
  url: string;
  prefix?: string | undefined;
  connectTimeoutMs?: number | undefined;
}

/** KEYS: pin hash, the server's set. ARGV: tool, hash, definition, now. Returns the pin's fields. */
const OBSERVE = `
if redis.call('EXISTS', KEYS[1]) == 0 then
  redis.call('HSET', KEYS[1], 'hash', ARGV[2], 'definition', ARGV[3], 'pinned_at', ARGV[4])
  redis.call('SADD', KEYS[2], ARGV[1])
elseif redis.call('HGET', KEYS[1], 'hash') ~= ARGV[2] then
  redis.call('HSET', KEYS[1], 'pending_hash', ARGV[2], 'pending_definition', ARGV[3], 'pending_seen', ARGV[4])
end
return redis.call('HGETALL', KEYS[1])`;

/** KEYS: pin hash. ARGV: hash, now. Returns the pin's fields, or false when that hash is not pending. */
const ACCEPT = `
if redis.call('HGET', KEYS[1], 'pending_hash') ~= ARGV[1] then return false end
local def = redis.call('HGET', KEYS[1], 'pending_definition')
redis.call('HSET', KEYS[1], 'hash', ARGV[1], 'definition', def, 'pinned_at', ARGV[2])
redis.call('HDEL', KEYS[1], 'pending_hash', 'pending_definition', 'pending_seen')
return redis.call('HGETALL', KEYS[1])`;

/**
 * KEYS: one hash per window. ARGV: now, then limit and window_ms per key. The window's rule
 * (guard-rows.ts currentWindow): a window lasts while now < started_at + window_ms. Returns 0 when
 * every window counted the call, else the 1-based index of the full one and its start.
 */
const TAKE = `
local now = tonumber(ARGV[1])
local starts = {}
for i, key in ipairs(KEYS) do
  local limit = tonumber(ARGV[2 * i])
  local window = tonumber(ARGV[2 * i + 1])
  local s = redis.call('HMGET', key, 'started_at', 'count')
  local started, count = tonumber(s[1]), tonumber(s[2])
  if started == nil or now >= started + window then started, count = now, 0 end
  if count >= limit then return {i, tostring(started), tostring(count)} end
  starts[i] = {started, count}
end
for i, key in ipairs(KEYS) do
  local window = tonumber(ARGV[2 * i + 1])
  redis.call('HSET', key, 'started_at', tostring(starts[i][1]), 'count', tostring(starts[i][2] + 1))
  redis.call('PEXPIRE', key, starts[i][1] + window - now)
end
return 0`;

interface Scripted extends Redis {
  tgPinObserve(pin: string, set: string, ...argv: string[]): Promise<string[]>;
  tgPinAccept(pin: string, ...argv: string[]): Promise<string[] | null>;
  tgRateTake(numKeys: number, ...keysAndArgs: string[]): Promise<0 | [number, string, string]>;
}

/** HGETALL's flat field list as the row the SQL stores return. */
function rowOf(server: string, tool: string, fields: string[]): PinRow {
  const f: Record<string, string> = {};
  for (let i = 0; i + 1 < fields.length; i += 2) f[fields[i]!] = fields[i + 1]!;
  return {
    server,
    tool,
    hash: f.hash!,
    definition: f.definition!,
    pinned_at: f.pinned_at!,
    pending_hash: f.pending_hash ?? null,
    pending_definition: f.pending_definition ?? null,
    pending_seen: f.pending_seen ?? null,
  };
}

export async function createRedisGuardStore(options: RedisGuardStoreOptions): Promise<GuardStore> {
  const redis = (await connectRedis(options)) as Scripted;
  redis.defineCommand("tgPinObserve", { numberOfKeys: 2, lua: OBSERVE });
  redis.defineCommand("tgPinAccept", { numberOfKeys: 1, lua: ACCEPT });
  redis.defineCommand("tgRateTake", { lua: TAKE });
  const prefix = options.prefix ?? "toolgate:";
  const pinKey = (server: string, tool: string) => `${prefix}pin:${JSON.stringify([server, tool])}`;
  const setKey = (server: string) => `${prefix}pins:${JSON.stringify(server)}`;
  let closed = false;
  return {
    kind: "redis",
    capabilities: { shared: true, durable: true },
    pins: {
      async observe(server, tool, hash, definition, now) {
        const fields = await redis.tgPinObserve(
          pinKey(server, tool),
          setKey(server),
          tool,
          hash,
          JSON.stringify(definition),
          String(now),
        );
        return pinFromRow(rowOf(server, tool, fields));
      },
      async list(server) {
        const tools = (await redis.smembers(setKey(server))).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
        const pins = await Promise.all(tools.map(async (t) => [t, await redis.hgetall(pinKey(server, t))] as const));
        return pins
          .filter(([, h]) => h.hash !== undefined)
          .map(([t, h]) => pinFromRow(rowOf(server, t, Object.entries(h).flat())));
      },
      async accept(server, tool, hash, now) {
        const fields = await redis.tgPinAccept(pinKey(server, tool), hash, String(now));
        return fields === null ? null : pinFromRow(rowOf(server, tool, fields));
      },
    },
    rates: {
      async take(asked, now) {
        const ordered = orderedWindows(asked);
        if (ordered.length === 0) return { ok: true };
        const keys = ordered.map((w) => `${prefix}rate:${w.key}`);
        const argv = [String(now), ...ordered.flatMap((w) => [String(w.limit), String(w.window_ms)])];
        const answer = await redis.tgRateTake(keys.length, ...keys, ...argv);
        if (answer === 0) return { ok: true };
        const w = ordered[answer[0] - 1]!;
        return windowFull(w, { started_at: Number(answer[1]), count: Number(answer[2]) }, now);
      },
    },
    async close() {
      if (closed) return;
      closed = true;
      await redis.quit().catch(() => redis.disconnect());
    },
  };
}
