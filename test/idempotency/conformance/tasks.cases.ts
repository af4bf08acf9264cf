/** Conformance: tasks (status, result, owner, expiry), the same on every backend. */
import { describe, expect, it } from "vitest";
import type { TaskRecord } from "../../../src/idempotency/tasks.js";
import type { ConformanceContext } from "../store.conformance.js";

function task(id: string, owner: string, now: number, extra: Partial<TaskRecord> = {}): TaskRecord {
  return {
    id,
    tool: "bash_execute",
    owner,
    status: "working",
    status_message: null,
    result: null,
    created_at: now,
    updated_at: now,
    ttl_ms: 600_000,
    expires_at: now + 600_000,
    poll_ms: 1000,
    ...extra,
  };
}

export function taskCases(c: ConformanceContext): void {
  describe("tasks", () => {
    it("a created task reads back whole, JSON result and all; an id is single-use", async () => {
      const now = Date.now();
      const t = task(c.key("task-read"), c.key("owner"), now, {
        status: "completed",
        status_message: "done: exit 0",
        result: { ok: true, text: "a\u0000b ünï", list: [], nested: { empty: {}, n: 1.5, big: 2 ** 53 - 1 } },
      });
      await c.store().tasks.create(t);
      expect(await c.store().tasks.get(t.id, now)).toEqual(t);
      await expect(c.store().tasks.create({ ...t, owner: "someone else" })).rejects.toThrow();
      expect((await c.store().tasks.get(t.id, now))?.owner).toBe(t.owner);
      expect(await c.store().tasks.get(c.key("task-unknown"), now)).toBeNull();
    });

    it("update is a compare-and-set on status: it applies from a listed status only, and keeps what the patch leaves out", async () => {
      const now = Date.now();
      const t = task(c.key("task-cas"), c.key("owner"), now, { status_message: "starting" });
      await c.store().tasks.create(t);
      const waiting = await c.store().tasks.update(t.id, ["working"], {
        status: "input_required",
        status_message: "waits for approval ap_1",
        now: now + 1,
      });
      expect(waiting).toEqual({
        ...t,
        status: "input_required",
        status_message: "waits for approval ap_1",
        updated_at: now + 1,
      });
      // From the wrong status: nothing changes.
      expect(await c.store().tasks.update(t.id, ["working"], { status: "completed", now: now + 2 })).toBeNull();
      const done = await c.store().tasks.update(t.id, ["working", "input_required"], {
        status: "completed",
        status_message: null,
        result: { exit_code: 0 },
        now: now + 3,
      });
      expect(done).toEqual({
        ...t,
        status: "completed",
        status_message: null,
        result: { exit_code: 0 },
        updated_at: now + 3,
      });
      expect(await c.store().tasks.get(t.id, now + 4)).toEqual(done);
      expect(await c.store().tasks.update(c.key("task-none"), ["working"], { status: "failed", now })).toBeNull();
    });

    it("of racing updates from working exactly one wins (cancel against completion)", async () => {
      const now = Date.now();
      const t = task(c.key("task-race"), c.key("owner"), now);
      await c.store().tasks.create(t);
      const n = Math.min(c.concurrency, 50);
      const outcomes = await Promise.all(
        Array.from({ length: n }, (_, i) =>
          c.store().tasks.update(t.id, ["working"], {
            status: i % 2 ? "cancelled" : "completed",
            result: { by: i },
            now: now + 1,
          }),
        ),
      );
      const winners = outcomes.filter((o) => o !== null);
      expect(winners).toHaveLength(1);
      expect(await c.store().tasks.get(t.id, now + 2)).toEqual(winners[0]);
    });

    it("stale lists every owner's live tasks not written since `before`, oldest write first; final and expired ones are left out", async () => {
      const now = Date.now();
      const mine = (ts: { id: string }[]) => ts.map((t) => t.id).filter((id) => id.startsWith(c.prefix));
      const old = task(c.key("stale-old"), c.key("owner-a"), now - 9_000, { updated_at: now - 9_000 });
      const older = task(c.key("stale-older"), c.key("owner-b"), now - 9_500, {
        status: "input_required",
        updated_at: now - 9_500,
      });
      const fresh = task(c.key("stale-fresh"), c.key("owner-a"), now - 100);
      const done = task(c.key("stale-done"), c.key("owner-a"), now - 9_000, { status: "completed" });
      const gone = task(c.key("stale-gone"), c.key("owner-a"), now - 9_000, { expires_at: now - 1 });
      for (const t of [old, older, fresh, done, gone]) await c.store().tasks.create(t);
      const found = await c.store().tasks.stale({ before: now - 5_000, now, limit: 1000 });
      expect(mine(found).filter((id) => [old, older, fresh, done, gone].some((t) => t.id === id))).toEqual([
        older.id,
        old.id,
      ]);
      expect(found.find((t) => t.id === old.id)).toEqual(old);
      // A heartbeat takes it out; a final status too.
      await c.store().tasks.update(old.id, ["working"], { status: "working", now });
      await c.store().tasks.update(older.id, ["input_required"], { status: "cancelled", now: now - 6_000 });
      const after = await c.store().tasks.stale({ before: now - 5_000, now, limit: 1000 });
      expect(after.map((t) => t.id)).not.toContain(old.id);
      expect(after.map((t) => t.id)).not.toContain(older.id);
      expect(await c.store().tasks.stale({ before: now - 5_000, now, limit: 0 })).toEqual([]);
    });

    it("stale waits for a task's own stale_ms when it is longer than the reader's, the most overdue first (earliest own deadline); a task without one goes by `before` alone", async () => {
      const now = Date.now();
      const mine = (ts: { id: string }[]) => ts.map((t) => t.id).filter((id) => id.startsWith(c.prefix));
      const at = now - 9_000;
      // Written 9 s ago, each by a runner with its own bound: 60 s (a slow heartbeat), 9 s exactly, 8 s.
      const slow = task(c.key("own-slow"), c.key("owner"), at, { stale_ms: 60_000 });
      const edge = task(c.key("own-edge"), c.key("owner"), at, { stale_ms: 9_000, updated_at: at + 1 });
      const short = task(c.key("own-short"), c.key("owner"), at, { stale_ms: 8_000, updated_at: at + 2 });
      const old = task(c.key("own-none"), c.key("owner"), at, { updated_at: at + 3 });
      for (const t of [slow, edge, short, old]) await c.store().tasks.create(t);
      expect(await c.store().tasks.get(slow.id, now)).toEqual(slow);
      expect(await c.store().tasks.get(old.id, now)).toEqual(old);
      const ids = [slow, edge, short, old].map((t) => t.id);
      const found = mine(await c.store().tasks.stale({ before: now - 5_000, now, limit: 1000 }));
      // edge's 9 s is 8,999 ms ago: not yet; short's 8 s has passed; old has none of its own, so its
      // deadline is its write (the earliest: first, though written last).
      expect(found.filter((id) => ids.includes(id))).toEqual([old.id, short.id]);
      const later = mine(await c.store().tasks.stale({ before: now - 5_000, now: now + 1, limit: 1000 }));
      expect(later.filter((id) => ids.includes(id))).toEqual([old.id, short.id, edge.id]);
      // The limit keeps the most overdue (another case's overdue tasks on a shared store may come first).
      const first = (await c.store().tasks.stale({ before: now - 5_000, now: now + 1, limit: 2 }))
        .map((t) => t.id)
        .filter((id) => ids.includes(id));
      expect(first).toEqual([old.id, short.id].slice(0, first.length));
      expect(first).not.toContain(edge.id);
      // The reader's own bound still holds when it is the longer: nothing written within it.
      const strict = mine(await c.store().tasks.stale({ before: at, now: now + 60_000, limit: 1000 }));
      expect(strict.filter((id) => ids.includes(id))).toEqual([]);
      const all = mine(await c.store().tasks.stale({ before: now, now: now + 51_000, limit: 1000 }));
      expect(all.filter((id) => ids.includes(id))).toEqual([old.id, short.id, edge.id, slow.id]);
    });

    it("an update fenced by updated_before applies only to a task not written since: a heartbeat that lands first wins", async () => {
      const now = Date.now();
      const t = task(c.key("fence"), c.key("owner"), now - 10_000);
      await c.store().tasks.create(t);
      const [seen] = (await c.store().tasks.stale({ before: now - 5_000, now, limit: 1000 })).filter(
        (x) => x.id === t.id,
      );
      expect(seen?.status).toBe("working");
      // The owning process writes it after the sweep read it: the fenced fail does not hold.
      await c.store().tasks.update(t.id, ["working"], { status: "working", status_message: "alive", now });
      const fail = { status: "failed" as const, status_message: "stale", now: now + 1 };
      expect(await c.store().tasks.update(t.id, ["working"], fail, { updated_before: now - 5_000 })).toBeNull();
      expect(await c.store().tasks.get(t.id, now + 1)).toMatchObject({ status: "working", status_message: "alive" });
      // The bound is strict: written at exactly updated_before is not stale.
      expect(await c.store().tasks.update(t.id, ["working"], fail, { updated_before: now })).toBeNull();
      expect(await c.store().tasks.update(t.id, ["working"], fail, { updated_before: now + 1 })).toMatchObject({
        status: "failed",
        status_message: "stale",
        updated_at: now + 1,
      });
    });

    it("a final write racing a fenced fail of a stale task: exactly one applies, and it is what every reader sees", async () => {
      const rounds = 20;
      const now = Date.now();
      const wins = { completed: 0, failed: 0 };
      for (let r = 0; r < rounds; r++) {
        const t = task(c.key(`fence-race-${r}`), c.key("owner"), now - 10_000);
        await c.store().tasks.create(t);
        const [completion, sweep] = await Promise.all([
          c.store().tasks.update(t.id, ["working", "input_required"], {
            status: "completed",
            result: { round: r },
            now: now + 1,
          }),
          c
            .store()
            .tasks.update(
              t.id,
              ["working"],
              { status: "failed", status_message: "stale", now: now + 1 },
              { updated_before: now - 5_000 },
            ),
        ]);
        const winners = [completion, sweep].filter((o) => o !== null);
        expect(winners).toHaveLength(1);
        expect(await c.store().tasks.get(t.id, now + 2)).toEqual(winners[0]);
        wins[winners[0]!.status as "completed" | "failed"]++;
        // A completed task stays completed: a later fenced fail finds nothing to change.
        expect(
          await c
            .store()
            .tasks.update(
              t.id,
              ["working", "input_required"],
              { status: "failed", now: now + 3 },
              { updated_before: now + 3 },
            ),
        ).toBeNull();
      }
      expect(wins.completed + wins.failed).toBe(rounds);
    });

    it("a task is gone from its expires_at: get, update and list leave it out", async () => {
      const now = Date.now();
      const owner = c.key("owner-expiry");
      const t = task(c.key("task-expiry"), owner, now, { ttl_ms: 5_000, expires_at: now + 5_000 });
      await c.store().tasks.create(t);
      expect((await c.store().tasks.list({ owner, now: now + 1 })).map((x) => x.id)).toEqual([t.id]);
      expect(await c.store().tasks.get(t.id, now + 4_999)).not.toBeNull();
      expect(await c.store().tasks.get(t.id, now + 5_000)).toBeNull();
      expect(await c.store().tasks.update(t.id, ["working"], { status: "completed", now: now + 5_000 })).toBeNull();
      expect(await c.store().tasks.list({ owner, now: now + 5_000 })).toEqual([]);
    });

    it("list shows only the owner's tasks, in id order, a page at a time", async () => {
      const now = Date.now();
      const [alice, bob] = [c.key("owner-alice"), c.key("owner-bob")];
      const ids = ["b", "a", "d", "c", "e"].map((x) => c.key(`task-list-${x}`));
      for (const id of ids) await c.store().tasks.create(task(id, alice, now));
      await c.store().tasks.create(task(c.key("task-list-bob"), bob, now));
      const sorted = [...ids].sort();
      const first = await c.store().tasks.list({ owner: alice, limit: 2, now });
      expect(first.map((t) => t.id)).toEqual(sorted.slice(0, 2));
      const rest = await c.store().tasks.list({ owner: alice, after: first.at(-1)!.id, limit: 10, now });
      expect(rest.map((t) => t.id)).toEqual(sorted.slice(2));
      expect((await c.store().tasks.list({ owner: bob, now })).map((t) => t.owner)).toEqual([bob]);
      expect(await c.store().tasks.list({ owner: c.key("owner-nobody"), now })).toEqual([]);
    });
  });
}
