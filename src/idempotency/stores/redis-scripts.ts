/**
 * The Lua scripts of the Redis store: each atomic transition runs server-side as one script,
 * loaded once and called by SHA (ioredis `defineCommand` sends EVALSHA and falls back to EVAL
 * on NOSCRIPT). Records are hashes; an absent field is null.
 *
 * Optional values cross into Lua encoded as one string: "" = keep / absent, "n" = null,
 * "s<text>" = the value (see `encodeOptional`), because Redis arguments cannot carry null.
 */

/** Shared Lua: apply encoded optional fields to a hash. */
const APPLY = `
local function apply(key, set, del, field, v)
  if v == '' then return end
  if v == 'n' then table.insert(del, field) else table.insert(set, field); table.insert(set, string.sub(v, 2)) end
end
local function flush(key, set, del)
  if #set > 0 then redis.call('HSET', key, unpack(set)) end
  if #del > 0 then redis.call('HDEL', key, unpack(del)) end
end
`;

/**
 * KEYS: record, index. ARGV: key, owner, lease_until, fingerprint(enc), tool(enc), now.
 * Returns {1} when claimed (a new record, or an expired COMPLETED one replaced), else {0, HGETALL}.
 */
export const CLAIM = `${APPLY}
local state = redis.call('HGET', KEYS[1], 'state')
if state then
  local exp = redis.call('HGET', KEYS[1], 'expires_at')
  if not (state == 'COMPLETED' and exp and tonumber(exp) <= tonumber(ARGV[6])) then
    return {0, redis.call('HGETALL', KEYS[1])}
  end
  redis.call('DEL', KEYS[1])
end
local set, del = {'state', 'IN_FLIGHT', 'owner', ARGV[2], 'lease_until', ARGV[3], 'created_at', ARGV[6], 'updated_at', ARGV[6]}, {}
apply(KEYS[1], set, del, 'fingerprint', ARGV[4])
apply(KEYS[1], set, del, 'tool', ARGV[5])
redis.call('HSET', KEYS[1], unpack(set))
redis.call('ZADD', KEYS[2], 0, ARGV[1])
return {1}
`;

/**
 * KEYS: record. ARGV: fence owner, from, state, owner(enc), lease_until(enc), result(enc),
 * error(enc), expires_at(enc), now. Returns HGETALL of the new record, or false when the fence failed.
 * A COMPLETED record with an expiry gets the remaining TTL through PEXPIRE (the backend-native
 * TTL of store.ts); any other state is made persistent, so IN_DOUBT never expires.
 */
export const TRANSITION = `${APPLY}
local cur = redis.call('HMGET', KEYS[1], 'owner', 'state', 'expires_at')
if cur[1] ~= ARGV[1] or cur[2] ~= ARGV[2] then return false end
if cur[2] == 'COMPLETED' and cur[3] and tonumber(cur[3]) <= tonumber(ARGV[9]) then return false end
local set, del = {'state', ARGV[3], 'updated_at', ARGV[9]}, {}
apply(KEYS[1], set, del, 'owner', ARGV[4])
apply(KEYS[1], set, del, 'lease_until', ARGV[5])
apply(KEYS[1], set, del, 'result', ARGV[6])
apply(KEYS[1], set, del, 'error', ARGV[7])
apply(KEYS[1], set, del, 'expires_at', ARGV[8])
flush(KEYS[1], set, del)
local exp = redis.call('HGET', KEYS[1], 'expires_at')
if ARGV[3] == 'COMPLETED' and exp then
  redis.call('PEXPIRE', KEYS[1], math.max(1, tonumber(exp) - tonumber(ARGV[9])))
else
  redis.call('PERSIST', KEYS[1])
end
return redis.call('HGETALL', KEYS[1])
`;

/** KEYS: record, index. ARGV: key, owner, from. Deletes when owner and state match; returns 1 or 0. */
export const RELEASE = `
local cur = redis.call('HMGET', KEYS[1], 'owner', 'state')
if cur[1] ~= ARGV[2] or cur[2] ~= ARGV[3] then return 0 end
redis.call('DEL', KEYS[1])
redis.call('ZREM', KEYS[2], ARGV[1])
return 1
`;

/**
 * KEYS: budgets hash. ARGV: id, amount, limit. Adds when the total stays ≤ limit.
 * Returns {ok, spent} with the spend as a %.17g string: a Lua number returned to Redis would be
 * truncated to an integer, and 17 significant digits round-trip a double exactly.
 */
export const SPEND = `
local spent = tonumber(redis.call('HGET', KEYS[1], ARGV[1]) or '0')
local total = spent + tonumber(ARGV[2])
if total > tonumber(ARGV[3]) then return {0, string.format('%.17g', spent)} end
redis.call('HSET', KEYS[1], ARGV[1], string.format('%.17g', total))
return {1, string.format('%.17g', total)}
`;

/** KEYS: approval, index. ARGV: id, created_at, then field/value pairs. Returns 0 when the id exists. */
export const CREATE_APPROVAL = `
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
redis.call('HSET', KEYS[1], unpack(ARGV, 3))
redis.call('ZADD', KEYS[2], ARGV[2], ARGV[1])
return 1
`;

/**
 * KEYS: approval. ARGV: from, state(enc), decided_at(enc), approver(enc), note(enc).
 * Compare-and-set on state; returns HGETALL of the updated approval or false.
 */
export const UPDATE_APPROVAL = `${APPLY}
if redis.call('HGET', KEYS[1], 'state') ~= ARGV[1] then return false end
local set, del = {}, {}
apply(KEYS[1], set, del, 'state', ARGV[2])
apply(KEYS[1], set, del, 'decided_at', ARGV[3])
apply(KEYS[1], set, del, 'approver', ARGV[4])
apply(KEYS[1], set, del, 'note', ARGV[5])
flush(KEYS[1], set, del)
return redis.call('HGETALL', KEYS[1])
`;

/** `undefined` → "" (keep/absent), `null` → "n", a value → "s" + its text. */
export function encodeOptional(value: string | number | null | undefined): string {
  if (value === undefined) return "";
  return value === null ? "n" : `s${value}`;
}

/** A flat HGETALL reply ([field, value, …], as scripts return it) as an object. */
export function hashFromPairs(pairs: string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (let i = 0; i + 1 < pairs.length; i += 2) out[pairs[i]!] = pairs[i + 1]!;
  return out;
}
