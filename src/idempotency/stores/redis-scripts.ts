/**
 * The Lua scripts of the Redis store: each atomic transition runs server-side as one script,
 * loaded once and called by SHA (ioredis `defineCommand` sends EVALSHA and falls back to EVAL
 * on NOSCRIPT). Records are single string values (`redis-record.ts`); approvals are hashes,
 * where an absent field is null.
 *
 * Optional approval values cross into Lua encoded as one string: "" = keep / absent, "n" = null,
 * "s<text>" = the value (see `encodeOptional`), because Redis arguments cannot carry null.
 */

/** Shared Lua: apply encoded optional fields to a hash. */
export const APPLY = `
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
 * Shared Lua: the first `n` fields of a record value (see `redis-record.ts`) and the position
 * after them; `expired` is rows.ts `completedExpired`, repeated here so a script decides atomically.
 */
const FIELDS = `
local function fields(v, n)
  local f, pos = {}, 1
  for i = 1, n do
    local j = string.find(v, '\\31', pos, true)
    f[i] = string.sub(v, pos, j - 1)
    pos = j + 1
  end
  return f, pos
end
local function expired(f, now)
  return f[1] == '"COMPLETED"' and f[4] ~= 'null' and tonumber(f[4]) <= tonumber(now)
end
`;

/**
 * The claim when the fast path (`SET key value NX`) found a record. KEYS: record.
 * ARGV: the claim's value, now. Replaces a COMPLETED record whose TTL has passed (by the
 * caller's clock) and returns 1; otherwise returns the existing value unchanged.
 */
export const CLAIM_EXISTING = `${FIELDS}
local v = redis.call('GET', KEYS[1])
if v and not expired(fields(v, 4), ARGV[2]) then return v end
redis.call('SET', KEYS[1], ARGV[1])
return 1
`;

/**
 * KEYS: record. ARGV: fence owner (JSON), from (JSON), state (JSON), then as JSON text or ""
 * to keep: owner, lease_until, result, error, expires_at; then now. Returns 1 when applied, 0
 * when the fence failed; nothing is sent back (store.ts `transition`). A COMPLETED record with
 * an expiry is written with PX (the backend-native TTL of store.ts); any other value is written
 * without one, so IN_DOUBT never expires.
 */
export const TRANSITION = `${FIELDS}
local v = redis.call('GET', KEYS[1])
if not v then return 0 end
local f, pos = fields(v, 9)
if f[2] ~= ARGV[1] or f[1] ~= ARGV[2] or expired(f, ARGV[9]) then return 0 end
local result = ARGV[6]
if result == '' then result = string.sub(v, pos) end
f[1] = ARGV[3]
if ARGV[4] ~= '' then f[2] = ARGV[4] end
if ARGV[5] ~= '' then f[3] = ARGV[5] end
if ARGV[7] ~= '' then f[7] = ARGV[7] end
if ARGV[8] ~= '' then f[4] = ARGV[8] end
f[9] = ARGV[9]
f[10] = result
local value = table.concat(f, '\\31')
if ARGV[3] == '"COMPLETED"' and f[4] ~= 'null' then
  redis.call('SET', KEYS[1], value, 'PX', math.max(1, tonumber(f[4]) - tonumber(ARGV[9])))
else
  redis.call('SET', KEYS[1], value)
end
return 1
`;

/** KEYS: record. ARGV: owner (JSON), from (JSON). Deletes when owner and state match; returns 1 or 0. */
export const RELEASE = `${FIELDS}
local v = redis.call('GET', KEYS[1])
if not v then return 0 end
local f = fields(v, 2)
if f[2] ~= ARGV[1] or f[1] ~= ARGV[2] then return 0 end
redis.call('DEL', KEYS[1])
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

/**
 * KEYS: approval, index, latest (the id of the newest approval created pending for the same call).
 * ARGV: id, created_at, now ("" = create without looking), key prefix of approvals, latest's TTL in
 * ms ("0" = not pending: leave latest), then field/value pairs. Returns the latest approval's
 * HGETALL when it is still live at now (not denied and not expired, approval-binding.ts
 * `isLiveAt`; nothing created), else 1 created, 0 the id exists.
 */
export const CREATE_APPROVAL = `
if ARGV[3] ~= '' then
  local id = redis.call('GET', KEYS[3])
  if id then
    local key = ARGV[4] .. id
    local found = redis.call('HMGET', key, 'state', 'expires_at')
    if found[1] and found[1] ~= 'denied' and tonumber(found[2]) > tonumber(ARGV[3]) then return redis.call('HGETALL', key) end
  end
end
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
redis.call('HSET', KEYS[1], unpack(ARGV, 6))
redis.call('ZADD', KEYS[2], ARGV[2], ARGV[1])
if tonumber(ARGV[5]) > 0 then redis.call('SET', KEYS[3], ARGV[1], 'PX', ARGV[5]) end
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
