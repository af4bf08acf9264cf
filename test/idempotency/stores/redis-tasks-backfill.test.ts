/**
 * Tasks the Redis store kept before its live set existed (hashes with no entry in
 * `PREFIX tasks-live`), against the real server: opening the store adds the live ones to the set in
 * the background, and leaves out the ended ones and keys that are no task; a task already in the set
 * keeps its newer score; a walk cut short resumes from its cursor at the next open until `done`, and
 * the set comes out the same however it was cut; the runner's sweep then fails an old orphan with no
 * one reading it.
 */
import { randomBytes } from "node:crypto";
import { Redis } from "ioredis";
import { afterAll, describe, expect, it } from "vitest";
import { createRedisStore } from "../../../src/idempotency/stores/redis.js";
import { BACKFILL_DONE, backfillLiveTasks } from "../../../src/idempotency/stores/tasks-redis-backfill.js";
import { createGateway } from "../../../src/runtime/gateway.js";
import { createTaskRunner } from "../../../src/runtime/tasks.js";
import { heldTool } from "../../runtime/held.js";
import { REDIS_URL, serviceAvailable } from "../../support/require.js";
import { dropRedisPrefix } from "../fixtures/service-cleanup.js";

const up = await serviceAvailable("Redis", new URL(REDIS_URL).hostname, Number(new URL(REDIS_URL).port || 6379));
const run = randomBytes(4).toString("hex");
// A prefix holding SCAN's glob characters: the walk must match it literally.
const base = `tg-test-backfill-${run}*[x]?:`;
afterAll(() => (up ? dropRedisPrefix(`tg-test-backfill-${run}`) : undefined));

const TASKS = 600;
const statusOf = (i: number) => (["working", "input_required", "completed", "failed", "cancelled"] as const)[i % 5];

/** TASKS tasks as the store wrote them before the live set: hashes only, written at 1000 + i. */
async function oldTasks(raw: Redis, prefix: string): Promise<Map<string, number>> {
  const live = new Map<string, number>();
  const far = Date.now() + 3_600_000;
  const batch = raw.pipeline();
  for (let i = 0; i < TASKS; i++) {
    const id = `tk_old${String(i).padStart(4, "0")}`;
    const status = statusOf(i);
    batch.hset(`${prefix}task:${id}`, {
      ...{ id, tool: "held", owner: "alice", status, created_at: 1000 + i, updated_at: 1000 + i },
      ...{ ttl_ms: far - 1000 - i, expires_at: far, poll_ms: 20 },
    });
    batch.pexpireat(`${prefix}task:${id}`, far);
    if (status === "working" || status === "input_required") live.set(id, 1000 + i);
  }
  // Under the task prefix but no task hash; and a key of a prefix the glob would match unescaped.
  batch.set(`${prefix}task:not-a-hash`, "x");
  batch.hset(`${prefix.replace("*[x]?", "Zx_")}task:tk_other`, { id: "tk_other", status: "working", updated_at: 5 });
  await batch.exec();
  return live;
}

const scores = async (raw: Redis, prefix: string) =>
  new Map(
    Object.entries(
      Object.fromEntries(
        (await raw.zrange(`${prefix}tasks-live`, 0, -1, "WITHSCORES")).flatMap((v, i, a) =>
          i % 2 ? [] : [[v, Number(a[i + 1])]],
        ),
      ),
    ),
  );

async function until(read: () => Promise<boolean>): Promise<void> {
  while (!(await read())) await new Promise((r) => setTimeout(r, 10));
}

describe.runIf(up)("the Redis live set's backfill of tasks stored before it", { timeout: 60_000 }, () => {
  it("adds the live ones at open, in the background; a task already there keeps its score; a sweep then fails them", async () => {
    const prefix = `${base}open:`;
    const raw = new Redis(REDIS_URL);
    const live = await oldTasks(raw, prefix);
    // One old task written since the live set exists (an update put it there with its new score).
    await raw.hset(`${prefix}task:tk_old0000`, "updated_at", 9_999);
    await raw.zadd(`${prefix}tasks-live`, 9_999, "tk_old0000");
    live.set("tk_old0000", 9_999);
    const store = await createRedisStore({ url: REDIS_URL, prefix });
    await until(async () => (await raw.get(`${prefix}tasks-live-backfill`)) === BACKFILL_DONE);
    expect(await scores(raw, prefix)).toEqual(live);
    // Opened again: the walk is done for good and nothing changes.
    const again = await createRedisStore({ url: REDIS_URL, prefix });
    await again.close();
    expect(await scores(raw, prefix)).toEqual(live);
    // A sweep finds them without anyone reading them.
    const gateway = createGateway({ tools: [heldTool()], store, audit: false });
    const runner = createTaskRunner(gateway, { store, poll_ms: 20, stale_ms: 600_000 });
    expect(await runner.sweep()).toBe(100);
    const found = await store.tasks.stale({ before: Date.now(), now: Date.now(), limit: 1000 });
    expect(found).toHaveLength(live.size - 100);
    runner.close();
    await gateway.close({ grace_ms: 0 });
    await store.close();
    raw.disconnect();
  });

  it("cut short at any step, resumes from its cursor at the next run and ends with the same set", async () => {
    const prefix = `${base}resume:`;
    const raw = new Redis(REDIS_URL);
    const live = await oldTasks(raw, prefix);
    const client = new Redis(REDIS_URL);
    const cursors: Array<string | null> = [];
    // One step a run, as a process stopped after each batch would leave it.
    for (let runs = 0; (await raw.get(`${prefix}tasks-live-backfill`)) !== BACKFILL_DONE; runs++) {
      expect(runs, "a walk that never ends").toBeLessThan(1000);
      await backfillLiveTasks(client, prefix, 1).ended;
      cursors.push(await raw.get(`${prefix}tasks-live-backfill`));
    }
    expect(cursors.length).toBeGreaterThan(1);
    expect(cursors.slice(0, -1).every((c) => c !== null && /^\d+$/.test(c) && c !== "0")).toBe(true);
    expect(await scores(raw, prefix)).toEqual(live);
    // A stop before the first step leaves the cursor as it was.
    await raw.set(`${prefix}tasks-live-backfill`, "garbage");
    const stopped = backfillLiveTasks(client, prefix);
    await stopped.stop();
    expect(await raw.get(`${prefix}tasks-live-backfill`)).toBe("garbage");
    // A cursor that is no cursor starts over: only work repeats, the set is the same.
    await backfillLiveTasks(client, prefix).ended;
    expect(await raw.get(`${prefix}tasks-live-backfill`)).toBe(BACKFILL_DONE);
    expect(await scores(raw, prefix)).toEqual(live);
    client.disconnect();
    raw.disconnect();
  });
});
