/**
 * docs/authority.md, "Attenuation": attenuation refuses to widen any component of C = (R, O, P, E) and
 * allows narrowing; verification enforces the intersection even for a hand-made wider block.
 */
import { describe, expect, it } from "vitest";
import { attenuate, AttenuationError } from "../../src/capability/attenuate.js";
import { nextTag } from "../../src/capability/chain.js";
import { blockBytes, encodeToken, parseToken } from "../../src/capability/token.js";
import type { NarrowerInput } from "../../src/capability/input.js";
import { HOUR, T0, testAuthority } from "./support.js";

const { authority, clock } = testAuthority();
const parent = authority.issue({
  rights: ["read", "write"],
  objects: ["path:/ws", "host:*.example.com"],
  max_cost: 10,
  budget: 100,
  args: [
    { arg: "amount", max: 50 },
    { arg: "amount", min: 1 },
    { arg: "currency", oneOf: ["usd", "eur"] },
  ],
  ttl_ms: HOUR,
});
const now = () => clock.now;

function refusal(narrower: NarrowerInput): { component: string; message: string } {
  try {
    attenuate(parent, narrower, { now });
  } catch (err) {
    if (err instanceof AttenuationError) return { component: err.component, message: err.message };
    throw err;
  }
  throw new Error("attenuation was allowed");
}

describe("attenuate refuses any widened component (R ⊆, O ⊑, P ⇒, E ≤)", () => {
  it("R: a right the parent lacks", () => {
    expect(refusal({ rights: ["read", "execute"] })).toMatchInlineSnapshot(`
      {
        "component": "rights",
        "message": "attenuation may only narrow a capability: rights execute are not held by the parent (it holds read,write)",
      }
    `);
  });

  it("O: an object outside, a sibling prefix, a traversal, a wider host", () => {
    expect(refusal({ objects: ["path:/etc"] })).toMatchInlineSnapshot(`
      {
        "component": "objects",
        "message": "attenuation may only narrow a capability: object path:/etc is not within the parent's objects (host:*.example.com,path:/ws)",
      }
    `);
    expect(refusal({ objects: ["path:/ws2"] }).component).toBe("objects");
    expect(refusal({ objects: ["path:/ws/../etc"] }).component).toBe("objects");
    expect(refusal({ objects: ["path:/"] }).component).toBe("objects");
    expect(refusal({ objects: ["host:example.com"] }).component).toBe("objects");
    expect(refusal({ objects: ["host:api.example.com.evil.net"] }).component).toBe("objects");
  });

  it("P: a higher cost ceiling, a larger budget, a looser argument bound", () => {
    expect(refusal({ max_cost: 11 })).toMatchInlineSnapshot(`
      {
        "component": "max_cost",
        "message": "attenuation may only narrow a capability: max_cost 11 is above the parent's 10",
      }
    `);
    expect(refusal({ budget: 101 })).toMatchInlineSnapshot(`
      {
        "component": "budget",
        "message": "attenuation may only narrow a capability: budget 101 is above the parent's 100",
      }
    `);
    expect(refusal({ args: [{ arg: "amount", max: 51 }] }).message).toMatch(
      /amount ≤ 51 is wider than the parent's amount ≤ 50/,
    );
    expect(refusal({ args: [{ arg: "amount", min: 0 }] }).message).toMatch(
      /amount ≥ 0 is wider than the parent's amount ≥ 1/,
    );
    expect(refusal({ args: [{ arg: "currency", oneOf: ["usd", "gbp"] }] })).toMatchInlineSnapshot(`
      {
        "component": "args",
        "message": "attenuation may only narrow a capability: bound currency oneOf ["usd","gbp"] adds ["gbp"], outside the parent's currency one of ["usd","eur"]",
      }
    `);
  });

  it("P: listed values outside the parent's range are refused; values inside narrow", async () => {
    expect(refusal({ args: [{ arg: "amount", oneOf: [5, 500] }] }).message).toBe(
      "attenuation may only narrow a capability: bound amount oneOf [5,500] adds [500], outside the parent's amount ≥ 1, amount ≤ 50",
    );
    expect(refusal({ args: [{ arg: "amount", oneOf: ["5"] }] }).component).toBe("args");
    const child = attenuate(parent, { args: [{ arg: "amount", oneOf: [5, 10] }] }, { now });
    const ask = (amount: number) =>
      authority.authorize(child, { op: "read", target: "path:/ws/a", args: { amount, currency: "usd" } });
    expect(await ask(10)).toMatchObject({ allowed: true });
    expect(await ask(11)).toMatchObject({
      allowed: false,
      code: "arg_out_of_bounds",
      reason: "argument amount = 11 is not allowed; the grant allows amount ≥ 1, amount ≤ 50, amount one of [5,10]",
    });
  });

  it("E: a later expiry, and any child of an expired parent", () => {
    expect(refusal({ expires_at: T0 + HOUR + 1 })).toMatchInlineSnapshot(`
      {
        "component": "expiry",
        "message": "attenuation may only narrow a capability: expiry 2026-01-01T01:00:00.001Z is after the parent's 2026-01-01T01:00:00.000Z",
      }
    `);
    expect(refusal({ ttl_ms: 2 * HOUR }).component).toBe("expiry");
    const later = () => T0 + 2 * HOUR;
    expect(() => attenuate(parent, { rights: ["read"] }, { now: later })).toThrow(
      /the parent expired at 2026-01-01T01:00:00.000Z/,
    );
  });

  it("refuses a malformed narrowing with invalid_grant, naming the field", () => {
    expect(() => attenuate(parent, { rights: ["Read"] }, { now })).toThrowErrorMatchingInlineSnapshot(
      `[ToolgateError: invalid grant: rights entry must be a lower-case right such as read, write, execute or connect; received "Read"]`,
    );
    expect(() => attenuate(parent, { objects: ["/ws"] }, { now })).toThrow(/has no known kind/);
    expect(() => attenuate(parent, { scope: "x" } as NarrowerInput, { now })).toThrow(/unknown field scope/);
  });
});

