/**
 * The capability check on every call (docs/authority.md): each denial code with
 * its exact reason, expiry and revocation through a chain, budgets spent atomically.
 */
import { describe, expect, it } from "vitest";
import { attenuate } from "../../src/capability/attenuate.js";
import { createCapabilityAuthority } from "../../src/capability/authority.js";
import { HOUR, T0, testAuthority } from "./support.js";

function setup() {
  const t = testAuthority();
  const token = t.authority.issue({
    rights: ["read", "write"],
    objects: ["path:/ws", "host:*.example.com"],
    max_cost: 10,
    args: [
      { arg: "amount", max: 100 },
      { arg: "/order/currency", oneOf: ["usd", "eur"] },
    ],
    ttl_ms: HOUR,
  });
  return { ...t, token, now: () => t.clock.now };
}
const args = { amount: 5, order: { currency: "usd" } };

describe("authorize: each component refuses with a reason a model can act on", () => {
  const { authority, token } = setup();
  const ask = (req: Partial<Parameters<typeof authority.authorize>[1]>) =>
    authority.authorize(token, { op: "read", target: "path:/ws/a.txt", args, ...req });

  it("allows a call inside every component", async () => {
    const d = await ask({});
    expect(d).toMatchObject({ allowed: true, chain_ids: [expect.stringMatching(/^cap_/)] });
    expect(await ask({ op: "write", target: "host:api.example.com", cost: 10 })).toMatchObject({ allowed: true });
  });

  it("right_missing", async () => {
    expect(await ask({ op: "execute" })).toMatchObject({
      allowed: false,
      code: "right_missing",
      reason: 'the call needs the right "execute"; the capability allows read, write',
    });
  });

  it("object_outside: sibling prefix, traversal, host suffix trick, malformed target", async () => {
    expect((await ask({ target: "path:/ws2/a" })).allowed).toBe(false);
    expect(await ask({ target: "path:/ws/../etc/passwd" })).toMatchObject({
      code: "object_outside",
      reason: "the target path:/etc/passwd is outside the capability's objects: host:*.example.com, path:/ws",
    });
    expect(await ask({ target: "host:api.example.com.evil.net" })).toMatchObject({ code: "object_outside" });
    expect(await ask({ target: "path:/ws/%2e%2e/etc" })).toMatchObject({
      code: "object_outside",
      reason:
        'the call\'s target is not a valid object: object "path:/ws/%2e%2e/etc" contains the percent-encoded sequence %2e; pass the decoded filesystem path (toolgate refuses URL encoding in paths rather than guess how to decode it)',
    });
  });

  it("cost_over: above the ceiling, or not a cost at all", async () => {
    expect(await ask({ cost: 11 })).toMatchObject({
      code: "cost_over",
      reason: "the call costs 11; the capability allows at most 10 per call",
    });
    expect(await ask({ cost: -1 })).toMatchObject({
      code: "cost_over",
      reason: "the call's cost must be a finite number ≥ 0; received -1",
    });
  });

  it("arg_out_of_bounds: above max, not in oneOf, missing, wrong type", async () => {
    expect(await ask({ args: { amount: 101, order: { currency: "usd" } } })).toMatchObject({
      code: "arg_out_of_bounds",
      reason: "argument amount = 101 is out of bounds; the grant allows amount ≤ 100",
    });
    expect(await ask({ args: { amount: 1, order: { currency: "gbp" } } })).toMatchObject({
      reason: 'argument /order/currency = "gbp" is not allowed; the grant allows /order/currency one of ["usd","eur"]',
    });
    expect(await ask({ args: { order: { currency: "usd" } } })).toMatchObject({
      reason: "the grant bounds argument amount (amount ≤ 100) but the call does not supply it",
    });
    expect(await ask({ args: { amount: "5", order: { currency: "usd" } } })).toMatchObject({
      reason: 'argument amount = "5" is not a number; the grant allows amount ≤ 100',
    });
  });

  it("a block naming tool: objects restricts the calling tool", async () => {
    const child = attenuate(token, { objects: ["path:/ws", "tool:file_view"] }, { now: () => T0 });
    expect(
      await authority.authorize(child, { op: "read", target: "path:/ws/a", tool: "file_view", args }),
    ).toMatchObject({ allowed: true });
    expect(
      await authority.authorize(child, { op: "read", target: "path:/ws/a", tool: "bash_execute", args }),
    ).toMatchObject({
      code: "object_outside",
      reason: 'the tool "bash_execute" is not one the capability names: file_view',
    });
    expect(await authority.authorize(child, { op: "read", target: "path:/ws/a", args })).toMatchObject({
      code: "object_outside",
      reason:
        'the capability is limited to the tools file_view, and the request names no tool; pass the calling tool\'s name as tool (e.g. tool: "file_view")',
    });
    expect((await authority.inspect(child)).grant).toMatchObject({ objects: ["path:/ws"], tools: ["file_view"] });
    // Once a block names tools, a later block can only pick among them.
    expect(() => attenuate(child, { objects: ["tool:bash_execute"] }, { now: () => T0 })).toThrow(
      /object tool:bash_execute is not within the parent's objects/,
    );
  });
});

