import { describe, expect, it } from "vitest";
import { createGateway } from "../../src/runtime/gateway.js";
import { createMemoryStore } from "../../src/idempotency/stores/memory.js";
import { orderCatalog } from "./catalog.js";

const tools = () => orderCatalog().tools;
const base = () => ({ tools: tools(), store: createMemoryStore(), audit: false as const });

describe("createGateway configuration", () => {
  it("refuses duplicate tool names", () => {
    const t = tools();
    expect(() => createGateway({ ...base(), tools: [...t, t[0]!] })).toThrowErrorMatchingInlineSnapshot(
      `[ToolgateError: tools: two tools are named "search_customer_orders"; tool names must be unique]`,
    );
  });

  it("refuses a missing store, or an openStore promise not awaited, by name", () => {
    expect(() => createGateway({ ...base(), store: undefined as never })).toThrowErrorMatchingInlineSnapshot(
      `[ToolgateError: store: expected a store, e.g. await openStore("sqlite:.toolgate/state.db") or createMemoryStore(); received nothing]`,
    );
    expect(() =>
      createGateway({ ...base(), store: Promise.resolve(createMemoryStore()) as never }),
    ).toThrowErrorMatchingInlineSnapshot(
      `[ToolgateError: store: expected a store, e.g. await openStore("sqlite:.toolgate/state.db") or createMemoryStore(); received a Promise (openStore is async: await it)]`,
    );
  });

  it("refuses budgets too small for a marker and budgets for unknown tools", () => {
    expect(() => createGateway({ ...base(), budgets: { default_tokens: 50 } })).toThrowErrorMatchingInlineSnapshot(
      `[ToolgateError: budgets.default_tokens must be an integer of at least 200 tokens (a cut needs room for its marker); received 50; e.g. 2000]`,
    );
    expect(() => createGateway({ ...base(), budgets: { per_tool: { grep: 500 } } })).toThrowErrorMatchingInlineSnapshot(
      `[ToolgateError: budgets.per_tool names "grep", which is not a tool of this gateway (tools: search_customer_orders, get_order, add_order_note, sync_inventory, refund_order, slow_report, show_config, tail_log)]`,
    );
    const t = tools();
    t[0]!.budget_tokens = 1.5;
    expect(() => createGateway({ ...base(), tools: t })).toThrowErrorMatchingInlineSnapshot(
      `[ToolgateError: tool search_customer_orders: budget_tokens must be an integer of at least 200 tokens (a cut needs room for its marker); received 1.5; e.g. 2000]`,
    );
  });

  it("refuses a schema Ajv cannot compile at startup, not on the first call", () => {
    const t = tools();
    t[0]!.inputSchema = { type: "object", properties: { a: { type: "strng" } } };
    expect(() => createGateway({ ...base(), tools: t })).toThrow(/search_customer_orders/);
  });

  it("the operator's per_tool wins over the default, which wins over the tool's own budget_tokens, which wins over 2000", async () => {
    const t = tools();
    t.find((x) => x.name === "tail_log")!.budget_tokens = 400;
    const p = { trajectory_id: "t", turn: 0, call_id: "c", tool: "tail_log", arguments: { lines: 500 } };
    const both = createGateway({ ...base(), tools: t, budgets: { default_tokens: 300, per_tool: { tail_log: 250 } } });
    expect((await both.call(p)).text).toContain("to fit the 250-token budget");
    await both.close();
    const byDefault = createGateway({ ...base(), tools: t, budgets: { default_tokens: 300 } });
    expect((await byDefault.call(p)).text).toContain("to fit the 300-token budget");
    await byDefault.close();
    const none = createGateway({ ...base(), tools: t });
    expect((await none.call(p)).text).toContain("to fit the 400-token budget");
    await none.close();
    const plain = createGateway(base());
    expect((await plain.call({ ...p, arguments: { lines: 5000 } })).text).toContain("to fit the 2000-token budget");
    await plain.close();
  });

  it("hands the tool its effective budget as ctx.budget_tokens", async () => {
    const t = tools();
    const seen: number[] = [];
    const log = t.find((x) => x.name === "tail_log")!;
    log.budget_tokens = 400;
    log.handler = (_args, ctx) => (seen.push(ctx.budget_tokens), "ok");
    for (const budgets of [{ default_tokens: 300, per_tool: { tail_log: 250 } }, { default_tokens: 300 }, undefined]) {
      const gw = createGateway({ ...base(), tools: t, ...(budgets ? { budgets } : {}) });
      await gw.call({ trajectory_id: "t", turn: 0, call_id: "c", tool: "tail_log", arguments: { lines: 5 } });
      await gw.close();
    }
    expect(seen).toEqual([250, 300, 400]);
  });

  it("a closed gateway answers with an observation, not a throw", async () => {
    const gw = createGateway(base());
    await gw.close();
    const o = await gw.call({
      trajectory_id: "t",
      turn: 0,
      call_id: "c",
      tool: "get_order",
      arguments: { order_id: "o_001" },
    });
    expect(o.text).toMatchInlineSnapshot(`
      "error internal_error: get_order (call c)
      This gateway is closed; nothing was executed. Reconnect to a running toolgate."
    `);
  });
});
