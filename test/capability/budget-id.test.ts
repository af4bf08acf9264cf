/**
 * A holder writes its own attenuation blocks, ids included. Budgets are spent under a key
 * derived from the chain's tag at the block that states them, so a hand-made block that copies
 * another grant's budget block id spends a budget of its own and cannot drain that grant's.
 */
import { describe, expect, it } from "vitest";
import { nextTag } from "../../src/capability/chain.js";
import { blockBytes, encodeToken, parseToken } from "../../src/capability/token.js";
import { HOUR, testAuthority } from "./support.js";

/** Appends a hand-made block (any id) to `token`, as a holder can without the key. */
function handMade(token: string, block: { id: string; pred?: { budget?: number } }): string {
  const parent = parseToken(token);
  const bytes = blockBytes(block);
  return encodeToken([...parent.bytes, bytes], nextTag(parent.tag, bytes));
}

describe("budget ids", () => {
  it("a block that copies another grant's budget block id does not drain that grant's budget", async () => {
    const { authority } = testAuthority();
    const victim = authority.issue({ rights: ["read"], objects: ["path:/ws"], budget: 3, ttl_ms: HOUR });
    const victimBudgetBlock = parseToken(victim).grant.id;
    const attacker = authority.issue({ rights: ["read"], objects: ["path:/ws"], ttl_ms: HOUR });
    // The attacker states a budget in a block named like the victim's budget block.
    const forged = handMade(attacker, { id: victimBudgetBlock, pred: { budget: 1000 } });
    const ask = { op: "read", target: "path:/ws/a", cost: 1 };
    for (let i = 0; i < 5; i++) expect(await authority.authorize(forged, ask)).toMatchObject({ allowed: true });
    // Untouched: the victim still has all 3 of its calls, and no more.
    for (let i = 3; i > 0; i--)
      expect(await authority.authorize(victim, ask)).toMatchObject({ allowed: true, remaining_budget: i - 1 });
    expect(await authority.authorize(victim, ask)).toMatchObject({ allowed: false, code: "budget_exhausted" });
    expect((await authority.inspect(forged)).budgets).toEqual([
      { block_id: victimBudgetBlock, limit: 1000, key: expect.stringMatching(/^bud_/), spent: 5 },
    ]);
  });

  it("a child's calls still count against its parent's budget, whatever id the child's block has", async () => {
    const { authority } = testAuthority();
    const parent = authority.issue({ rights: ["read"], objects: ["path:/ws"], budget: 2, ttl_ms: HOUR });
    const child = handMade(parent, { id: "anything" });
    const ask = { op: "read", target: "path:/ws/a", cost: 1 };
    expect(await authority.authorize(child, ask)).toMatchObject({ allowed: true, remaining_budget: 1 });
    expect(await authority.authorize(parent, ask)).toMatchObject({ allowed: true, remaining_budget: 0 });
    expect(await authority.authorize(child, ask)).toMatchObject({ allowed: false, code: "budget_exhausted" });
  });

  it("what an earlier version spent under the block id still counts, and copying that id lowers only the copier's budget", async () => {
    const { authority, store } = testAuthority();
    const token = authority.issue({ rights: ["read"], objects: ["path:/ws"], budget: 3, ttl_ms: HOUR });
    const blockId = parseToken(token).grant.id;
    await store.budgets.spend(blockId, 2, 3); // as versions that keyed budgets by block id recorded it
    const ask = { op: "read", target: "path:/ws/a", cost: 1 };
    expect(await authority.authorize(token, ask)).toMatchObject({ allowed: true, remaining_budget: 0 });
    expect(await authority.authorize(token, ask)).toMatchObject({
      allowed: false,
      code: "budget_exhausted",
      reason: "the call costs 1; the capability's budget has 0 of 3 left",
    });
    expect((await authority.inspect(token)).budgets[0]!.spent).toBe(3);
    const copier = handMade(authority.issue({ rights: ["read"], objects: ["path:/ws"], ttl_ms: HOUR }), {
      id: blockId,
      pred: { budget: 4 },
    });
    expect(await authority.authorize(copier, { ...ask, cost: 2 })).toMatchObject({
      allowed: true,
      remaining_budget: 0,
    });
    expect(await store.budgets.spent(blockId)).toBe(2);
  });

  it("the key a budget is spent under is neither the block id nor the chain's tag", async () => {
    const { authority } = testAuthority();
    const token = authority.issue({ rights: ["read"], objects: ["path:/ws"], budget: 2, ttl_ms: HOUR });
    const [budget] = (await authority.inspect(token)).budgets;
    const parsed = parseToken(token);
    expect(budget!.key).not.toContain(parsed.grant.id);
    expect(budget!.key).not.toContain(parsed.tag.toString("base64url"));
    expect(budget!.key).not.toContain(parsed.tag.toString("hex"));
  });
});
