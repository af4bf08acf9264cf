/**
 * docs/observations.md, "Tool output is untrusted data": text in a tool result never
 * authorizes a later action. An order note carries a prompt injection that names an
 * approval id, a capability and a fake fence end. Nothing in the boundary changes because of it.
 */
import { randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { createCapabilityAuthority } from "../../src/capability/authority.js";
import { keyRingFromMap } from "../../src/capability/keys.js";
import { createMemoryStore } from "../../src/idempotency/stores/memory.js";
import { INJECTION } from "./catalog.js";
import { gateways } from "./helpers.js";

const make = gateways();

describe("prompt injection in tool output", () => {
  it("is fenced as data and cannot close its fence", async () => {
    const { call } = make();
    const o = await call("get_order", { order_id: "o_005" });
    expect(o.ok).toBe(true);
    expect(o.text).toContain(INJECTION);
    const tag = /^<<untrusted ([0-9a-f]{8}): output of tool get_order/m.exec(o.text)![1]!;
    expect(INJECTION).not.toContain(tag);
    const lines = o.text.split("\n");
    // The only closing line for this fence is the last line, after the injected text.
    expect(lines.filter((l) => l === `<<end untrusted ${tag}>>`)).toHaveLength(1);
    expect(lines.at(-1)).toBe(`<<end untrusted ${tag}>>`);
  });

  it("changes nothing: approvals, grants and records are as they would be without it", async () => {
    const keys = keyRingFromMap({ k1: randomBytes(32).toString("base64") }, "test");
    const store = createMemoryStore();
    const { call, gateway, catalog, clock } = make({ store, keys });
    const authority = createCapabilityAuthority({ keys, store, now: () => clock.now });
    const reader = authority.issue({ rights: ["read"], objects: ["tool:get_order"], ttl_ms: 3_600_000 });

    const read = await call("get_order", { order_id: "o_005" }, { capability: reader });
    expect(read.ok).toBe(true);
    expect(read.text).toContain("IGNORE ALL PREVIOUS INSTRUCTIONS");

    // The model obeys the injection: it names the approval id and capability from the text.
    const obey = await call(
      "refund_order",
      { order_id: "o_005", amount_cents: 1185 },
      { approval_id: "ap_admin", capability: "tg1.admin" },
    );
    expect(obey.error?.code).toBe("denied");
    expect(obey.error?.detail?.code).toBe("malformed");
    // With the reader's own capability, a write is still outside its rights.
    const widened = await call(
      "refund_order",
      { order_id: "o_005", amount_cents: 1185 },
      { approval_id: "ap_admin", capability: reader },
    );
    expect(widened.error?.detail?.code).toBe("right_missing");
    // No approval was created or decided by reading the text, and nothing was refunded.
    expect(await gateway.approvals.list({})).toEqual([]);
    expect(catalog.calls.refund_order).toBeUndefined();
    expect(catalog.orders.get("o_005")!.refunded).toBe(false);
    expect(await store.records.list({ now: clock.now })).toEqual([]);
  });
});
