/**
 * The Redis store's set of live task ids (`PREFIX tasks-live`), which `stale` reads, against the
 * real server: ids whose hash is gone (its TTL passed) are skipped and forgotten however many come
 * first, a page of `limit` still fills from the live ones behind them, and an id whose task expired
 * for the reader's clock only is left in the set (the server has not let it go yet). The set is
 * scored by each task's own deadline (updated_at plus its stale_ms) at create, at each write and at
 * the backfill, so `stale`'s read of it up to `now` never meets a live task whose own bound has not
 * passed, however many a slowly heartbeating replica keeps; an entry the previous release scored by
 * its updated_at alone is read early, checked, and scored by its deadline at its next write.
 */
import { randomBytes } from "node:crypto";
import { Redis } from "ioredis";
import { afterAll, describe, expect, it } from "vitest";
import { createRedisStore } from "../../../src/idempotency/stores/redis.js";
import { liveTask } from "../../runtime/held.js";
import { REDIS_URL, serviceAvailable } from "../../support/require.js";
import { dropRedisPrefix } from "../fixtures/service-cleanup.js";

const up = await serviceAvailable("Redis", new URL(REDIS_URL).hostname, Number(new URL(REDIS_URL).port || 6379));
const prefix = `tg-test-redis-live-${randomBytes(4).toString("hex")}:`;
afterAll(() => (up ? dropRedisPrefix(prefix) : undefined));

const task = liveTask;

