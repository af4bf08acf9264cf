import { afterEach, describe, expect, it } from "vitest";
import { lintCatalog } from "../../../src/schema/lint/index.js";
import { countTokens } from "../../../src/observation/tokens.js";
import { createOrderTools } from "../../../examples/orders/index.js";
import { join } from "node:path";
import { createGateway } from "../../../src/runtime/gateway.js";
import { createMemoryStore } from "../../../src/idempotency/stores/memory.js";
import { tempDir } from "../../mcp/support.js";
import { HOUR, ordersGateway } from "./support.js";

const open: Array<ReturnType<typeof ordersGateway>> = [];
function setup(options: Parameters<typeof ordersGateway>[0] = {}) {
  const g = ordersGateway(options);
  open.push(g);
  return g;
}
afterEach(async () => {
  await Promise.all(open.splice(0).map((g) => g.gateway.close()));
});

/** Ids of the order rows of a search observation's output. */
const idsOf = (o: { output?: unknown }) => (o.output as { orders: Array<{ id: string }> }).orders.map((r) => r.id);

describe("search_customer_orders", () => {
  it("refuses since 2026-2-3 and 3/5/26 with the ISO-date sentence, naming what arrived", async () => {
    const { call, capability } = setup();
    const acme = capability("acme");
    for (const since of ["2026-2-3", "3/5/26", "2026-02-30"]) {
      const o = await call("search_customer_orders", { customer_id: "c_7", since }, acme);
      expect(o.error?.code).toBe("invalid_arguments");
      expect(o.text).toContain(`- since must be YYYY-MM-DD; received ${since}; example 2026-03-05\n`);
    }
    const ok = await call("search_customer_orders", { customer_id: "c_7", since: "2026-02-03" }, acme);
    expect(ok.ok).toBe(true);
    for (const row of (ok.output as { orders: Array<{ placed_at: string }> }).orders)
      expect(row.placed_at >= "2026-02-03").toBe(true);
  });

  it("returns at most 20 rows newest first with a summary over all 143, and pages through all of them once in the same order", async () => {
    const { call, capability, db } = setup();
    const acme = capability("acme");
    const first = await call("search_customer_orders", { customer_id: "c_7" }, acme);
    expect(first.text).toContain("20 of 143 orders of c_7, newest first; total ");
    expect(idsOf(first)).toHaveLength(20);
    const seen: string[] = [];
    let args: Record<string, unknown> = { customer_id: "c_7" };
    for (let page = 0; page < 10; page++) {
      const o = await call("search_customer_orders", args, acme);
      const ids = idsOf(o);
      expect(ids.length).toBeLessThanOrEqual(20);
      seen.push(...ids);
      const cursor = (o.output as { cursor: string | null }).cursor;
      if (cursor === null) break;
      expect(o.text).toContain(`More: call again with cursor ${cursor}.`);
      args = { customer_id: "c_7", cursor };
    }
    const all = db()
      .prepare("SELECT id FROM orders WHERE customer_id = 'c_7' ORDER BY placed_at DESC, id ASC")
      .all() as Array<{ id: string }>;
    expect(seen).toEqual(all.map((r) => r.id));
    expect(new Set(seen).size).toBe(143);
    // The same page twice is the same page: the order is stable.
    expect(idsOf(await call("search_customer_orders", { customer_id: "c_7" }, acme))).toEqual(idsOf(first));
  });

  it("keeps a status filter across pages and counts only what it matches", async () => {
    const { call, capability, db } = setup();
    const acme = capability("acme");
    const o = await call("search_customer_orders", { customer_id: "c_7", status: "delivered" }, acme);
    const { n } = db()
      .prepare("SELECT count(*) AS n FROM orders WHERE customer_id = 'c_7' AND status = 'delivered'")
      .get() as { n: number };
    expect(o.text).toContain(`20 of ${n} delivered orders of c_7`);
    const next = (o.output as { cursor: string }).cursor;
    const page2 = await call("search_customer_orders", { customer_id: "c_7", status: "delivered", cursor: next }, acme);
    for (const row of (page2.output as { orders: Array<{ status: string }> }).orders)
      expect(row.status).toBe("delivered");
  });

  it("answers another tenant's customer exactly as a customer that does not exist", async () => {
    const { call, capability } = setup();
    const acme = capability("acme");
    const other = await call("search_customer_orders", { customer_id: "c_8" }, acme);
    const missing = await call("search_customer_orders", { customer_id: "c_8888" }, acme);
    expect(other.error?.code).toBe("check_failed");
    expect(other.text.replace(/c_8\b/g, "ID").replace(/call c\d+/, "")).toBe(
      missing.text.replace(/c_8888\b/g, "ID").replace(/call c\d+/, ""),
    );
    expect(other.text).not.toContain("globex");
    // The owner sees it.
    expect((await call("search_customer_orders", { customer_id: "c_8" }, capability("globex"))).ok).toBe(true);
  });

  it("refuses a call whose capability names no tenant, or sends none that verifies", async () => {
    const g = setup();
    const { call, capability } = g;
    const { authority } = g;
    const forged = capability("acme").slice(0, -4) + (capability("acme").endsWith("AAAA") ? "BBBB" : "AAAA");
    const toolOnly = authority.issue({ rights: ["read"], objects: ["tool:search_customer_orders"], ttl_ms: HOUR });
    for (const cap of [forged, toolOnly]) {
      const o = await call("search_customer_orders", { customer_id: "c_7" }, cap);
      expect(o.error?.code).toBe("check_failed");
      expect(o.text).toContain("this call needs a capability naming the tenant whose orders it reads");
    }
  });
});

