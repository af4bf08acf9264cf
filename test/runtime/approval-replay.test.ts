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
    expect((await call("refund_order", { ...REFUND, amount_cents: 1 }, { call_id: "r1" })).error?.code).toBe(
      "approval_required",
    );
  });
});

// The gate reads the record, settle claims later: a record that expires in between must not let
// the destructive call run again without an approval. The window is forced here: the clock is
// past the record's TTL, so `claim` finds it expired, while `get` still shows it COMPLETED.
describe("A3: the record expires between the approval gate and settle", () => {
  for (const withId of [false, true]) {
    it(`runs nothing and releases the key (re-sent ${withId ? "with its used approval_id" : "without approval_id"})`, async () => {
      const { store, ...first } = make();
      const id = (await first.call("refund_order", REFUND, { call_id: "r1" })).error!.detail!.approval_id as string;
      await first.gateway.approvals.approve(id, { approver: "alice" });
      expect((await first.call("refund_order", REFUND, { approval_id: id, call_id: "r1" })).ok).toBe(true);
      const [done] = await store.records.list({ state: "COMPLETED", limit: 1, now: first.clock.now });
      const stale = {
        ...store,
        records: Object.assign(Object.create(store.records) as typeof store.records, { get: async () => done! }),
      };
      const { call, catalog, clock } = make({ store: stale });
      clock.now = done!.expires_at! + 1;

      const again = await call("refund_order", REFUND, { call_id: "r1", ...(withId ? { approval_id: id } : {}) });
      expect(again.ok).toBe(false);
      expect(catalog.calls.refund_order ?? 0).toBe(0);
      expect(await store.records.get(done!.key, clock.now)).toBeNull();
      if (!withId) {
        expect(again.text).toContain(
          "cannot be replayed and was not run again; nothing was executed. Propose the call without approval_id to request a new approval.",
        );
        expect(await first.gateway.approvals.list({ state: "pending" })).toEqual([]);
      }
    });
  }
});
