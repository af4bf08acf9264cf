/**
 * The pipeline against the embedded default store (`sqlite:`): replays, in-doubt records and
 * approvals survive a restart of the gateway, because they live in the store.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { openStore } from "../../src/idempotency/open.js";
import { gateways } from "./helpers.js";

const make = gateways();
const dir = mkdtempSync(join(tmpdir(), "toolgate-runtime-sqlite-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const url = (name: string) => `sqlite:${join(dir, name)}`;

describe("gateway over SQLite", () => {
  it("A2: a repeat after a restart replays the stored result", async () => {
    const first = make({ store: await openStore(url("a2.db")) });
    const p = first.propose("add_order_note", { order_id: "o_001", note: "hello" }, { call_id: "w1" });
    const o1 = await first.gateway.call(p);
    expect(o1.ok).toBe(true);
    await first.gateway.close();

    const second = make({ store: await openStore(url("a2.db")) });
    const o2 = await second.gateway.call(p);
    expect(o2.replay).toBe(true);
    expect(o2.state).toEqual(o1.state);
    expect(o2.output).toEqual(o1.output);
    expect(second.catalog.calls.add_order_note).toBeUndefined();
  });

  it("A2: a throwing tool leaves IN_DOUBT, still refused after a restart", async () => {
    const first = make({ store: await openStore(url("doubt.db")) });
    const p = first.propose("sync_inventory", { sku: "S-1" }, { call_id: "s1" });
    expect((await first.gateway.call(p)).error?.code).toBe("tool_failed");
    await first.gateway.close();
    const second = make({ store: await openStore(url("doubt.db")) });
    const again = await second.gateway.call(p);
    expect(again.error?.code).toBe("in_doubt");
    expect(second.catalog.calls.sync_inventory).toBeUndefined();
  });

  it("A3: an approval requested before a restart is approved and redeemed after it, once", async () => {
    const args = { order_id: "o_009", amount_cents: 1333 };
    const first = make({ store: await openStore(url("a3.db")) });
    const id = (await first.call("refund_order", args)).error!.detail!.approval_id as string;
    await first.gateway.close();

    const second = make({ store: await openStore(url("a3.db")) });
    expect((await second.gateway.approvals.list({ state: "pending" })).map((a) => a.id)).toEqual([id]);
    const changed = await second.call("refund_order", { ...args, amount_cents: 1 }, { approval_id: id });
    expect(changed.error?.detail?.reason).toBe("changed_arguments");
    await second.gateway.approvals.approve(id, { approver: "alice" });
    const run = await second.call("refund_order", args, { approval_id: id, call_id: "r1" });
    expect(run.ok).toBe(true);
    const reuse = await second.call("refund_order", args, { approval_id: id, call_id: "r2" });
    expect(reuse.error?.detail?.reason).toBe("used");
    expect(second.catalog.calls.refund_order).toBe(1);

    const denied = (await second.call("refund_order", { ...args, order_id: "o_010" })).error!.detail!
      .approval_id as string;
    await second.gateway.approvals.deny(denied, { reason: "no" });
    expect(
      (await second.call("refund_order", { ...args, order_id: "o_010" }, { approval_id: denied })).error?.code,
    ).toBe("approval_denied");
    second.clock.now += 16 * 60_000;
    const late = (await second.call("refund_order", { ...args, order_id: "o_011" })).error!.detail!
      .approval_id as string;
    second.clock.now += 16 * 60_000;
    // Never decided and past its lifetime: expired, not pending forever.
    expect(
      (await second.call("refund_order", { ...args, order_id: "o_011" }, { approval_id: late })).error?.detail?.reason,
    ).toBe("expired");
  });
});