describe("createCapabilityAuthority options", () => {
  it("an openStore promise not awaited is refused by name, not a TypeError on the first authorize", () => {
    const { keys } = testAuthority();
    expect(() =>
      createCapabilityAuthority({ keys, store: Promise.resolve({}) as never }),
    ).toThrowErrorMatchingInlineSnapshot(
      `[ToolgateError: store: expected a store, e.g. await openStore("sqlite:.toolgate/state.db") or createMemoryStore(); received a Promise (openStore is async: await it)]`,
    );
  });
});

describe("expiry", () => {
  it("expires after E (plus the configured skew), and an expired parent takes its child with it", async () => {
    const { authority, token, clock, now } = setup();
    const child = attenuate(token, { rights: ["read"] }, { now });
    clock.now = T0 + HOUR;
    expect(await authority.authorize(child, { op: "read", target: "path:/ws/a", args })).toMatchObject({
      allowed: true,
    });
    clock.now = T0 + HOUR + 1;
    expect(await authority.authorize(child, { op: "read", target: "path:/ws/a", args })).toEqual({
      allowed: false,
      code: "expired",
      reason: "the capability expired at 2026-01-01T01:00:00.000Z (now 2026-01-01T01:00:00.001Z); ask for a new grant",
      grant_id: expect.stringMatching(/^cap_/),
    });
    const lenient = createCapabilityAuthority({ keys: setup().keys, now: () => T0 + HOUR + 20_000, skew_ms: 30_000 });
    expect(await lenient.authorize(child, { op: "read", target: "path:/ws/a", args })).toMatchObject({ allowed: true });
  });
});

describe("revocation", () => {
  it("revoking the parent rejects the child and grandchild on the next call; siblings of other roots are untouched", async () => {
    const { authority, token, now } = setup();
    const child = attenuate(token, { rights: ["read"] }, { now });
    const grandchild = attenuate(child, { objects: ["path:/ws/src"] }, { now });
    const other = authority.issue({ rights: ["read"], objects: ["path:/ws"], ttl_ms: HOUR });
    const req = { op: "read", target: "path:/ws/src/a", args };
    expect(await authority.authorize(grandchild, req)).toMatchObject({ allowed: true });
    await authority.revoke((await authority.inspect(token)).grant!.id, "leaked in a log");
    const d = await authority.authorize(grandchild, req);
    expect(d).toMatchObject({ allowed: false, code: "revoked" });
    expect(!d.allowed && d.reason).toMatch(
      /^the capability cap_\S+ is revoked: the grant it was delegated from \(cap_\S+\) was revoked; ask for a new grant$/,
    );
    expect(await authority.authorize(child, req)).toMatchObject({ code: "revoked" });
    expect(await authority.authorize(token, req)).toMatchObject({
      code: "revoked",
      reason: expect.stringContaining(": it was revoked"),
    });
    expect(await authority.authorize(other, req)).toMatchObject({ allowed: true });
  });

  it("revoking a child leaves its parent working; revoke accepts a whole token", async () => {
    const { authority, token, now, store } = setup();
    const child = attenuate(token, { rights: ["read"] }, { now });
    await authority.revoke(child);
    expect(await authority.authorize(child, { op: "read", target: "path:/ws/a", args })).toMatchObject({
      code: "revoked",
    });
    expect(await authority.authorize(token, { op: "read", target: "path:/ws/a", args })).toMatchObject({
      allowed: true,
    });
    const [entry] = await store.revocations.list(T0);
    expect(entry).toMatchObject({ reason: null, until: T0 + HOUR });
  });

  it("refuses to revoke something that is not a grant id, and needs a store", async () => {
    const { authority, keys } = setup();
    await expect(authority.revoke("not an id!")).rejects.toThrowErrorMatchingInlineSnapshot(
      `[ToolgateError: cannot revoke "not an id!": expected a grant id such as cap_3q2Xn0u8mB1Kc9dZ (toolgate cap inspect TOKEN shows it) or a whole tg1. token]`,
    );
    await expect(createCapabilityAuthority({ keys }).revoke("cap_x")).rejects.toThrow(/revocation needs a store/);
  });
});