describe("attenuate allows narrowing, offline, and the child verifies", () => {
  it("narrows every component at once and the effective grant is the intersection", async () => {
    const child = attenuate(
      parent,
      {
        rights: ["read"],
        objects: ["path:/ws/src", "host:api.example.com"],
        max_cost: 2,
        budget: 5,
        args: [
          { arg: "amount", max: 20 },
          { arg: "currency", oneOf: ["usd"] },
        ],
        ttl_ms: 600_000,
      },
      { now },
    );
    const inspected = await authority.inspect(child);
    expect(inspected.status).toBe("valid");
    expect(inspected.grant).toMatchObject({
      rights: ["read"],
      objects: ["host:api.example.com", "path:/ws/src"],
      max_cost: 2,
      args: [
        { arg: "amount", max: 20, min: 1 },
        { arg: "currency", oneOf: ["usd"] },
      ],
      expires_at: T0 + 600_000,
    });
    expect(inspected.grant!.budgets.map((b) => b.limit)).toEqual([5, 100]);
  });

  it("an empty narrowing makes a separately revocable child with the same reach", async () => {
    const child = attenuate(parent, {}, { now });
    const p = parseToken(parent).grant;
    const c = parseToken(child).grant;
    expect(c.chain_ids).toEqual([...p.chain_ids, c.id]);
    expect((await authority.inspect(child)).status).toBe("valid");
  });

  it("the authority's attenuate refuses a token that does not verify", () => {
    const forged = parent.slice(0, -2) + (parent.endsWith("AA") ? "AQ" : "AA");
    expect(() => authority.attenuate(forged, { rights: ["read"] })).toThrow(/cannot attenuate/);
  });
});

describe("verification intersects every block: a hand-made wider block widens nothing", () => {
  it("a block appended without the attenuate checks cannot add a right, an object, cost or time", async () => {
    const narrow = attenuate(
      parent,
      { rights: ["read"], objects: ["path:/ws/src"], max_cost: 2, ttl_ms: 60_000 },
      { now },
    );
    const p = parseToken(narrow);
    // What a malicious holder could do: append a block claiming everything, with a valid tag.
    const wide = blockBytes({
      id: "cap_wide",
      rights: ["read", "write", "execute"],
      objects: ["path:/"],
      pred: { max_cost: 1e9 },
      exp: T0 + 100 * HOUR,
    });
    const token = encodeToken([...p.bytes, wide], nextTag(p.tag, wide));
    expect((await authority.inspect(token)).status).toBe("valid");
    const ask = (op: string, target: string, cost = 1) =>
      authority.authorize(token, { op, target, cost, args: { amount: 5, currency: "usd" } });
    expect(await ask("read", "path:/ws/src/a")).toMatchObject({ allowed: true });
    expect(await ask("write", "path:/ws/src/a")).toMatchObject({ allowed: false, code: "right_missing" });
    expect(await ask("read", "path:/etc/passwd")).toMatchObject({ allowed: false, code: "object_outside" });
    expect(await ask("read", "path:/ws/other")).toMatchObject({ allowed: false, code: "object_outside" });
    expect(await ask("read", "path:/ws/src/a", 3)).toMatchObject({ allowed: false, code: "cost_over" });
    clock.now = T0 + 2 * 60_000;
    expect(await ask("read", "path:/ws/src/a")).toMatchObject({ allowed: false, code: "expired" });
    clock.now = T0;
  });
});
