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
    const { record } = await store.records.claim("k", {
      owner: "o",
      lease_until: now + 1000,
      fingerprint: null,
      tool: null,
      now,
    });
    record.state = "COMPLETED";
    const result = { items: [1] };
    await store.records.transition("k", "o", "IN_FLIGHT", { state: "COMPLETED", result, expires_at: null, now });
    result.items.push(2);
    expect(await store.records.get("k", now)).toMatchObject({ state: "COMPLETED", result: { items: [1] } });
  });

  it("copies nested results deeply in and out, and values that are not plain data as structuredClone does", async () => {
    const store = createMemoryStore();
    const now = Date.now();
    await store.records.claim("k", { owner: "o", lease_until: now + 1000, fingerprint: null, tool: null, now });
    const result = { rows: [{ id: 1, tags: ["a"] }], none: null, deep: { n: -0 } };
    expect(
      await store.records.transition("k", "o", "IN_FLIGHT", { state: "COMPLETED", result, expires_at: null, now }),
    ).toBe(true);
    result.rows[0]!.tags.push("b");
    ((await store.records.get("k", now))!.result as { rows: Array<{ tags: string[] }> }).rows[0]!.tags.push("c");
    const read = (await store.records.get("k", now))!.result as typeof result;
    expect(read).toEqual({ rows: [{ id: 1, tags: ["a"] }], none: null, deep: { n: -0 } });
    expect(Object.is(read.deep.n, -0)).toBe(true);

    // Not JSON-shaped (the contract says JSON, but the copy must not alias or lose what it is given):
    // a sparse array, a Date and a `__proto__` own key go through structuredClone.
    await store.records.claim("odd", { owner: "o", lease_until: now + 1000, fingerprint: null, tool: null, now });
    const sparse = [1, 2, 3];
    delete sparse[1];
    const odd = { sparse, at: new Date(0), own: JSON.parse('{"__proto__": 1}') as unknown };
    await store.records.transition("odd", "o", "IN_FLIGHT", {
      state: "COMPLETED",
      result: odd as never,
      expires_at: null,
      now,
    });
    const back = (await store.records.get("odd", now))!.result as unknown as typeof odd;
    expect(1 in back.sparse).toBe(false);
    expect(back.at).toBeInstanceOf(Date);
    expect(back.at).not.toBe(odd.at);
    expect(Object.keys(back.own as object)).toEqual(["__proto__"]);
  });
});