describe("budget", () => {
  it("is spent only when every other check passes, leaf budget first, and runs out exactly", async () => {
    const { authority, now, store } = setup();
    const root = authority.issue({ rights: ["read"], objects: ["path:/ws"], budget: 10, ttl_ms: HOUR });
    const child = attenuate(root, { budget: 4 }, { now });
    const [, childId] = (await authority.inspect(child)).grant!.chain_ids as [string, string];
    // The budgets of the child's chain, leaf first: each spent under its own derived key.
    const [childBudget, rootBudget] = (await authority.inspect(child)).budgets.map((b) => b.key) as [string, string];
    expect(await authority.authorize(child, { op: "write", target: "path:/ws/a", cost: 3 })).toMatchObject({
      code: "right_missing",
    });
    expect(await store.budgets.spent(childBudget)).toBe(0);
    expect(await authority.authorize(child, { op: "read", target: "path:/ws/a", cost: 3 })).toMatchObject({
      allowed: true,
      remaining_budget: 1,
    });
    expect(await authority.authorize(child, { op: "read", target: "path:/ws/a", cost: 2 })).toEqual({
      allowed: false,
      code: "budget_exhausted",
      reason: "the call costs 2; the capability's budget has 1 of 4 left",
      grant_id: childId,
    });
    // The child's exhaustion did not touch the parent's budget, which its siblings share.
    expect(await store.budgets.spent(rootBudget)).toBe(3);
    expect(await authority.authorize(root, { op: "read", target: "path:/ws/a", cost: 7 })).toMatchObject({
      allowed: true,
      remaining_budget: 0,
    });
    expect(await authority.authorize(child, { op: "read", target: "path:/ws/a", cost: 1 })).toMatchObject({
      code: "budget_exhausted",
      reason: "the call costs 1; the capability's budget has 0 of 10 left",
    });
  });

  it("concurrent spenders in one process never exceed the budget", async () => {
    const { authority } = setup();
    const root = authority.issue({ rights: ["read"], objects: ["path:/ws"], budget: 25, ttl_ms: HOUR });
    const decisions = await Promise.all(
      Array.from({ length: 60 }, () => authority.authorize(root, { op: "read", target: "path:/ws/a" })),
    );
    expect(decisions.filter((d) => d.allowed)).toHaveLength(25);
  });

  it("a budget without a store is an operator error, not a silent allow", async () => {
    const { authority, keys } = setup();
    const root = authority.issue({ rights: ["read"], objects: ["path:/ws"], budget: 5, ttl_ms: HOUR });
    const bare = createCapabilityAuthority({ keys, now: () => T0 });
    await expect(bare.authorize(root, { op: "read", target: "path:/ws/a" })).rejects.toThrow(
      /bounded by a budget, which needs a store/,
    );
  });
});

describe("issue", () => {
  it("refuses grants without expiry, in the past, or with an unknown kid", () => {
    const { authority } = setup();
    expect(() => authority.issue({ rights: ["read"], objects: ["path:/ws"] })).toThrowErrorMatchingInlineSnapshot(
      `[ToolgateError: invalid grant: a grant needs an expiry; give expires_at (epoch ms) or ttl_ms, e.g. ttl_ms: 3600000 for one hour]`,
    );
    expect(() => authority.issue({ rights: ["read"], objects: ["path:/ws"], expires_at: T0 - 1 })).toThrow(
      /is not in the future/,
    );
    expect(() => authority.issue({ kid: "k7", rights: ["read"], objects: ["path:/ws"], ttl_ms: 1 })).toThrow(
      /cannot issue with kid "k7": not in the key ring \(kids: k1, k2\)/,
    );
    expect(() => authority.issue({ rights: [], objects: ["path:/ws"], ttl_ms: 1 })).toThrow(
      /rights must be a non-empty list/,
    );
    expect(() => authority.issue({ rights: ["read"], objects: ["path:/ws"], ttl_ms: 1, max_cost: -1 })).toThrow(
      /predicate.max_cost must be a finite number ≥ 0; received -1/,
    );
    expect(() => authority.issue({ rights: ["read"], objects: ["path:/ws"], ttl_ms: 1, expires_at: T0 + 5 })).toThrow(
      /not both/,
    );
  });

  it("inspect reports malformed, bad signature and expiry without throwing", async () => {
    const { authority, token, clock } = setup();
    expect(await authority.inspect("nope")).toMatchObject({ status: "malformed", blocks: [], grant: null });
    expect(await authority.inspect(token.slice(0, -1) + (token.endsWith("A") ? "Q" : "A"))).toMatchObject({
      status: "bad_signature",
    });
    clock.now = T0 + 2 * HOUR;
    expect(await authority.inspect(token)).toMatchObject({ status: "expired", grant: { rights: ["read", "write"] } });
  });
});
