import { randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { createCapabilityAuthority } from "../../src/capability/authority.js";
import { keyRingFromMap } from "../../src/capability/keys.js";
import { createMemoryStore } from "../../src/idempotency/stores/memory.js";
import { gateways, stable, T0 } from "./helpers.js";

const make = gateways();
const rawKey = randomBytes(32).toString("base64");
const keys = keyRingFromMap({ k1: rawKey }, "test");

/** A gateway with keys and an authority over the same store and clock, to issue tokens with. */
function secured() {
  const store = createMemoryStore();
  const s = make({ store, keys });
  const authority = createCapabilityAuthority({ keys, store, now: () => s.clock.now });
  return { ...s, authority };
}

const hour = 3_600_000;

describe("grant", () => {
  it("a call without a capability is denied with what it needs", async () => {
    const { call, catalog } = secured();
    const o = await call("get_order", { order_id: "o_001" });
    expect(o.error?.code).toBe("denied");
    expect(o.error?.detail).toEqual({ code: "missing_capability", op: "read", target: "tool:get_order", cost: 1 });
    expect(o.text).toMatchInlineSnapshot(`
      "error denied: get_order (call call-1)
      This call needs a capability token (tg1.…) granting read on tool:get_order; none was sent with the call. Nothing was executed; ask the operator for a capability that covers it and send it with the call."
    `);
    expect(catalog.calls.get_order).toBeUndefined();
  });

  it("a capability that covers the call lets it through; the audit names the grant", async () => {
    const { call, authority, audit } = secured();
    const token = authority.issue({ rights: ["read"], objects: ["tool:get_order"], ttl_ms: hour });
    const o = await call("get_order", { order_id: "o_001" }, { capability: token });
    expect(o.ok).toBe(true);
    expect(audit.records[0]!.grant_code).toBe("allowed");
    expect(audit.records[0]!.stages.grant?.outcome).toBe("ok");
  });

  it("every denial code is an observation with the code and a model-safe reason", async () => {
    const { call, authority, clock, catalog } = secured();
    const other = createCapabilityAuthority({
      keys: keyRingFromMap({ k9: randomBytes(32).toString("base64") }, "other"),
      now: () => clock.now,
    });
    const good = authority.issue({
      rights: ["read", "write"],
      objects: ["tool:get_order", "tool:add_order_note"],
      ttl_ms: hour,
    });
    const tampered = good.slice(0, -4) + (good.endsWith("AAAA") ? "BBBB" : "AAAA");
    const cases: Array<[string, string, string, unknown]> = [
      ["malformed", "tg1.not-a-token", "get_order", { order_id: "o_001" }],
      ["bad_signature", tampered, "get_order", { order_id: "o_001" }],
      [
        "unknown_kid",
        other.issue({ rights: ["read"], objects: ["tool:get_order"], ttl_ms: hour }),
        "get_order",
        { order_id: "o_001" },
      ],
      [
        "right_missing",
        authority.issue({ rights: ["read"], objects: ["tool:add_order_note"], ttl_ms: hour }),
        "add_order_note",
        { order_id: "o_001", note: "n" },
      ],
      [
        "object_outside",
        authority.issue({ rights: ["read"], objects: ["tool:search_customer_orders"], ttl_ms: hour }),
        "get_order",
        { order_id: "o_001" },
      ],
      [
        "cost_over",
        authority.issue({ rights: ["read"], objects: ["tool:get_order"], max_cost: 0.5, ttl_ms: hour }),
        "get_order",
        { order_id: "o_001" },
      ],
      [
        "arg_out_of_bounds",
        authority.issue({
          rights: ["write"],
          objects: ["tool:refund_order"],
          args: [{ arg: "amount_cents", max: 100 }],
          ttl_ms: hour,
        }),
        "refund_order",
        { order_id: "o_001", amount_cents: 500 },
      ],
    ];
    const seen: Record<string, string> = {};
    for (const [code, token, tool, args] of cases) {
      const o = await call(tool, args, { capability: token });
      expect(o.error?.code, code).toBe("denied");
      expect(o.error?.detail?.code, code).toBe(code);
      seen[code] = stable(o.error!.message);
    }
    expect(seen).toMatchInlineSnapshot(`
      {
        "arg_out_of_bounds": "The capability was refused for write on tool:refund_order: argument amount_cents = 500 is out of bounds; the grant allows amount_cents ≤ 100 (arg_out_of_bounds). Nothing was executed; do not retry with the same capability.",
        "bad_signature": "The capability was refused for read on tool:get_order: the capability's signature does not verify: it was altered or not issued by this runtime; present the token exactly as issued (bad_signature). Nothing was executed; do not retry with the same capability.",
        "cost_over": "The capability was refused for read on tool:get_order: the call costs 1; the capability allows at most 0.5 per call (cost_over). Nothing was executed; do not retry with the same capability.",
        "malformed": "The capability was refused for read on tool:get_order: the capability token does not parse: the token must have at least one block and a tag (format tg1.<block>….<tag>) (malformed). Nothing was executed; do not retry with the same capability.",
        "object_outside": "The capability was refused for read on tool:get_order: the target tool:get_order is outside the capability's objects: tool:search_customer_orders (object_outside). Nothing was executed; do not retry with the same capability.",
        "right_missing": "The capability was refused for write on tool:add_order_note: the call needs the right "write"; the capability allows read (right_missing). Nothing was executed; do not retry with the same capability.",
        "unknown_kid": "The capability was refused for read on tool:get_order: the capability is signed with key id "k9", which this runtime does not hold (rotated out?); ask for a new grant (unknown_kid). Nothing was executed; do not retry with the same capability.",
      }
    `);

    const budgeted = authority.issue({ rights: ["read"], objects: ["tool:get_order"], budget: 1, ttl_ms: hour });
    expect((await call("get_order", { order_id: "o_001" }, { capability: budgeted })).ok).toBe(true);
    const spent = await call("get_order", { order_id: "o_001" }, { capability: budgeted });
    expect(spent.error?.detail?.code).toBe("budget_exhausted");

    const revoked = authority.issue({ rights: ["read"], objects: ["tool:get_order"], ttl_ms: hour });
    await authority.revoke(revoked, "leaked");
    expect((await call("get_order", { order_id: "o_001" }, { capability: revoked })).error?.detail?.code).toBe(
      "revoked",
    );

    const expiring = authority.issue({ rights: ["read"], objects: ["tool:get_order"], ttl_ms: 1000 });
    clock.now += 1001;
    const expired = await call("get_order", { order_id: "o_001" }, { capability: expiring });
    expect(expired.error?.detail?.code).toBe("expired");
    expect(stable(expired.text)).toMatchInlineSnapshot(`
      "error denied: get_order (call call-11)
      The capability was refused for read on tool:get_order: the capability expired at 2026-03-05T10:00:01.000Z (now 2026-03-05T10:00:01.001Z); ask for a new grant (expired). Nothing was executed; do not retry with the same capability."
    `);
    expect(catalog.calls.get_order).toBe(1);
  });

  it("a tool's own grant(args) names the target; A3 approvals are bound to the capability", async () => {
    const { call, authority, gateway } = secured();
    gateway.tools.get("refund_order")!.grant = (args) => ({
      op: "write",
      target: `path:/orders/${String(args.order_id)}`,
      cost: 1,
    });
    const token = authority.issue({
      rights: ["write"],
      objects: ["path:/orders/o_007", "tool:refund_order"],
      ttl_ms: hour,
    });
    const wrong = await call("refund_order", { order_id: "o_008", amount_cents: 5 }, { capability: token });
    expect(wrong.error?.detail?.code).toBe("object_outside");
    const ask = await call("refund_order", { order_id: "o_007", amount_cents: 5 }, { capability: token });
    const id = ask.error!.detail!.approval_id as string;
    await gateway.approvals.approve(id, { approver: "alice" });
    // Another capability (another agent's) cannot redeem this approval.
    const token2 = authority.issue({
      rights: ["write"],
      objects: ["path:/orders/o_007", "tool:refund_order"],
      ttl_ms: hour,
    });
    const stolen = await call(
      "refund_order",
      { order_id: "o_007", amount_cents: 5 },
      { capability: token2, approval_id: id },
    );
    expect(stolen.error?.detail?.reason).toBe("changed_capability");
    const mine = await call(
      "refund_order",
      { order_id: "o_007", amount_cents: 5 },
      { capability: token, approval_id: id },
    );
    expect(mine.ok).toBe(true);
  });

  it("the root key never reaches an observation", async () => {
    const { call, authority, gateway } = secured();
    gateway.tools.get("get_order")!.handler = () => ({ leaked: rawKey });
    const token = authority.issue({ rights: ["read"], objects: ["tool:get_order"], ttl_ms: hour });
    const o = await call("get_order", { order_id: "o_001" }, { capability: token });
    expect(o.text).not.toContain(rawKey);
    expect(o.output).toEqual({ leaked: "[REDACTED]" });
  });
});

void T0;
