/**
 * An approval runs only the call of the requester it was given to — the same trajectory and the
 * same capability chain, besides the same tool and arguments — and only when it was decided
 * through a channel the operator chose; the audit names the channel and the principal.
 */
import { randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { createCapabilityAuthority } from "../../src/capability/authority.js";
import { nextTag } from "../../src/capability/chain.js";
import { keyRingFromMap } from "../../src/capability/keys.js";
import { blockBytes, encodeToken, parseToken } from "../../src/capability/token.js";
import { createMemoryStore } from "../../src/idempotency/stores/memory.js";
import { gateways } from "./helpers.js";

const make = gateways();
const REFUND = { order_id: "o_007", amount_cents: 1259 };
const HOUR = 3_600_000;

/** A hand-made block appended to `token`: a holder may give it any id. */
function withBlock(token: string, id: string): string {
  const parent = parseToken(token);
  const bytes = blockBytes({ id });
  return encodeToken([...parent.bytes, bytes], nextTag(parent.tag, bytes));
}

describe("an approval is bound to its requester", () => {
  it("redeemed from another trajectory it is refused and stays unused", async () => {
    const { call, gateway, catalog } = make();
    const id = (await call("refund_order", REFUND, { trajectory_id: "victim-run" })).error!.detail!
      .approval_id as string;
    await gateway.approvals.approve(id, { approver: "alice" });
    const stolen = await call("refund_order", REFUND, { trajectory_id: "other-run", approval_id: id });
    expect(stolen.error?.code).toBe("approval_invalid");
    expect(stolen.error?.detail?.reason).toBe("changed_trajectory");
    expect(stolen.error?.message).toMatch(
      /^Approval ap_\S+ was given for a call of another trajectory, not for this call to refund_order\./,
    );
    expect(catalog.calls.refund_order).toBeUndefined();
    const own = await call("refund_order", REFUND, { trajectory_id: "victim-run", approval_id: id });
    expect(own.ok).toBe(true);
    expect(catalog.calls.refund_order).toBe(1);
  });

  it("redeemed with another capability chain it is refused, even one whose last block copies the grant id", async () => {
    const keys = keyRingFromMap({ k1: randomBytes(32).toString("base64") }, "test");
    const store = createMemoryStore();
    const { call, gateway, catalog, clock } = make({ store, keys });
    const authority = createCapabilityAuthority({ keys, store, now: () => clock.now });
    const grant = { rights: ["write"], objects: ["tool:refund_order"], ttl_ms: HOUR };
    const mine = authority.issue(grant);
    const theirs = authority.issue(grant);
    const id = (await call("refund_order", REFUND, { capability: mine })).error!.detail!.approval_id as string;
    const [record] = await gateway.approvals.list({ state: "pending" });
    const grantId = parseToken(mine).grant.id;
    expect(record!.capability_id).toMatch(new RegExp(`^${grantId}#[A-Za-z0-9_-]{22}$`));
    await gateway.approvals.approve(id, { approver: "alice" });
    // Same trajectory and arguments; a chain of its own whose leaf id is the approved grant's.
    const lookalike = withBlock(theirs, grantId);
    expect(parseToken(lookalike).grant.id).toBe(grantId);
    for (const capability of [theirs, lookalike]) {
      const o = await call("refund_order", REFUND, { capability, approval_id: id });
      expect([o.error?.code, o.error?.detail?.reason]).toEqual(["approval_invalid", "changed_capability"]);
    }
    expect(catalog.calls.refund_order).toBeUndefined();
    expect((await call("refund_order", REFUND, { capability: mine, approval_id: id })).ok).toBe(true);
  });
});

describe("who may approve", () => {
  it("approve_via elicitation: an approval decided at the CLI does not run the call", async () => {
    const { call, gateway, catalog, audit } = make({ approve_via: "elicitation" });
    const id = (await call("refund_order", REFUND)).error!.detail!.approval_id as string;
    await gateway.approvals.approve(id, { approver: "root" });
    const o = await call("refund_order", REFUND, { approval_id: id });
    expect([o.error?.code, o.error?.detail?.reason]).toEqual(["approval_invalid", "channel"]);
    expect(o.error?.message).toMatch(
      /was decided through cli, which this server does not accept for destructive calls \(it accepts elicitation\)/,
    );
    expect(catalog.calls.refund_order).toBeUndefined();
    const other = await call("refund_order", { ...REFUND, amount_cents: 5 });
    const viaElicitation = other.error!.detail!.approval_id as string;
    await gateway.approvals.approve(viaElicitation, {
      approver: "peer 127.0.0.1",
      channel: "elicitation",
      label: "Claude",
    });
    expect((await call("refund_order", { ...REFUND, amount_cents: 5 }, { approval_id: viaElicitation })).ok).toBe(true);
    expect(audit.records.at(-1)!.approval).toEqual({
      id: viaElicitation,
      channel: "elicitation",
      approver: 'elicitation:peer 127.0.0.1 [unverified name "Claude"]',
    });
  });

  it("approve_via cli: an approval recorded through elicitation does not run the call", async () => {
    const { call, gateway, catalog } = make({ approve_via: "cli" });
    const id = (await call("refund_order", REFUND)).error!.detail!.approval_id as string;
    await gateway.approvals.approve(id, { approver: "stdio client", channel: "elicitation" });
    expect((await call("refund_order", REFUND, { approval_id: id })).error?.detail?.reason).toBe("channel");
    expect(catalog.calls.refund_order).toBeUndefined();
  });

  it("refuses an approve_via that is not a channel", () => {
    expect(() => make({ approve_via: "anyone" as never })).toThrow(
      'approve_via must be one of cli, elicitation, both; received "anyone"',
    );
  });
});
