/**
 * Tasks the Redis store kept before its live set (`PREFIX tasks-live`) existed are not in it, so
 * `stale` never finds one no process writes any more: it was failed only when someone read it.
 * This adds them, once per prefix: a SCAN over `PREFIX task:*` (never KEYS), a bounded batch a step,
 * each batch one script that adds the tasks still live (ZADD NX, scored by their own deadline,
 * updated_at plus stale_ms, as create does: a task written meanwhile keeps its newer score, an ended one is left out, atomically
 * against the update script). The cursor is kept under `PREFIX tasks-live-backfill` after each
 * batch, so a process stopped halfway (or past `BACKFILL_MAX_STEPS` in one open) resumes where it
 * was at its next open, and `done` there ends it for good. Run at open without being awaited; replicas doing it at once only repeat work.
 */
import type { Redis } from "ioredis";
import { LIVE_STATUSES } from "../tasks.js";

/** Keys SCAN looks at a step (its COUNT); the batch the script gets is those that match. */
export const BACKFILL_SCAN_COUNT = 200;

/** The most steps one open takes (2,000,000 keys looked at); the rest is for the next open. */
export const BACKFILL_MAX_STEPS = 10_000;

/** What the cursor key holds once every task key has been seen. */
export const BACKFILL_DONE = "done";

/**
 * KEYS: live index, then task keys. ARGV: the live statuses. Adds each live task's id scored by
 * its own deadline (updated_at plus its stale_ms, or updated_at alone) unless the set has it; skips what is no task hash. How many it added.
 */
const ADD_LIVE = `
local added = 0
for i = 2, #KEYS do
  if redis.call('TYPE', KEYS[i]).ok == 'hash' then
    local f = redis.call('HMGET', KEYS[i], 'status', 'updated_at', 'id', 'stale_ms')
    local live = false
    for j = 1, #ARGV do if ARGV[j] == f[1] then live = true end end
    if live and f[3] and tonumber(f[2]) then
      local due = string.format('%d', tonumber(f[2]) + (tonumber(f[4]) or 0))
      added = added + redis.call('ZADD', KEYS[1], 'NX', due, f[3])
    end
  end
end
return added`;

interface Scripted extends Redis {
  tgBackfillLive(keys: number, ...args: string[]): Promise<number>;
}

export interface Backfill {
  /** Settles when the walk ends: done, stopped, or failed (a failure is left for the next open). */
  ended: Promise<void>;
  /** Stops after the step under way; settles once no command of the walk is in flight. */
  stop(): Promise<void>;
}

/** SCAN's MATCH reads *, ?, [ ] and \ as a glob: a prefix holding them matches only itself. */
const globEscaped = (text: string) => text.replace(/[*?[\]\\]/g, (c) => `\\${c}`);

export function backfillLiveTasks(client: Redis, prefix: string, maxSteps = BACKFILL_MAX_STEPS): Backfill {
  const redis = client as Scripted;
  redis.defineCommand("tgBackfillLive", { lua: ADD_LIVE });
  const cursorKey = `${prefix}tasks-live-backfill`;
  const liveKey = `${prefix}tasks-live`;
  const match = `${globEscaped(prefix)}task:*`;
  let stopped = false;
  async function walk(): Promise<void> {
    const kept = await redis.get(cursorKey);
    if (kept === BACKFILL_DONE) return;
    // Anything else than a cursor SCAN gave (a key someone else wrote) starts over: only work repeats.
    let cursor = kept !== null && /^\d{1,20}$/.test(kept) ? kept : "0";
    for (let step = 0; step < maxSteps && !stopped; step++) {
      const [next, keys] = await redis.scan(cursor, "MATCH", match, "COUNT", BACKFILL_SCAN_COUNT);
      if (keys.length > 0) await redis.tgBackfillLive(keys.length + 1, liveKey, ...keys, ...LIVE_STATUSES);
      cursor = next;
      await redis.set(cursorKey, cursor === "0" ? BACKFILL_DONE : cursor);
      if (cursor === "0") return;
    }
  }
  const ended = walk().catch(() => {});
  return {
    ended,
    stop() {
      stopped = true;
      return ended;
    },
  };
}
