import { describe, expect, it } from "vitest";
import { createMemoryStore } from "../../../src/idempotency/stores/memory.js";
import { describeStoreConformance } from "../store.conformance.js";

describeStoreConformance("memory", async () => createMemoryStore());

describe("memory store", () => {
  it("declares itself neither shared nor durable", () => {
    expect(createMemoryStore().capabilities).toEqual({ shared: false, durable: false });
  });

  it("refuses every operation once closed, like a store that went away", async () => {
    const store = createMemoryStore();
    await store.close();
    const now = Date.now();
    const calls: Array<() => Promise<unknown>> = [
      () => store.records.claim("k", { owner: "o", lease_until: now + 1, fingerprint: null, tool: null, now }),
      () => store.records.get("k", now),
      () => store.records.transition("k", "o", "IN_FLIGHT", { state: "COMPLETED", now }),
      () => store.records.release("k", "o", "IN_FLIGHT"),
      () => store.records.list({ now }),
      () => store.revocations.revoke("g", { reason: null, until: null, now }),
      () => store.revocations.firstRevoked(["g"], now),
      () => store.revocations.list(now),
      () => store.budgets.spend("b", 1, 2),
      () => store.budgets.spent("b"),
      () => store.approvals.get("a"),
      () => store.approvals.list({}),
      () => store.approvals.update("a", "pending", { state: "approved" }),
    ];
    for (const call of calls) await expect(call()).rejects.toThrow("the memory store is closed");
    await store.close();
  });

  it("hands out copies: mutating a returned record changes nothing stored", async () => {
    const store = createMemoryStore();
    const now = Date.now();
    const { record } = await store.records.claim("k", { owner: "o", lease_until: now + 1000, fingerprint: null, tool: null, now });
    record.state = "COMPLETED";
    const result = { items: [1] };
    await store.records.transition("k", "o", "IN_FLIGHT", { state: "COMPLETED", result, expires_at: null, now });
    result.items.push(2);
    expect(await store.records.get("k", now)).toMatchObject({ state: "COMPLETED", result: { items: [1] } });
  });
});