describe.runIf(up)("the Redis live-task set", () => {
  it("skips and forgets 150 gone tasks ahead of the live ones; keeps one expired only for the reader", async () => {
    const store = await createRedisStore({ url: REDIS_URL, prefix });
    const raw = new Redis(REDIS_URL);
    const far = Date.now() + 3_600_000;
    // Oldest first: 150 tasks whose hash then goes (as at its TTL), 2 past the reader's `now`, 3 live.
    for (let i = 0; i < 150; i++) await store.tasks.create(task(`tk_gone${String(i).padStart(3, "0")}`, 100 + i, far));
    for (let i = 0; i < 2; i++) await store.tasks.create(task(`tk_late${i}`, 300 + i, far - 1_800_000));
    for (let i = 0; i < 3; i++) await store.tasks.create(task(`tk_live${i}`, 400 + i, far));
    for (let i = 0; i < 150; i++) await raw.del(`${prefix}task:tk_gone${String(i).padStart(3, "0")}`);
    // Past the late ones' expiry on the reader's clock, not yet on the server's.
    const now = far - 900_000;
    expect((await store.tasks.stale({ before: 1_000, now, limit: 2 })).map((t) => t.id)).toEqual([
      "tk_live0",
      "tk_live1",
    ]);
    expect((await store.tasks.stale({ before: 1_000, now })).map((t) => t.id)).toEqual([
      "tk_live0",
      "tk_live1",
      "tk_live2",
    ]);
    expect(await raw.zrange(`${prefix}tasks-live`, 0, -1)).toEqual([
      "tk_late0",
      "tk_late1",
      "tk_live0",
      "tk_live1",
      "tk_live2",
    ]);
    // A task failed (final) leaves the set; a heartbeat moves it past `before`.
    await store.tasks.update("tk_live0", ["working"], { status: "failed", now }, { updated_before: 1_000 });
    await store.tasks.update("tk_live1", ["working"], { status: "working", now });
    expect((await store.tasks.stale({ before: 1_000, now })).map((t) => t.id)).toEqual(["tk_live2"]);
    expect(await raw.zscore(`${prefix}tasks-live`, "tk_live0")).toBeNull();
    raw.disconnect();
    await store.close();
  });

  it("scores each live task by its own deadline, so stale reads none whose own bound has not passed", async () => {
    const at = `${prefix}due:`;
    const store = await createRedisStore({ url: REDIS_URL, prefix: at });
    const raw = new Redis(REDIS_URL);
    const far = Date.now() + 3_600_000;
    // 200 tasks of a replica heartbeating slowly (own bound 1e9 ms), written first; then 3 due by their own bound.
    for (let i = 0; i < 200; i++)
      await store.tasks.create({ ...task(`tk_slow${String(i).padStart(3, "0")}`, 100 + i, far), stale_ms: 1e9 });
    for (let i = 0; i < 3; i++)
      await store.tasks.create({ ...task(`tk_due${i}`, 400 + i, far), stale_ms: 1000 - i * 100 });
    expect(await raw.zscore(`${at}tasks-live`, "tk_slow000")).toBe(String(100 + 1e9));
    expect(await raw.zscore(`${at}tasks-live`, "tk_due2")).toBe(String(402 + 800));
    const now = 5_000;
    // What stale reads of the set: only the due ones, most overdue first, not one slow task among them.
    expect(await raw.zrangebyscore(`${at}tasks-live`, "-inf", String(now))).toEqual(["tk_due2", "tk_due1", "tk_due0"]);
    expect((await store.tasks.stale({ before: now, now })).map((t) => t.id)).toEqual(["tk_due2", "tk_due1", "tk_due0"]);
    // A write moves its deadline on by its own bound.
    await store.tasks.update("tk_due1", ["working"], { status: "input_required", now: 4_500 });
    expect(await raw.zscore(`${at}tasks-live`, "tk_due1")).toBe(String(4_500 + 900));
    expect((await store.tasks.stale({ before: now, now })).map((t) => t.id)).toEqual(["tk_due2", "tk_due0"]);
    // A task stored before the live set existed is added by the backfill under its deadline too.
    await raw.hset(`${at}task:tk_before`, { ...task("tk_before", 50, far), stale_ms: 3000, result: "null" });
    await raw.hdel(`${at}task:tk_before`, "result", "status_message");
    await raw.del(`${at}tasks-live-backfill`);
    const reopened = await createRedisStore({ url: REDIS_URL, prefix: at });
    while ((await raw.get(`${at}tasks-live-backfill`)) !== "done") await new Promise((r) => setTimeout(r, 10));
    expect(await raw.zscore(`${at}tasks-live`, "tk_before")).toBe(String(50 + 3000));
    await reopened.close();
    raw.disconnect();
    await store.close();
    await dropRedisPrefix(at);
  });

  it("an entry scored the old way (by its updated_at alone) is found no later than due, kept out until then, and scored by its deadline at its next write", async () => {
    const at = `${prefix}old:`;
    const store = await createRedisStore({ url: REDIS_URL, prefix: at });
    const raw = new Redis(REDIS_URL);
    const far = Date.now() + 3_600_000;
    await store.tasks.create({ ...task("tk_slow", 100, far), stale_ms: 10_000 });
    await store.tasks.create({ ...task("tk_due", 101, far), stale_ms: 1_000 });
    // As the previous release left them: each scored by its last write.
    for (const [id, written] of [
      ["tk_slow", 100],
      ["tk_due", 101],
    ] as const)
      await raw.zadd(`${at}tasks-live`, "XX", String(written), id);
    // Both are read up to now, and each is checked: only one past its own bound is stale (in the order of the old scores).
    expect((await store.tasks.stale({ before: 5_000, now: 5_000 })).map((t) => t.id)).toEqual(["tk_due"]);
    expect((await store.tasks.stale({ before: 10_100, now: 10_100 })).map((t) => t.id)).toEqual(["tk_slow", "tk_due"]);
    // A heartbeat scores it by its deadline: it drops out of the range until then.
    await store.tasks.update("tk_slow", ["working"], { status: "working", now: 6_000 });
    expect(await raw.zscore(`${at}tasks-live`, "tk_slow")).toBe(String(6_000 + 10_000));
    expect(await raw.zrangebyscore(`${at}tasks-live`, "-inf", "10100")).toEqual(["tk_due"]);
    raw.disconnect();
    await store.close();
    await dropRedisPrefix(at);
  });
});