describe("get_order_details", () => {
  it("shows line items, payments, refunds and the refundable balance of an order of the caller's tenant", async () => {
    const { call, capability } = setup();
    const o = await call("get_order_details", { order_id: "o_1" }, capability("acme"));
    expect(o.text).toContain("order o_1 of c_7, delivered");
    expect(o.text).toContain("total 64.90 EUR; paid 64.90; refunded 52.40; refundable 12.50");
    expect(o.text).toContain("line items (2):");
    expect(o.text).toContain("refunds (2):");
  });

  it("answers another tenant's order exactly as an order that does not exist", async () => {
    const { call, capability, db } = setup();
    const { id } = db().prepare("SELECT id FROM orders WHERE tenant_id = 'globex' LIMIT 1").get() as { id: string };
    const acme = capability("acme");
    const other = await call("get_order_details", { order_id: id }, acme);
    const missing = await call("get_order_details", { order_id: "o_999999" }, acme);
    expect(other.error?.code).toBe("check_failed");
    const blind = (text: string, oid: string) => text.replaceAll(oid, "ID").replace(/call c\d+/, "");
    expect(blind(other.text, id)).toBe(blind(missing.text, "o_999999"));
  });

  it("stays within a small token budget on an order of 30 and more line items, and says how many it left out", async () => {
    const { call, capability, db } = setup({ budgets: { default_tokens: 600 } });
    const { order_id, n } = db()
      .prepare(
        "SELECT order_id, count(*) AS n FROM line_items l JOIN orders o ON o.id = l.order_id WHERE o.tenant_id = 'acme' GROUP BY order_id ORDER BY n DESC LIMIT 1",
      )
      .get() as { order_id: string; n: number };
    expect(n).toBeGreaterThanOrEqual(30);
    const o = await call("get_order_details", { order_id }, capability("acme"));
    expect(o.ok).toBe(true);
    expect(o.text).toMatch(/… \d+ more line items \([\d,.]+\) not shown/);
    expect(o.text).not.toContain("[truncated");
    expect(countTokens(o.text)).toBeLessThanOrEqual(600);
  });
});

