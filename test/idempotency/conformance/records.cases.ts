/** Conformance: `records` — claim, get, fenced transition, release, TTL, list. */
import { setTimeout as sleep } from "node:timers/promises";
import { describe, expect, it } from "vitest";
import { applyPatch } from "../../../src/idempotency/record.js";
import type { ClaimInput, IdempotencyRecord } from "../../../src/idempotency/store.js";
import type { ConformanceContext } from "../store.conformance.js";

const YEAR = 365 * 24 * 3600 * 1000;

export function claimInput(now: number, owner = "owner-a", extra: Partial<ClaimInput> = {}): ClaimInput {
  return { owner, lease_until: now + 30_000, fingerprint: "f".repeat(64), tool: "orders.refund", now, ...extra };
}

export function recordCases(c: ConformanceContext): void {
  describe("records", () => {
    it("claims an unseen key: IN_FLIGHT with owner, lease, fingerprint and tool", async () => {
      const key = c.key("claim");
      const now = Date.now();
      const out = await c.store().records.claim(key, claimInput(now));
      expect(out.claimed).toBe(true);
      expect(out.record).toEqual({
        key,
        state: "IN_FLIGHT",
        owner: "owner-a",
        fingerprint: "f".repeat(64),
        tool: "orders.refund",
        lease_until: now + 30_000,
        result: null,
        error: null,
        expires_at: null,
        created_at: now,
        updated_at: now,
      } satisfies IdempotencyRecord);
      expect(await c.store().records.get(key, now)).toEqual(out.record);
    });

    it("accepts null fingerprint and tool", async () => {
      const key = c.key("nulls");
      const now = Date.now();
      const out = await c.store().records.claim(key, claimInput(now, "o", { fingerprint: null, tool: null }));
      expect(out.record).toMatchObject({ fingerprint: null, tool: null });
      expect(await c.store().records.get(key, now)).toMatchObject({ fingerprint: null, tool: null });
    });

    it("a second claim returns the existing record unchanged", async () => {
      const key = c.key("reclaim");
      const now = Date.now();
      const first = await c.store().records.claim(key, claimInput(now, "owner-a"));
      const second = await c.store().records.claim(key, claimInput(now + 5, "owner-b", { fingerprint: null }));
      expect(second).toEqual({ claimed: false, record: first.record });
    });

    it("get of an unseen key is null", async () => {
      expect(await c.store().records.get(c.key("unseen"), Date.now())).toBeNull();
    });

    it(`${c.concurrency} concurrent claims of one key: exactly one wins, every loser sees the winner`, async () => {
      const key = c.key("claim-race");
      const now = Date.now();
      const outs = await Promise.all(
        Array.from({ length: c.concurrency }, (_, i) => c.store().records.claim(key, claimInput(now, `racer-${i}`))),
      );
      const winners = outs.filter((o) => o.claimed);
      expect(winners).toHaveLength(1);
      const owner = winners[0]!.record.owner;
      expect(outs.every((o) => o.record.owner === owner)).toBe(true);
    });

    it("IN_FLIGHT → COMPLETED stores the result, error and TTL; updated_at moves, created_at stays", async () => {
      const key = c.key("complete");
      const now = Date.now();
      const { record } = await c.store().records.claim(key, claimInput(now));
      const result = { refund_id: "r_1", amount_cents: 1250, items: [1, "two", null, true, { nested: ["ü€😂"] }] };
      const patch = { state: "COMPLETED", result, error: null, expires_at: now + YEAR, now: now + 7 } as const;
      expect(await c.store().records.transition(key, "owner-a", "IN_FLIGHT", patch)).toBe(true);
      const done = await c.store().records.get(key, now + 8);
      expect(done).toMatchObject({
        key,
        state: "COMPLETED",
        owner: "owner-a",
        result,
        expires_at: now + YEAR,
        created_at: now,
        updated_at: now + 7,
      });
      // Nothing is read back on the hot path: the claimed record plus the patch is what is stored.
      expect(applyPatch(record, patch)).toEqual(done);
    });

    it("stores every JSON result shape: scalars, null, empty containers", async () => {
      for (const result of [0, -1.5, "text", true, false, null, [], {}]) {
        const key = c.key("shape");
        const now = Date.now();
        await c.store().records.claim(key, claimInput(now));
        await c
          .store()
          .records.transition(key, "owner-a", "IN_FLIGHT", { state: "COMPLETED", result, expires_at: null, now });
        expect((await c.store().records.get(key, now))!.result).toEqual(result);
      }
    });

    it("transition is fenced by owner: another owner changes nothing", async () => {
      const key = c.key("fence-owner");
      const now = Date.now();
      const { record } = await c.store().records.claim(key, claimInput(now));
      expect(
        await c.store().records.transition(key, "intruder", "IN_FLIGHT", { state: "COMPLETED", result: 1, now }),
      ).toBe(false);
      expect(await c.store().records.get(key, now)).toEqual(record);
    });

    it("transition is fenced by state: a wrong `from` changes nothing", async () => {
      const key = c.key("fence-state");
      const now = Date.now();
      const { record } = await c.store().records.claim(key, claimInput(now));
      expect(
        await c.store().records.transition(key, "owner-a", "IN_DOUBT", { state: "COMPLETED", result: 1, now }),
      ).toBe(false);
      expect(await c.store().records.get(key, now)).toEqual(record);
    });

    it("transition of an unseen key does not apply", async () => {
      expect(
        await c
          .store()
          .records.transition(c.key("ghost"), "o", "IN_FLIGHT", { state: "COMPLETED", result: 1, now: Date.now() }),
      ).toBe(false);
    });

    it("IN_FLIGHT → IN_DOUBT keeps the owner and never expires; a claim years later is refused", async () => {
      const key = c.key("doubt");
      const now = Date.now();
      const { record } = await c.store().records.claim(key, claimInput(now));
      const patch = { state: "IN_DOUBT", error: "lease expired", expires_at: null, now: now + 1 } as const;
      expect(await c.store().records.transition(key, "owner-a", "IN_FLIGHT", patch)).toBe(true);
      const doubted = await c.store().records.get(key, now + 1);
      expect(doubted).toMatchObject({
        state: "IN_DOUBT",
        owner: "owner-a",
        error: "lease expired",
        expires_at: null,
        result: null,
      });
      expect(applyPatch(record, patch)).toEqual(doubted);
      const later = now + 10 * YEAR;
      expect(await c.store().records.get(key, later)).toMatchObject({ state: "IN_DOUBT" });
      const again = await c.store().records.claim(key, claimInput(later, "owner-b"));
      expect(again.claimed).toBe(false);
      expect(again.record).toMatchObject({ state: "IN_DOUBT", owner: "owner-a" });
    });

    it("a patch may hand the record to a new owner (take-over); the old owner is then fenced out", async () => {
      const key = c.key("takeover");
      const now = Date.now();
      await c.store().records.claim(key, claimInput(now));
      await c.store().records.transition(key, "owner-a", "IN_FLIGHT", { state: "IN_DOUBT", error: "x", now });
      const before = (await c.store().records.get(key, now))!;
      const patch = { state: "IN_DOUBT", owner: "prober", lease_until: now + 99, now: now + 2 } as const;
      expect(await c.store().records.transition(key, "owner-a", "IN_DOUBT", patch)).toBe(true);
      const taken = await c.store().records.get(key, now + 2);
      expect(taken).toMatchObject({ owner: "prober", state: "IN_DOUBT", error: "x", lease_until: now + 99 });
      expect(applyPatch(before, patch)).toEqual(taken);
      expect(
        await c.store().records.transition(key, "owner-a", "IN_DOUBT", { state: "COMPLETED", result: 1, now }),
      ).toBe(false);
      expect(
        await c
          .store()
          .records.transition(key, "prober", "IN_DOUBT", { state: "COMPLETED", result: 2, expires_at: null, now }),
      ).toBe(true);
      expect(await c.store().records.get(key, now)).toMatchObject({ state: "COMPLETED", result: 2 });
    });

    it("release deletes only when owner and state match; the key can then be claimed again", async () => {
      const key = c.key("release");
      const now = Date.now();
      await c.store().records.claim(key, claimInput(now));
      expect(await c.store().records.release(key, "intruder", "IN_FLIGHT")).toBe(false);
      expect(await c.store().records.release(key, "owner-a", "IN_DOUBT")).toBe(false);
      expect(await c.store().records.get(key, now)).not.toBeNull();
      expect(await c.store().records.release(key, "owner-a", "IN_FLIGHT")).toBe(true);
      expect(await c.store().records.get(key, now)).toBeNull();
      expect(await c.store().records.release(key, "owner-a", "IN_FLIGHT")).toBe(false);
      expect((await c.store().records.claim(key, claimInput(now, "owner-b"))).claimed).toBe(true);
    });

    it("a COMPLETED record expires at its TTL: get is null and the key can be claimed again", async () => {
      // On the clock passed in, so nothing depends on how fast a loaded machine gets from one
      // call to the next; the TTL outlasts the test, so a backend-native one never fires first.
      const key = c.key("ttl");
      const ttl = 60_000;
      const now = Date.now();
      await c.store().records.claim(key, claimInput(now));
      await c.store().records.transition(key, "owner-a", "IN_FLIGHT", {
        state: "COMPLETED",
        result: "r",
        expires_at: now + ttl,
        now,
      });
      const before = now + ttl - 1;
      expect(await c.store().records.get(key, before)).toMatchObject({ state: "COMPLETED", result: "r" });
      expect(await c.store().records.claim(key, claimInput(before, "owner-b"))).toMatchObject({ claimed: false });
      const after = now + ttl + 1;
      expect(await c.store().records.get(key, after)).toBeNull();
      const again = await c.store().records.claim(key, claimInput(after, "owner-b"));
      expect(again.claimed).toBe(true);
      expect(again.record).toMatchObject({ state: "IN_FLIGHT", owner: "owner-b", result: null });
    });

    it("the TTL ends at expires_at in every check: get, list, a fenced transition and the claim agree", async () => {
      // rows.ts completedExpired in TypeScript; the same test inside the SQL statements and the Lua scripts.
      const key = c.key("ttl-edge");
      const now = Date.now();
      const end = now + 60_000;
      await c.store().records.claim(key, claimInput(now));
      await c
        .store()
        .records.transition(key, "owner-a", "IN_FLIGHT", { state: "COMPLETED", result: "r", expires_at: end, now });
      const listed = (at: number) =>
        c
          .store()
          .records.list({ after: key.slice(0, -1), limit: 5, now: at })
          .then((rs) => rs.filter((r) => r.key === key).length);
      expect(await c.store().records.get(key, end - 1)).toMatchObject({ state: "COMPLETED" });
      expect(await listed(end - 1)).toBe(1);
      expect((await c.store().records.claim(key, claimInput(end - 1, "owner-b"))).claimed).toBe(false);
      expect(await c.store().records.get(key, end)).toBeNull();
      expect(await listed(end)).toBe(0);
      expect(
        await c.store().records.transition(key, "owner-a", "COMPLETED", {
          state: "COMPLETED",
          result: "late",
          expires_at: null,
          now: end,
        }),
      ).toBe(false);
      expect(await c.store().records.claim(key, claimInput(end, "owner-b"))).toMatchObject({
        claimed: true,
        record: { owner: "owner-b", state: "IN_FLIGHT" },
      });
    });

    it("a COMPLETED record is gone once its TTL has passed in real time (a backend-native TTL, Redis PX, too)", async () => {
      const key = c.key("ttl-real");
      const ttl = 1000;
      const now = Date.now();
      await c.store().records.claim(key, claimInput(now));
      await c.store().records.transition(key, "owner-a", "IN_FLIGHT", {
        state: "COMPLETED",
        result: "r",
        expires_at: now + ttl,
        now,
      });
      await sleep(ttl + 150); // counted from after the write, so the TTL has passed however slow the machine
      expect(await c.store().records.get(key, Date.now())).toBeNull();
      const again = await c.store().records.claim(key, claimInput(Date.now(), "owner-b"));
      expect(again.claimed).toBe(true);
      expect(again.record).toMatchObject({ state: "IN_FLIGHT", owner: "owner-b", result: null });
    });

    it("a COMPLETED record with expires_at null never expires", async () => {
      const key = c.key("no-ttl");
      const now = Date.now();
      await c.store().records.claim(key, claimInput(now));
      await c
        .store()
        .records.transition(key, "owner-a", "IN_FLIGHT", { state: "COMPLETED", result: 1, expires_at: null, now });
      expect(await c.store().records.get(key, now + 10 * YEAR)).toMatchObject({ state: "COMPLETED" });
    });

    it("an IN_FLIGHT record is returned as stored after its lease (the caller decides it reads IN_DOUBT)", async () => {
      const key = c.key("lease-raw");
      const now = Date.now();
      await c.store().records.claim(key, claimInput(now));
      expect(await c.store().records.get(key, now + YEAR)).toMatchObject({
        state: "IN_FLIGHT",
        lease_until: now + 30_000,
      });
      expect((await c.store().records.claim(key, claimInput(now + YEAR, "late"))).claimed).toBe(false);
    });

    it("list: key order, state filter, pages with `after` and `limit`", async () => {
      const base = c.key("list");
      const now = Date.now();
      const keys = Array.from({ length: 7 }, (_, i) => `${base}-${String(i).padStart(2, "0")}`);
      // Claim in scrambled order: listing order must not be insertion order.
      for (const i of [3, 0, 6, 1, 5, 2, 4]) await c.store().records.claim(keys[i]!, claimInput(now, `o${i}`));
      for (const i of [1, 4])
        await c.store().records.transition(keys[i]!, `o${i}`, "IN_FLIGHT", { state: "IN_DOUBT", error: "e", now });
      for (const i of [2])
        await c
          .store()
          .records.transition(keys[i]!, `o${i}`, "IN_FLIGHT", { state: "COMPLETED", result: i, expires_at: null, now });
      const ours = (rs: IdempotencyRecord[]) => rs.map((r) => r.key).filter((k) => k.startsWith(base));

      const page1 = await c.store().records.list({ after: base, limit: 3, now });
      expect(ours(page1)).toEqual(keys.slice(0, 3));
      const page2 = await c.store().records.list({ after: page1.at(-1)!.key, limit: 3, now });
      expect(ours(page2)).toEqual(keys.slice(3, 6));
      const page3 = await c.store().records.list({ after: page2.at(-1)!.key, limit: 3, now });
      expect(ours(page3)).toEqual(keys.slice(6));

      expect(ours(await c.store().records.list({ state: "IN_DOUBT", after: base, limit: 1000, now }))).toEqual([
        keys[1],
        keys[4],
      ]);
      expect(ours(await c.store().records.list({ state: "COMPLETED", after: base, limit: 1000, now }))).toEqual([
        keys[2],
      ]);
      expect(ours(await c.store().records.list({ state: "IN_FLIGHT", after: base, limit: 1000, now }))).toEqual([
        keys[0],
        keys[3],
        keys[5],
        keys[6],
      ]);
      const listed = (await c.store().records.list({ state: "IN_DOUBT", after: base, limit: 1, now }))[0];
      expect(listed).toEqual(await c.store().records.get(keys[1]!, now));
    });

    it("list leaves out COMPLETED records past their TTL", async () => {
      const base = c.key("list-ttl");
      const now = Date.now();
      await c.store().records.claim(base, claimInput(now));
      await c.store().records.transition(base, "owner-a", "IN_FLIGHT", {
        state: "COMPLETED",
        result: 1,
        expires_at: now + YEAR,
        now,
      });
      const page = (at: number) =>
        c
          .store()
          .records.list({ after: base.slice(0, -1), limit: 5, now: at })
          .then((rs) => rs.filter((r) => r.key === base));
      expect(await page(now)).toHaveLength(1);
      expect(await page(now + 2 * YEAR)).toHaveLength(0);
    });
  });
}
