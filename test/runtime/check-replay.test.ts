import { describe, expect, it } from "vitest";
import { z } from "zod";
import { createGateway } from "../../src/runtime/gateway.js";
import { createMemoryStore } from "../../src/idempotency/stores/memory.js";
import { defineTool } from "../../src/schema/define.js";
import type { Effect } from "../../src/core/tool.js";

// A write whose check reads the state the write changes (a balance it spends): once the call
// ran, its repeat is answered from its record, not refused by the check its own effect now fails.
function wallet(effect: Effect) {
  const state = { balance: 10, spent: 0 };
  const spend = defineTool({
    name: "wallet_spend",
    description: "Spends from the wallet.",
    input: z.object({ amount: z.number().int().min(1).max(100).describe("How much to spend.") }),
    effect,
    check: (args) =>
      args.amount > state.balance
        ? [{ path: "/amount", code: "over_balance", message: `amount is more than the balance ${state.balance}` }]
        : undefined,
    handler: (args) => {
      state.balance -= args.amount;
      state.spent += 1;
      return { balance: state.balance };
    },
  });
  const store = createMemoryStore();
  const gateway = createGateway({ tools: [spend], store, audit: false });
  const call = (call_id: string, amount: number, approval_id?: string) =>
    gateway.call({
      trajectory_id: "t",
      turn: 1,
      call_id,
      tool: "wallet_spend",
      arguments: { amount },
      ...(approval_id ? { approval_id } : {}),
    });
  return { state, gateway, call };
}

describe("a repeat of a write that ran, whose check now refuses", () => {
  it("A2: is replayed from its record; a new call with the same arguments gets the check's refusal", async () => {
    const { state, call } = wallet("write");
    expect((await call("c1", 10)).output).toEqual({ balance: 0 });
    const again = await call("c1", 10);
    expect(again.ok).toBe(true);
    expect(again.replay).toBe(true);
    expect(again.output).toEqual({ balance: 0 });
    const other = await call("c2", 10);
    expect(other.error?.code).toBe("check_failed");
    expect(other.text).toContain("amount is more than the balance 0");
    expect(state.spent).toBe(1);
  });

  it("A3: is replayed with its approval id or without; a new call is refused by the check and asks nobody", async () => {
    const { state, gateway, call } = wallet("destructive");
    const asked = await call("c1", 10);
    const id = asked.error?.detail?.approval_id as string;
    await gateway.approvals.approve(id, { approver: "tester" });
    expect((await call("c1", 10, id)).output).toEqual({ balance: 0 });
    for (const repeat of [await call("c1", 10, id), await call("c1", 10)]) {
      expect(repeat.replay).toBe(true);
      expect(repeat.output).toEqual({ balance: 0 });
    }
    const other = await call("c2", 10);
    expect(other.error?.code).toBe("check_failed");
    const stale = await call("c3", 10, id);
    expect(stale.error?.code).toBe("check_failed");
    expect(await gateway.approvals.list({ state: "pending" })).toEqual([]);
    expect(state.spent).toBe(1);
  });
});

describe("a check that throws", () => {
  it("synchronously (a defineTool check) or in its promise: check_failed with its message fenced, the handler never runs", async () => {
    let ran = 0;
    const input = z.object({ n: z.number().int().min(0).max(9).describe("Any digit.") });
    const sync = defineTool({
      name: "sync_check",
      description: "Its check throws at once.",
      input,
      effect: "read",
      check: () => {
        throw new Error("the check's own bug (sync)");
      },
      handler: () => ++ran,
    });
    const later = defineTool({
      name: "async_check",
      description: "Its check rejects.",
      input,
      effect: "write",
      check: async () => {
        await Promise.resolve();
        throw new Error("the check's own bug (async)");
      },
      handler: () => ++ran,
    });
    const gateway = createGateway({ tools: [sync, later], store: createMemoryStore(), audit: false });
    for (const [tool, how] of [
      ["sync_check", "sync"],
      ["async_check", "async"],
    ] as const) {
      const o = await gateway.call({ trajectory_id: "t", turn: 1, call_id: tool, tool, arguments: { n: 1 } });
      expect(o.error?.code).toBe("check_failed");
      expect(o.text).toContain(`the check's own bug (${how})`);
    }
    expect(ran).toBe(0);
  });
});
