/**
 * The logical call behind an A3 approval (docs/authority.md, "Approvals for A3 calls"): a call
 * whose caller gave up is not run on its approval, and a proposal without ids of its own
 * (`call_id_assigned`, what an MCP client sends) is the call its live approval was asked for —
 * it runs under an approval given meanwhile, once, or gets the stored result — while every
 * binding of the approval (tool, arguments, trajectory, capability chain, channel) still holds.
 */
import { randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { createCapabilityAuthority } from "../../src/capability/authority.js";
import { keyRingFromMap } from "../../src/capability/keys.js";
import { createMemoryStore } from "../../src/idempotency/stores/memory.js";
import type { Proposal } from "../../src/runtime/types.js";
import { gateways, stable } from "./helpers.js";

const make = gateways();
const REFUND = { order_id: "o_007", amount_cents: 1259 };
/** What an MCP client without toolgate ids sends: every attempt a fresh call id the adapter assigned. */
const IDLESS: Partial<Proposal> = { call_id_assigned: true };

function gaveUp(reason = "request cancelled"): AbortSignal {
  const c = new AbortController();
  c.abort(reason);
  return c.signal;
}

/** An approval asked by an id-less proposal, approved by alice, and the gateway it lives in. */
async function approvedIdless(extra: Parameters<typeof make>[0] = {}) {
  const g = make(extra);
  const id = (await g.call("refund_order", REFUND, IDLESS)).error!.detail!.approval_id as string;
  await g.gateway.approvals.approve(id, { approver: "alice" });
  return { ...g, id };
}

describe("a call whose caller gave up is not run on its approval", () => {
  it("the approval stays approved, nothing runs, and the audit says why", async () => {
    const { gateway, propose, catalog, audit, id } = await approvedIdless();
    const late = await gateway.call(propose("refund_order", REFUND, { ...IDLESS, approval_id: id }), {
      abandoned: gaveUp(),
    });
    expect(late.error?.code).toBe("abandoned");
    expect(stable(late.text)).toMatchInlineSnapshot(`
      "error abandoned: refund_order (call call-2)
      The caller gave up on this call (request cancelled) before it could run, so refund_order was not run on approval ap_<id>; nothing was executed. The approval stays approved: propose the same call again (same tool and arguments) to run it once."
    `);
    expect(catalog.calls.refund_order).toBeUndefined();
    expect(await gateway.approvals.list({})).toMatchObject([{ id, state: "approved" }]);
    expect(audit.records.at(-1)).toMatchObject({
      outcome: "abandoned",
      approval: { id },
      stages: { approve: { outcome: "abandoned: request cancelled before approval" } },
    });
    expect(audit.records.at(-1)!.stages.settle).toBeUndefined();
  });

  it("holds for a call with ids of its own too, and a signal without a reason still says so", async () => {
    const { gateway, propose, catalog, audit, call } = make();
    const id = (await call("refund_order", REFUND, { call_id: "r1" })).error!.detail!.approval_id as string;
    await gateway.approvals.approve(id, { approver: "alice" });
    const silent = new AbortController();
    silent.abort();
    const late = await gateway.call(propose("refund_order", REFUND, { call_id: "r1", approval_id: id }), {
      abandoned: silent.signal,
    });
    expect(late.error?.code).toBe("abandoned");
    expect(audit.records.at(-1)!.stages.approve!.outcome).toBe("abandoned: request abandoned before approval");
    expect(catalog.calls.refund_order).toBeUndefined();
    // The same call proposed again (its own ids, no approval id) runs once on the approval.
    expect((await call("refund_order", REFUND, { call_id: "r1" })).ok).toBe(true);
    expect(catalog.calls.refund_order).toBe(1);
  });

  it("a signal that has not fired changes nothing", async () => {
    const { gateway, propose, catalog, id } = await approvedIdless();
    const o = await gateway.call(propose("refund_order", REFUND, { ...IDLESS, approval_id: id }), {
      abandoned: new AbortController().signal,
    });
    expect(o.ok).toBe(true);
    expect(catalog.calls.refund_order).toBe(1);
  });
});

describe("an id-less re-proposal is the call its approval was asked for", () => {
  it("runs the approved call once, under the key of the call that asked; again, it replays and asks no one", async () => {
    const { gateway, propose, call, catalog, audit, id } = await approvedIdless();
    await gateway.call(propose("refund_order", REFUND, { ...IDLESS, approval_id: id }), { abandoned: gaveUp() });
    const abandonedKey = audit.records.at(-1)!.key;

    const again = await call("refund_order", REFUND, IDLESS);
    expect([again.ok, again.replay]).toEqual([true, undefined]);
    expect(catalog.calls.refund_order).toBe(1);
    expect(audit.records.at(-1)).toMatchObject({
      key: abandonedKey,
      record_state: "COMPLETED",
      approval: { id, approver: "cli:alice" },
    });
    expect(await gateway.approvals.list({})).toMatchObject([{ id, state: "consumed" }]);

    const third = await call("refund_order", REFUND, IDLESS);
    expect([third.ok, third.replay]).toEqual([true, true]);
    expect(catalog.calls.refund_order).toBe(1);
    expect(await gateway.approvals.list({ state: "pending" })).toEqual([]);
  });

  it("re-proposed while pending, it shares the pending approval", async () => {
    const { call, gateway } = make();
    const first = (await call("refund_order", REFUND, IDLESS)).error!.detail!;
    const again = (await call("refund_order", REFUND, IDLESS)).error!.detail!;
    expect([again.approval_id, again.reused]).toEqual([first.approval_id, true]);
    expect(await gateway.approvals.list({})).toHaveLength(1);
  });

  it("five re-proposals at once run the effect once and all answer with its result", async () => {
    const { call, catalog, id } = await approvedIdless();
    const all = await Promise.all(Array.from({ length: 5 }, () => call("refund_order", REFUND, IDLESS)));
    expect(all.map((o) => [o.ok, o.output])).toEqual(Array.from({ length: 5 }, () => [true, { refunded_cents: 1259 }]));
    expect(all.filter((o) => !o.replay)).toHaveLength(1);
    expect(catalog.calls.refund_order).toBe(1);
    expect(id).toMatch(/^ap_/);
  });

  it("two replicas sharing the store, each re-proposing at once, run it once", async () => {
    const a = await approvedIdless();
    const b = make({ store: a.store });
    const [x, y] = await Promise.all([a.call("refund_order", REFUND, IDLESS), b.call("refund_order", REFUND, IDLESS)]);
    expect((a.catalog.calls.refund_order ?? 0) + (b.catalog.calls.refund_order ?? 0)).toBe(1);
    // The other met the run in flight, or read its result: never a second refund, never a new approval.
    for (const o of [x, y]) expect(o.ok || o.error?.code === "in_flight").toBe(true);
    expect(await a.gateway.approvals.list({ state: "pending" })).toEqual([]);
  });

  it("the same call re-sent twice at once with its approval id runs once; both get the result", async () => {
    const { call, gateway, catalog } = make();
    const id = (await call("refund_order", REFUND, { call_id: "r1" })).error!.detail!.approval_id as string;
    await gateway.approvals.approve(id, { approver: "alice" });
    const both = await Promise.all([
      call("refund_order", REFUND, { call_id: "r1", approval_id: id }),
      call("refund_order", REFUND, { call_id: "r1", approval_id: id }),
    ]);
    expect(both.map((o) => o.ok)).toEqual([true, true]);
    expect(both.map((o) => o.replay === true).sort()).toEqual([false, true]);
    expect(catalog.calls.refund_order).toBe(1);
  });

  it("two other calls presenting one approval at once: one runs, the other is told it was used", async () => {
    const { call, gateway, catalog, audit } = make();
    const id = (await call("refund_order", REFUND)).error!.detail!.approval_id as string;
    await gateway.approvals.approve(id, { approver: "alice" });
    const both = await Promise.all([
      call("refund_order", REFUND, { call_id: "ra", approval_id: id }),
      call("refund_order", REFUND, { call_id: "rb", approval_id: id }),
    ]);
    expect(both.filter((o) => o.ok)).toHaveLength(1);
    expect(both.find((o) => !o.ok)!.error).toMatchObject({
      code: "approval_invalid",
      detail: { approval_id: id, reason: "used" },
    });
    expect(audit.records.find((r) => r.outcome === "approval_invalid")).toMatchObject({
      record_state: null,
      stages: { settle: { outcome: "approval_invalid" } },
    });
    expect(catalog.calls.refund_order).toBe(1);
  });

  it("a store that fails while the approval is spent runs nothing and keeps the call free to run", async () => {
    const store = createMemoryStore();
    let failing = true;
    const update = store.approvals.update.bind(store.approvals);
    store.approvals.update = (id, from, patch) =>
      failing && from === "approved" ? Promise.reject(new Error("connection reset")) : update(id, from, patch);
    const { call, gateway, catalog } = make({ store });
    const id = (await call("refund_order", REFUND, IDLESS)).error!.detail!.approval_id as string;
    await gateway.approvals.approve(id, { approver: "alice" });
    const o = await call("refund_order", REFUND, IDLESS);
    expect(stable(o.text)).toMatchInlineSnapshot(`
      "error store_unavailable: refund_order (call call-2)
      The store failed while approval ap_<id> was being spent (connection reset), so refund_order was not run; nothing was executed. Propose the same call again later."
    `);
    expect(catalog.calls.refund_order).toBeUndefined();
    failing = false;
    expect((await call("refund_order", REFUND, IDLESS)).ok).toBe(true);
    expect(catalog.calls.refund_order).toBe(1);
  });
});

describe("the approval's bindings still hold for an id-less re-proposal", () => {
  it("another trajectory or other arguments ask for an approval of their own and run nothing", async () => {
    const { call, catalog, id } = await approvedIdless();
    const elsewhere = await call("refund_order", REFUND, { ...IDLESS, trajectory_id: "traj-2" });
    const changed = await call("refund_order", { ...REFUND, amount_cents: 1 }, IDLESS);
    for (const o of [elsewhere, changed]) {
      expect(o.error?.code).toBe("approval_required");
      expect(o.error?.detail?.approval_id).not.toBe(id);
    }
    expect(catalog.calls.refund_order).toBeUndefined();
  });

  it("another capability chain asks for an approval of its own", async () => {
    const keys = keyRingFromMap({ k1: randomBytes(32).toString("base64") }, "test");
    const store = createMemoryStore();
    const { call, gateway, catalog, clock } = make({ store, keys });
    const authority = createCapabilityAuthority({ keys, store, now: () => clock.now });
    const grant = { rights: ["write"], objects: ["tool:refund_order"], ttl_ms: 3_600_000 };
    const [mine, theirs] = [authority.issue(grant), authority.issue(grant)];
    const id = (await call("refund_order", REFUND, { ...IDLESS, capability: mine })).error!.detail!
      .approval_id as string;
    await gateway.approvals.approve(id, { approver: "alice" });
    const other = await call("refund_order", REFUND, { ...IDLESS, capability: theirs });
    expect([other.error?.code, other.error?.detail?.approval_id === id]).toEqual(["approval_required", false]);
    expect(catalog.calls.refund_order).toBeUndefined();
    expect((await call("refund_order", REFUND, { ...IDLESS, capability: mine })).ok).toBe(true);
  });

  it("an approval decided through a channel the server does not accept runs nothing; the call asks anew", async () => {
    const { call, gateway, catalog } = make({ approve_via: "elicitation" });
    const id = (await call("refund_order", REFUND, IDLESS)).error!.detail!.approval_id as string;
    await gateway.approvals.approve(id, { approver: "root" });
    const o = await call("refund_order", REFUND, IDLESS);
    expect([o.error?.code, o.error?.detail?.approval_id === id]).toEqual(["approval_required", false]);
    expect(catalog.calls.refund_order).toBeUndefined();
    // The new approval, decided through elicitation, runs it.
    await gateway.approvals.approve(o.error!.detail!.approval_id as string, {
      approver: "stdio client",
      channel: "elicitation",
    });
    expect((await call("refund_order", REFUND, IDLESS)).ok).toBe(true);
  });

  it("a denied approval is not reused: the re-proposal asks anew", async () => {
    const { call, gateway, catalog } = make();
    const id = (await call("refund_order", REFUND, IDLESS)).error!.detail!.approval_id as string;
    await gateway.approvals.deny(id, { reason: "no" });
    const o = await call("refund_order", REFUND, IDLESS);
    expect([o.error?.code, o.error?.detail?.approval_id === id]).toEqual(["approval_required", false]);
    expect(catalog.calls.refund_order).toBeUndefined();
  });

  it("past the approval's lifetime the same call is a new call and needs a new approval", async () => {
    const { call, clock, catalog, id } = await approvedIdless();
    expect((await call("refund_order", REFUND, IDLESS)).ok).toBe(true);
    clock.now += 15 * 60_000;
    const later = await call("refund_order", REFUND, IDLESS);
    expect([later.error?.code, later.error?.detail?.approval_id === id]).toEqual(["approval_required", false]);
    expect(catalog.calls.refund_order).toBe(1);
  });
});

describe("a second approval for an identical call", () => {
  it("says that an identical call ran, and how long ago", async () => {
    const { call, gateway, clock } = make();
    const id = (await call("refund_order", REFUND, { call_id: "r1" })).error!.detail!.approval_id as string;
    expect(
      (await call("refund_order", REFUND, { call_id: "r1" })).error?.detail?.identical_call_ran_s_ago,
    ).toBeUndefined();
    await gateway.approvals.approve(id, { approver: "alice" });
    expect((await call("refund_order", REFUND, { call_id: "r1", approval_id: id })).ok).toBe(true);
    clock.now += 42_000;
    // A call with ids of its own is another call: it needs its own approval, and the text says what ran.
    const second = await call("refund_order", REFUND, { call_id: "r2" });
    expect(second.error?.detail).toMatchObject({ state: "pending", identical_call_ran_s_ago: 42 });
    expect(stable(second.text)).toMatchInlineSnapshot(`
      "error approval_required: refund_order (call r2)
      refund_order is destructive (A3) and needs a person's approval before it runs; nothing was executed. Approval ap_<id> was requested for exactly these arguments and expires at 2026-03-05T10:15:42.000Z. An identical call (same tool and arguments) ran 42 seconds ago; approving this one runs it again. Once it is approved, propose the same call again with approval_id "ap_<id>" and the same arguments."
    `);
  });
});
