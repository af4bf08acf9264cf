import { describe, expect, it } from "vitest";
import { gateways, stable } from "./helpers.js";

const make = gateways();
const REFUND = { order_id: "o_007", amount_cents: 1259 };

describe("A3 approvals", () => {
  it("the first proposal asks for an approval bound to tool and arguments; nothing runs", async () => {
    const { call, gateway, catalog, clock } = make();
    const o = await call("refund_order", REFUND);
    expect(o.error?.code).toBe("approval_required");
    expect(stable(o.text)).toMatchInlineSnapshot(`
      "error approval_required: refund_order (call call-1)
      refund_order is destructive (A3) and needs a person's approval before it runs; nothing was executed. Approval ap_<id> was requested for exactly these arguments and expires at 2026-03-05T10:15:00.000Z. Once it is approved, propose the same call again with approval_id "ap_<id>" and the same arguments."
    `);
    const [pending] = await gateway.approvals.list({ state: "pending" });
    expect(pending).toMatchObject({
      id: o.error!.detail!.approval_id,
      tool: "refund_order",
      arguments: REFUND,
      state: "pending",
      capability_id: null,
      expires_at: clock.now + 15 * 60_000,
    });
    expect(pending!.args_hash).toMatch(/^[0-9a-f]{64}$/);
    expect(catalog.calls.refund_order).toBeUndefined();
  });

  it("re-proposing the same call while its approval is pending returns that approval instead of queueing another", async () => {
    const { call, gateway, clock } = make();
    const first = (await call("refund_order", REFUND)).error!.detail!.approval_id as string;
    clock.now += 60_000;
    const again = await call("refund_order", REFUND);
    expect(again.error?.detail).toMatchObject({
      approval_id: first,
      state: "pending",
      reused: true,
      expires_at: "2026-03-05T10:15:00.000Z",
    });
    expect(stable(again.text)).toMatchInlineSnapshot(`
      "error approval_required: refund_order (call call-2)
      refund_order is destructive (A3) and needs a person's approval before it runs; nothing was executed. Approval ap_<id>, requested earlier for exactly these arguments, is still pending: no person has decided yet; it expires at 2026-03-05T10:15:00.000Z. Once it is approved, propose the same call again with approval_id "ap_<id>" and the same arguments."
    `);
    const many = await Promise.all(Array.from({ length: 5 }, () => call("refund_order", REFUND)));
    expect(new Set(many.map((o) => o.error!.detail!.approval_id))).toEqual(new Set([first]));
    expect((await gateway.approvals.list({ state: "pending" })).map((a) => a.id)).toEqual([first]);

    // Another call is another request: other arguments, another trajectory.
    const changed = (await call("refund_order", { ...REFUND, amount_cents: 1 })).error!.detail!.approval_id;
    const elsewhere = (await call("refund_order", REFUND, { trajectory_id: "traj-2" })).error!.detail!.approval_id;
    expect(new Set([first, changed, elsewhere]).size).toBe(3);

    // Once decided, or expired, the next proposal asks anew.
    await gateway.approvals.deny(first, { reason: "wrong order" });
    const afterDenial = (await call("refund_order", REFUND)).error!.detail!.approval_id as string;
    expect(afterDenial).not.toBe(first);
    clock.now += 15 * 60_000;
    const afterExpiry = (await call("refund_order", REFUND)).error!.detail!;
    expect([afterExpiry.approval_id === afterDenial, afterExpiry.reused]).toEqual([false, undefined]);
  });

  it("approve → the re-proposal runs exactly once; the same call again replays; another call cannot reuse it", async () => {
    const { call, gateway, catalog, audit } = make();
    const id = (await call("refund_order", REFUND)).error!.detail!.approval_id as string;

    const early = await call("refund_order", REFUND, { approval_id: id });
    expect(early.error?.code).toBe("approval_required");
    expect(stable(early.text)).toMatchInlineSnapshot(`
      "error approval_required: refund_order (call call-2)
      Approval ap_<id> is still pending: no person has decided yet; nothing was executed. Wait, then propose the same call again with approval_id "ap_<id>" (it expires at 2026-03-05T10:15:00.000Z)."
    `);

    const approved = await gateway.approvals.approve(id, { approver: "alice", note: "customer verified" });
    // No channel named: the operator's side (the CLI, or the embedder's own code).
    expect(approved).toMatchObject({ state: "approved", approver: "cli:alice", note: "customer verified" });

    const run = await call("refund_order", REFUND, { approval_id: id, call_id: "r1" });
    expect(run.ok).toBe(true);
    expect(audit.records.at(-1)).toMatchObject({
      outcome: "ok",
      approval: { id, channel: "cli", approver: "cli:alice" },
    });
    expect(run.state).toEqual({ order_id: "o_007", version: 2, refunded: true });
    expect(catalog.calls.refund_order).toBe(1);
    expect((await gateway.approvals.list({ state: "consumed" })).map((a) => a.id)).toEqual([id]);

    // The same call re-sent (a retry after a timeout): the stored result, not a second refund.
    const retry = await call("refund_order", REFUND, { approval_id: id, call_id: "r1" });
    expect(retry.replay).toBe(true);
    // Another call presenting the used approval is refused.
    const reuse = await call("refund_order", REFUND, { approval_id: id, call_id: "r2" });
    expect(reuse.error?.code).toBe("approval_invalid");
    expect(stable(reuse.text)).toMatchInlineSnapshot(`
      "error approval_invalid: refund_order (call r2)
      Approval ap_<id> was already used: an approval runs one call exactly once. Propose the call without approval_id to request a new approval; nothing was executed."
    `);
    expect(catalog.calls.refund_order).toBe(1);
  });

  it("changed arguments are refused and do not consume the approval", async () => {
    const { call, gateway, catalog } = make();
    const id = (await call("refund_order", REFUND)).error!.detail!.approval_id as string;
    await gateway.approvals.approve(id, { approver: "alice" });
    const changed = await call("refund_order", { ...REFUND, amount_cents: 999999 }, { approval_id: id });
    expect(changed.error?.code).toBe("approval_invalid");
    expect(changed.error?.detail?.reason).toBe("changed_arguments");
    expect(stable(changed.text)).toMatchInlineSnapshot(`
      "error approval_invalid: refund_order (call call-2)
      Approval ap_<id> was given for different arguments, not for this call to refund_order. An approval covers exactly the call it was requested for. Propose the call without approval_id to request a new approval; nothing was executed."
    `);
    const other = await call("add_order_note", { order_id: "o_007", note: "x" }, { approval_id: id });
    expect(other.ok).toBe(true); // A2 calls ignore approval ids; the approval is untouched
    const right = await call("refund_order", REFUND, { approval_id: id });
    expect(right.ok).toBe(true);
    expect(catalog.calls.refund_order).toBe(1);
  });

  it("a denial is an observation carrying the reason", async () => {
    const { call, gateway, catalog } = make();
    const id = (await call("refund_order", REFUND)).error!.detail!.approval_id as string;
    await gateway.approvals.deny(id, { approver: "bob", reason: "refund window closed" });
    const o = await call("refund_order", REFUND, { approval_id: id });
    expect(o.error?.code).toBe("approval_denied");
    expect(stable(o.text)).toMatchInlineSnapshot(`
      "error approval_denied: refund_order (call call-2)
      Approval ap_<id> was denied by cli:bob: refund window closed. Nothing was executed. Do not retry this call; tell the user and choose another way."
    `);
    expect(catalog.calls.refund_order).toBeUndefined();
  });

  it("approvals expire: neither the call nor a late approval goes through", async () => {
    const { call, gateway, clock, catalog } = make();
    const id = (await call("refund_order", REFUND)).error!.detail!.approval_id as string;
    await gateway.approvals.approve(id, { approver: "alice" });
    clock.now += 15 * 60_000;
    const o = await call("refund_order", REFUND, { approval_id: id });
    expect(o.error?.code).toBe("approval_invalid");
    expect(stable(o.text)).toMatchInlineSnapshot(`
      "error approval_invalid: refund_order (call call-2)
      Approval ap_<id> expired at 2026-03-05T10:15:00.000Z. Propose the call without approval_id to request a new approval; nothing was executed."
    `);
    const late = (await call("refund_order", REFUND)).error!.detail!.approval_id as string;
    clock.now += 15 * 60_000 + 1;
    await expect(
      stable_(gateway.approvals.approve(late, { approver: "alice" })),
    ).rejects.toThrowErrorMatchingInlineSnapshot(
      `[ToolgateError: approval ap_<id> expired at 2026-03-05T10:30:00.000Z; the agent must propose the call again for a new approval]`,
    );
    expect(catalog.calls.refund_order).toBeUndefined();
  });

  it("an unknown approval id and operator mistakes are named", async () => {
    const { call, gateway } = make();
    const o = await call("refund_order", REFUND, { approval_id: "ap_forged" });
    expect(o.text).toMatchInlineSnapshot(`
      "error approval_invalid: refund_order (call call-1)
      approval_id "ap_forged" does not exist. Propose the call without approval_id to request a new approval; nothing was executed."
    `);
    await expect(
      gateway.approvals.approve("ap_nope", { approver: "alice" }),
    ).rejects.toThrowErrorMatchingInlineSnapshot(
      `[ToolgateError: approval ap_nope does not exist; run \`toolgate approvals list\` to see the ids]`,
    );
    const id = (await call("refund_order", REFUND)).error!.detail!.approval_id as string;
    await expect(gateway.approvals.approve(id, { approver: " " })).rejects.toThrowErrorMatchingInlineSnapshot(
      `[ToolgateError: approve: approver is required (the authenticated principal who approves this call, e.g. the OS user)]`,
    );
    await expect(gateway.approvals.deny(id, { reason: "" })).rejects.toThrowErrorMatchingInlineSnapshot(
      `[ToolgateError: deny: a reason is required; the agent is told it, e.g. --reason "not during the freeze"]`,
    );
    await gateway.approvals.deny(id, { reason: "no" });
    await expect(
      stable_(gateway.approvals.approve(id, { approver: "alice" })),
    ).rejects.toThrowErrorMatchingInlineSnapshot(
      `[ToolgateError: approval ap_<id> is already denied; an approval is decided once]`,
    );
  });

  it("two replicas sharing a store: only one redemption runs", async () => {
    const a = make();
    const b = make({ store: a.store });
    const id = (await a.call("refund_order", REFUND)).error!.detail!.approval_id as string;
    await a.gateway.approvals.approve(id, { approver: "alice" });
    const [x, y] = await Promise.all([
      a.call("refund_order", REFUND, { approval_id: id, call_id: "ra" }),
      b.call("refund_order", REFUND, { approval_id: id, call_id: "rb" }),
    ]);
    expect([x.ok, y.ok].filter(Boolean)).toHaveLength(1);
    expect((a.catalog.calls.refund_order ?? 0) + (b.catalog.calls.refund_order ?? 0)).toBe(1);
  });
});

/** Rejections carry random ids in their messages: normalise them for snapshots. */
async function stable_<T>(p: Promise<T>): Promise<T> {
  try {
    return await p;
  } catch (err) {
    (err as Error).message = stable((err as Error).message);
    throw err;
  }
}