describe("refund_order", () => {
  const refund = { order_id: "o_1", amount_cents: 1250, reason: "lamp flickers again" };

  it("is proposed, approved by a person, runs once and names the irreversible change; its retry gets the stored result", async () => {
    const { call, capability, gateway, db } = setup();
    const cap = capability("acme", 5000);
    const proposed = await call("refund_order", refund, cap, { call_id: "refund-1" });
    expect(proposed.error?.code).toBe("approval_required");
    expect(proposed.text).toContain("refund_order is destructive (A3) and needs a person's approval");
    const countRefunds = () =>
      (db().prepare("SELECT count(*) AS n FROM refunds WHERE order_id = 'o_1'").get() as { n: number }).n;
    expect(countRefunds()).toBe(2);
    const approval_id = proposed.error!.detail!.approval_id as string;
    await gateway.approvals.approve(approval_id, { approver: "support-lead" });
    const done = await call("refund_order", refund, cap, { call_id: "refund-1", approval_id });
    expect(done.ok).toBe(true);
    expect(done.text).toMatch(
      /refund r_[0-9a-f]{10} of 12\.50 issued on order o_1; refundable balance now 0\.00; order version 7\. This cannot be undone\./,
    );
    expect(done.state).toMatchObject({ order_id: "o_1", refundable_cents: 0, version: 7 });
    const retried = await call("refund_order", refund, cap, { call_id: "refund-1", approval_id });
    expect(retried.replay).toBe(true);
    expect(retried.output).toEqual(done.output);
    expect(countRefunds()).toBe(3);
    // A new call for the same refund is a new refund, and the balance refuses it.
    const again = await call("refund_order", refund, cap, { call_id: "refund-2" });
    expect(again.error?.code).toBe("check_failed");
    expect(again.text).toContain("order o_1 has nothing left to refund (paid 64.90, refunded 64.90)");
  });

  it("two approved refunds of the whole balance raced at once: one is issued, the other refunds nothing and says what is left", async () => {
    const { call, capability, gateway, db } = setup();
    const cap = capability("acme", 5000);
    // Two conversations, each with its own approval for the same refund.
    const ids = ["race-a", "race-b"];
    const approvals: string[] = [];
    for (const call_id of ids) {
      const asked = await call("refund_order", refund, cap, { call_id, trajectory_id: call_id });
      approvals.push(asked.error!.detail!.approval_id as string);
      await gateway.approvals.approve(approvals.at(-1)!, { approver: "support-lead" });
    }
    const results = await Promise.all(
      ids.map((call_id, i) =>
        call("refund_order", refund, cap, { call_id, trajectory_id: call_id, approval_id: approvals[i]! }),
      ),
    );
    expect(results.filter((r) => r.ok)).toHaveLength(1);
    const lost = results.find((r) => !r.ok)!;
    expect(lost.text).toMatch(
      /has 0\.00 left to refund now, less than 12\.50; nothing was refunded|nothing left to refund/,
    );
    expect((db().prepare("SELECT count(*) AS n FROM refunds WHERE order_id = 'o_1'").get() as { n: number }).n).toBe(3);
  });

  it("refuses more than the refundable balance, naming what remains, before any person is asked", async () => {
    const { call, capability, gateway } = setup();
    const o = await call("refund_order", { ...refund, amount_cents: 2000 }, capability("acme", 5000));
    expect(o.error?.code).toBe("check_failed");
    expect(o.text).toContain(
      "- amount_cents is more than order o_1 has left to refund: 1250 (12.50) remains; received 2000; example 1250\n",
    );
    expect(await gateway.approvals.list({ state: "pending" })).toEqual([]);
  });

  it("refuses another tenant's order as not found, asks nobody, and refunds nothing", async () => {
    const { call, capability, gateway, db } = setup();
    const globex = capability("globex", 5000);
    const other = await call("refund_order", refund, globex);
    const missing = await call("refund_order", { ...refund, order_id: "o_999999" }, globex);
    expect(other.error?.code).toBe("check_failed");
    const blind = (text: string, oid: string) => text.replaceAll(oid, "ID").replace(/call c\d+/, "");
    expect(blind(other.text, "o_1")).toBe(blind(missing.text, "o_999999"));
    expect(await gateway.approvals.list({ state: "pending" })).toEqual([]);
    expect((db().prepare("SELECT count(*) AS n FROM refunds WHERE order_id = 'o_1'").get() as { n: number }).n).toBe(2);
  });

  it("is capped by the capability's bound on amount_cents", async () => {
    const { call, capability } = setup();
    const o = await call("refund_order", refund, capability("acme", 1000));
    expect(o.error?.code).toBe("denied");
    expect(o.text).toContain("argument amount_cents = 1250 is out of bounds; the grant allows amount_cents ≤ 1000");
    const reads = await call("refund_order", refund, capability("acme"));
    expect(reads.error?.code).toBe("denied");
    expect(reads.text).toContain('the call needs the right "write"');
  });

  it("refuses a reason of spaces and an amount that is not whole cents", async () => {
    const { call, capability } = setup();
    const cap = capability("acme", 5000);
    const blank = await call("refund_order", { ...refund, reason: "    " }, cap);
    expect(blank.text).toContain("reason must say why, in at least 3 characters that are not spaces");
    const cents = await call("refund_order", { ...refund, amount_cents: 12.5 }, cap);
    expect(cents.error?.code).toBe("invalid_arguments");
    expect(cents.text).toContain("amount_cents");
  });
});

describe("the catalog", () => {
  it("behind a gateway without keys refuses every call, saying which capability it needs", async () => {
    const gateway = createGateway({
      tools: createOrderTools(join(tempDir("orders-nokeys"), "orders.sqlite")),
      store: createMemoryStore(),
      audit: false,
    });
    const o = await gateway.call({
      trajectory_id: "t",
      turn: 1,
      call_id: "c",
      tool: "search_customer_orders",
      arguments: { customer_id: "c_7" },
    });
    expect(o.error?.code).toBe("check_failed");
    expect(o.text).toContain("this call needs a capability naming the tenant whose orders it reads");
    expect(o.text).toContain("example toolgate cap issue --rights read --objects tenant:acme --ttl 8h");
    await gateway.close();
  });

  it("has no error-level lint finding and no overlapping pair", () => {
    const findings = lintCatalog(createOrderTools(":memory:"));
    expect(findings.filter((f) => f.severity === "error")).toEqual([]);
    expect(findings.filter((f) => f.rule === "TG009")).toEqual([]);
  });
});
