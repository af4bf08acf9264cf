/** Conformance: revocations, budgets, approvals. */
import { describe, expect, it } from "vitest";
import type { ApprovalRecord } from "../../../src/idempotency/store.js";
import type { ConformanceContext } from "../store.conformance.js";

function approval(id: string, created_at: number, extra: Partial<ApprovalRecord> = {}): ApprovalRecord {
  return {
    id,
    tool: "orders.cancel",
    args_hash: "a".repeat(64),
    arguments: { order_id: "o_1", reason: "customer asked", lines: [1, 2] },
    capability_id: "cap-1",
    trajectory_id: "traj-1",
    state: "pending",
    created_at,
    expires_at: created_at + 600_000,
    decided_at: null,
    approver: null,
    note: null,
    ...extra,
  };
}

export function sideCases(c: ConformanceContext): void {
  describe("revocations", () => {
    it("firstRevoked is null until one id of the chain is revoked, then names the first revoked in chain order", async () => {
      const [a, b, d] = [c.key("grant-a"), c.key("grant-b"), c.key("grant-d")];
      const now = Date.now();
      expect(await c.store().revocations.firstRevoked([a, b, d], now)).toBeNull();
      expect(await c.store().revocations.firstRevoked([], now)).toBeNull();
      await c.store().revocations.revoke(d, { reason: "leaked", until: null, now });
      expect(await c.store().revocations.firstRevoked([a, b, d], now)).toBe(d);
      await c.store().revocations.revoke(b, { reason: null, until: now + 60_000, now });
      expect(await c.store().revocations.firstRevoked([a, b, d], now)).toBe(b);
      expect(await c.store().revocations.firstRevoked([a], now)).toBeNull();
    });

    it("list shows reason, revoked_at and until; revoking twice keeps one entry", async () => {
      const [a, b] = [c.key("rev-list-a"), c.key("rev-list-b")];
      const now = Date.now();
      await c.store().revocations.revoke(a, { reason: "operator", until: null, now });
      await c.store().revocations.revoke(b, { reason: null, until: now + 60_000, now: now + 1 });
      await c.store().revocations.revoke(a, { reason: "operator", until: null, now: now + 2 });
      const ours = (await c.store().revocations.list(now + 3))
        .filter((r) => r.id.startsWith(c.prefix) && r.id.includes("rev-list"))
        .sort((x, y) => (x.id < y.id ? -1 : 1));
      expect(ours).toHaveLength(2);
      expect(ours[0]).toMatchObject({ id: a, reason: "operator", until: null });
      expect(ours[1]).toEqual({ id: b, reason: null, revoked_at: now + 1, until: now + 60_000 });
      expect(await c.store().revocations.firstRevoked([a], now + 3)).toBe(a);
    });
  });

  describe("budgets", () => {
    it("spends while the total stays within the limit, and refuses without spending past it", async () => {
      const id = c.key("budget");
      expect(await c.store().budgets.spent(id)).toBe(0);
      expect(await c.store().budgets.spend(id, 4, 10)).toEqual({ ok: true, remaining: 6 });
      expect(await c.store().budgets.spend(id, 6, 10)).toEqual({ ok: true, remaining: 0 });
      expect(await c.store().budgets.spend(id, 1, 10)).toEqual({ ok: false, remaining: 0 });
      expect(await c.store().budgets.spent(id)).toBe(10);
    });

    it("fractional amounts add up exactly enough for a cost ceiling", async () => {
      const id = c.key("budget-frac");
      expect(await c.store().budgets.spend(id, 0.25, 1)).toEqual({ ok: true, remaining: 0.75 });
      expect(await c.store().budgets.spend(id, 0.5, 1)).toEqual({ ok: true, remaining: 0.25 });
      expect(await c.store().budgets.spend(id, 0.5, 1)).toEqual({ ok: false, remaining: 0.25 });
      expect(await c.store().budgets.spent(id)).toBe(0.75);
    });

    it(`${c.concurrency} concurrent spends never exceed the limit`, async () => {
      const id = c.key("budget-race");
      const limit = Math.floor(c.concurrency / 3);
      const outs = await Promise.all(
        Array.from({ length: c.concurrency }, () => c.store().budgets.spend(id, 1, limit)),
      );
      expect(outs.filter((o) => o.ok)).toHaveLength(limit);
      expect(outs.filter((o) => !o.ok).every((o) => o.remaining === 0)).toBe(true);
      expect(await c.store().budgets.spent(id)).toBe(limit);
    });
  });

  describe("approvals", () => {
    it("create then get returns the record as created; an unknown id is null", async () => {
      const a = approval(c.key("appr"), Date.now());
      await c.store().approvals.create(a);
      expect(await c.store().approvals.get(a.id)).toEqual(a);
      expect(await c.store().approvals.get(c.key("appr-none"))).toBeNull();
    });

    it("update is a compare-and-set on state: one approval, then consumed exactly once", async () => {
      const a = approval(c.key("appr-cas"), Date.now());
      await c.store().approvals.create(a);
      const approved = await c.store().approvals.update(a.id, "pending", {
        state: "approved",
        decided_at: a.created_at + 5,
        approver: "ops@example.com",
        note: "ok",
      });
      expect(approved).toEqual({
        ...a,
        state: "approved",
        decided_at: a.created_at + 5,
        approver: "ops@example.com",
        note: "ok",
      });
      expect(await c.store().approvals.update(a.id, "pending", { state: "denied" })).toBeNull();
      const consumers = await Promise.all(
        Array.from({ length: 20 }, () => c.store().approvals.update(a.id, "approved", { state: "consumed" })),
      );
      expect(consumers.filter((r) => r !== null)).toHaveLength(1);
      expect(await c.store().approvals.get(a.id)).toMatchObject({ state: "consumed", approver: "ops@example.com" });
      expect(await c.store().approvals.update(c.key("appr-ghost"), "pending", { state: "approved" })).toBeNull();
    });

    it("createOrReuse returns the approval still live for the same call; another call, a denial or expiry makes a new one", async () => {
      const t = Date.now();
      const traj = c.key("appr-reuse-traj");
      const mine = (id: string, at: number, extra: Partial<ApprovalRecord> = {}) =>
        approval(c.key(id), at, { trajectory_id: traj, ...extra });
      const first = mine("appr-r0", t);
      expect(await c.store().approvals.createOrReuse(first, t)).toEqual(first);
      const retry = mine("appr-r1", t + 1);
      expect(await c.store().approvals.createOrReuse(retry, t + 1)).toEqual(first);
      expect(await c.store().approvals.get(retry.id)).toBeNull();
      // Each component of the binding tells calls apart: arguments, capability, tool, trajectory.
      const others = [
        { args_hash: "b".repeat(64) },
        { capability_id: null },
        { tool: "orders.refund" },
        { trajectory_id: `${traj}-2` },
      ].map((extra, i) => mine(`appr-r-other${i}`, t + 2, extra));
      for (const other of others) expect((await c.store().approvals.createOrReuse(other, t + 2)).id).toBe(other.id);
      // A null capability matches a null capability.
      expect(
        (await c.store().approvals.createOrReuse(mine("appr-r-nocap", t + 3, { capability_id: null }), t + 3)).id,
      ).toBe(others[1]!.id);
      // Expired at `now` (now ≥ expires_at): a new approval.
      const late = mine("appr-r-late", first.expires_at);
      expect((await c.store().approvals.createOrReuse(late, first.expires_at)).id).toBe(late.id);
      // Denied: a new approval.
      await c
        .store()
        .approvals.update(late.id, "pending", { state: "denied", decided_at: late.created_at + 1, note: "no" });
      const after = mine("appr-r-after", late.created_at + 2);
      expect((await c.store().approvals.createOrReuse(after, late.created_at + 2)).id).toBe(after.id);
    });

    it("createOrReuse returns an approved or consumed approval of the same call until it expires", async () => {
      const t = Date.now();
      const traj = c.key("appr-live-traj");
      const mine = (id: string, at: number) => approval(c.key(id), at, { trajectory_id: traj });
      const first = mine("appr-live-0", t);
      await c.store().approvals.createOrReuse(first, t);
      const approved = await c.store().approvals.update(first.id, "pending", {
        state: "approved",
        decided_at: t + 1,
        approver: "cli:ops",
        note: null,
      });
      expect(await c.store().approvals.createOrReuse(mine("appr-live-1", t + 2), t + 2)).toEqual(approved);
      const consumed = await c.store().approvals.update(first.id, "approved", { state: "consumed" });
      expect(await c.store().approvals.createOrReuse(mine("appr-live-2", t + 3), first.expires_at - 1)).toEqual(
        consumed,
      );
      for (const id of ["appr-live-1", "appr-live-2"]) expect(await c.store().approvals.get(c.key(id))).toBeNull();
      // At expires_at it is no longer live: a new approval.
      const next = mine("appr-live-3", first.expires_at);
      expect((await c.store().approvals.createOrReuse(next, first.expires_at)).id).toBe(next.id);
    });

    it(`${c.concurrency} concurrent createOrReuse of one call share one approval`, async () => {
      const t = Date.now();
      const traj = c.key("appr-race-traj");
      const all = Array.from({ length: c.concurrency }, (_, i) =>
        approval(c.key(`appr-race-${i}`), t, { trajectory_id: traj }),
      );
      const got = await Promise.all(all.map((a) => c.store().approvals.createOrReuse(a, t)));
      expect(new Set(got.map((g) => g.id)).size).toBe(1);
      const created = await Promise.all(all.map((a) => c.store().approvals.get(a.id)));
      expect(created.filter((r) => r !== null).map((r) => r!.id)).toEqual([got[0]!.id]);
    });

    it("list is newest first and filters by state", async () => {
      const t = Date.now();
      const ids = [c.key("appr-l0"), c.key("appr-l1"), c.key("appr-l2")];
      await c.store().approvals.create(approval(ids[1]!, t + 1));
      await c.store().approvals.create(approval(ids[0]!, t));
      await c.store().approvals.create(approval(ids[2]!, t + 2, { state: "denied" }));
      const ours = (rs: ApprovalRecord[]) => rs.map((r) => r.id).filter((id) => ids.includes(id));
      expect(ours(await c.store().approvals.list({}))).toEqual([ids[2], ids[1], ids[0]]);
      expect(ours(await c.store().approvals.list({ state: "pending" }))).toEqual([ids[1], ids[0]]);
      expect(ours(await c.store().approvals.list({ state: "denied" }))).toEqual([ids[2]]);
      const two = await c.store().approvals.list({ limit: 2 });
      expect(two.length).toBeLessThanOrEqual(2);
      expect(two[0]!.created_at).toBeGreaterThanOrEqual(two.at(-1)!.created_at);
    });
  });
}
