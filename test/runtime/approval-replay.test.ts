import { describe, expect, it } from "vitest";
import { gateways } from "./helpers.js";

const make = gateways();
const REFUND = { order_id: "o_007", amount_cents: 1259 };

// A client that lost the answer to an approved A3 call re-sends the same proposal (same ids and
// arguments) without approval_id — or, over MCP with elicitation, never had one. The call already
// ran: it must get its stored result, not a fresh approval request for a call that will not run
// (a person who then denies it would have the model told "nothing was executed").
describe("A3: a completed call re-sent without approval_id", () => {
  it("replays the stored result and queues no new approval", async () => {
    const { call, gateway, catalog } = make();
    const id = (await call("refund_order", REFUND, { call_id: "r1" })).error!.detail!.approval_id as string;
    await gateway.approvals.approve(id, { approver: "alice" });
    expect((await call("refund_order", REFUND, { approval_id: id, call_id: "r1" })).ok).toBe(true);

    const retry = await call("refund_order", REFUND, { call_id: "r1" });
    expect([retry.ok, retry.replay, retry.error?.code]).toEqual([true, true, undefined]);
    expect(await gateway.approvals.list({ state: "pending" })).toEqual([]);
    expect(catalog.calls.refund_order).toBe(1);
  });

  it("still asks for an approval for another call, or changed arguments, under the same trajectory", async () => {
    const { call, gateway } = make();
    const id = (await call("refund_order", REFUND, { call_id: "r1" })).error!.detail!.approval_id as string;
    await gateway.approvals.approve(id, { approver: "alice" });
    await call("refund_order", REFUND, { approval_id: id, call_id: "r1" });

    expect((await call("refund_order", REFUND, { call_id: "r2" })).error?.code).toBe("approval_required");
    expect((await call("refund_order", { ...REFUND, amount_cents: 1 }, { call_id: "r1" })).error?.code).toBe("approval_required");
  });
});
