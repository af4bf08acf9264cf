/**
 * Forgery: any change to a token — one flipped bit anywhere, a dropped, reordered or swapped
 * block, a foreign tag, an unknown or wrong key — is rejected with the right code.
 */
import { describe, expect, it } from "vitest";
import { attenuate } from "../../src/capability/attenuate.js";
import { keyRingFromMap } from "../../src/capability/keys.js";
import { TOKEN_PREFIX } from "../../src/capability/token.js";
import { HOUR, KEY_K1, KEY_K2, testAuthority } from "./support.js";

const { authority, clock } = testAuthority();
const now = () => clock.now;
const root = authority.issue({ rights: ["read", "write"], objects: ["path:/ws"], max_cost: 10, ttl_ms: HOUR });
const child = attenuate(root, { rights: ["read"], objects: ["path:/ws/src"] }, { now });
const grandchild = attenuate(child, { max_cost: 2 }, { now });
const request = { op: "read", target: "path:/ws/src/a.ts", cost: 1 };

const segments = (t: string) => t.slice(TOKEN_PREFIX.length).split(".");
const join = (segs: string[]) => TOKEN_PREFIX + segs.join(".");

describe("every single-bit flip is rejected", () => {
  it("the untouched chain is allowed (so the flips below are what fail)", async () => {
    expect(await authority.authorize(grandchild, request)).toMatchObject({ allowed: true });
  });

  it("flipping each bit of a three-block token in turn never verifies", async () => {
    const bytes = Buffer.from(grandchild, "latin1");
    const tagStart = grandchild.lastIndexOf(".") + 1;
    const block0End = grandchild.indexOf(".", TOKEN_PREFIX.length);
    const seen = new Map<string, number>();
    for (let i = 0; i < bytes.length; i++) {
      for (let bit = 0; bit < 8; bit++) {
        const flipped = Buffer.from(bytes);
        flipped[i]! ^= 1 << bit;
        const decision = await authority.authorize(flipped.toString("latin1"), request);
        if (decision.allowed) throw new Error(`flipping bit ${bit} of byte ${i} was accepted`);
        seen.set(decision.code, (seen.get(decision.code) ?? 0) + 1);
        // Only block 0 carries the kid; a flip in the tag can never look like a key problem.
        if (decision.code === "unknown_kid") expect(i).toBeLessThan(block0End);
        if (i >= tagStart) expect(["malformed", "bad_signature"]).toContain(decision.code);
        expect(["malformed", "bad_signature", "unknown_kid"]).toContain(decision.code);
      }
    }
    expect(seen.get("bad_signature")! + seen.get("malformed")!).toBe(bytes.length * 8 - (seen.get("unknown_kid") ?? 0));
    expect(seen.get("bad_signature")).toBeGreaterThan(bytes.length); // most flips still parse: the tag is what rejects them
  });
});

describe("blocks cannot be dropped, reordered or swapped", () => {
  it("dropping a middle or the last block (keeping the tag) fails the signature", async () => {
    const s = segments(grandchild);
    expect(await authority.authorize(join([s[0]!, s[2]!, s[3]!]), request)).toMatchObject({
      allowed: false,
      code: "bad_signature",
    });
    expect(await authority.authorize(join([s[0]!, s[1]!, s[3]!]), request)).toMatchObject({
      allowed: false,
      code: "bad_signature",
    });
    // The holder of the grandchild cannot recover the child's tag, so it cannot shorten the chain.
    expect(await authority.authorize(join([s[0]!, s[3]!]), request)).toMatchObject({
      allowed: false,
      code: "bad_signature",
    });
  });

  it("reordering blocks fails (block 0 out of place is malformed; others fail the tag)", async () => {
    const s = segments(grandchild);
    expect(await authority.authorize(join([s[0]!, s[2]!, s[1]!, s[3]!]), request)).toMatchObject({
      allowed: false,
      code: "bad_signature",
    });
    const moved = await authority.authorize(join([s[1]!, s[0]!, s[2]!, s[3]!]), request);
    expect(moved).toMatchInlineSnapshot(`
      {
        "allowed": false,
        "code": "malformed",
        "reason": "the capability token does not parse: block 0.v must be 1; received nothing",
      }
    `);
  });

  it("swapping in a block or the tag from another token fails the signature", async () => {
    const sibling = attenuate(root, { rights: ["read"], objects: ["path:/ws"] }, { now });
    const s = segments(child);
    const o = segments(sibling);
    expect(await authority.authorize(join([s[0]!, o[1]!, s[2]!]), request)).toMatchObject({
      allowed: false,
      code: "bad_signature",
    });
    expect(await authority.authorize(join([s[0]!, s[1]!, o[2]!]), request)).toMatchObject({
      allowed: false,
      code: "bad_signature",
    });
    const other = authority.issue({ rights: ["read"], objects: ["path:/"], ttl_ms: HOUR });
    expect(await authority.authorize(join([segments(other)[0]!, s[1]!, s[2]!]), request)).toMatchInlineSnapshot(`
      {
        "allowed": false,
        "code": "bad_signature",
        "reason": "the capability's signature does not verify: it was altered or not issued by this runtime; present the token exactly as issued",
      }
    `);
  });
});

describe("keys: unknown kid, wrong key, rotation", () => {
  it("a kid this runtime does not hold is unknown_kid; the same kid with another key is bad_signature", async () => {
    const elsewhere = testAuthority({
      keys: keyRingFromMap({ k9: Buffer.alloc(32, 9).toString("base64") }, "other"),
    }).authority;
    const foreign = elsewhere.issue({ rights: ["read"], objects: ["path:/ws"], ttl_ms: HOUR });
    expect(await authority.authorize(foreign, request)).toMatchInlineSnapshot(`
      {
        "allowed": false,
        "code": "unknown_kid",
        "reason": "the capability is signed with key id "k9", which this runtime does not hold (rotated out?); ask for a new grant",
      }
    `);
    const impostor = testAuthority({
      keys: keyRingFromMap({ k1: Buffer.alloc(32, 1).toString("base64") }, "other"),
    }).authority;
    const forged = impostor.issue({ rights: ["read"], objects: ["path:/ws"], ttl_ms: HOUR });
    expect(await authority.authorize(forged, request)).toMatchObject({ allowed: false, code: "bad_signature" });
  });

  it("rotation: tokens of an old kid verify until the kid is removed", async () => {
    const withK2 = authority.issue({ kid: "k2", rights: ["read"], objects: ["path:/ws"], ttl_ms: HOUR });
    expect(await authority.authorize(withK2, request)).toMatchObject({ allowed: true });
    const rotated = testAuthority({
      keys: keyRingFromMap({ k2: KEY_K2, k3: Buffer.alloc(32, 3).toString("base64") }, "rotated"),
    }).authority;
    expect(await rotated.authorize(withK2, request)).toMatchObject({ allowed: true });
    expect(await rotated.authorize(root, request)).toMatchObject({ allowed: false, code: "unknown_kid" });
    expect(KEY_K1).not.toBe(KEY_K2);
  });
});

describe("malformed tokens name what does not parse", () => {
  it.each([
    ["", "the token must start with tg1. (format tg1.<block>….<tag>)"],
    ["tg2.abc.def", "the token must start with tg1. (format tg1.<block>….<tag>)"],
    ["tg1.abc", "the token must have at least one block and a tag (format tg1.<block>….<tag>)"],
    ["tg1.e30.AAAA", "the tag must be 32 bytes; received 3"],
    [`tg1.a+b.${"A".repeat(43)}`, "block 0 is not base64url (letters, digits, - and _ only)"],
    [`tg1.${Buffer.from("{").toString("base64url")}.${"A".repeat(43)}`, "block 0 is not JSON"],
    [
      `tg1.${Buffer.from('{"id":"x","v":1,"kid":"k1","rights":["read"],"objects":["path:/ws"],"exp":1,"scope":"all"}').toString("base64url")}.${"A".repeat(43)}`,
      'block 0.scope must be absent (unknown caveat: this runtime cannot enforce it); received "all"',
    ],
  ])("%s", async (token, message) => {
    expect(await authority.authorize(token, request)).toEqual({
      allowed: false,
      code: "malformed",
      reason: `the capability token does not parse: ${message}`,
    });
  });

  it("non-canonical base64 (unused trailing bits set) is refused rather than decoded to the same token", async () => {
    const tag = segments(root)[1]!;
    const last = tag.at(-1)!;
    const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    const tweaked = tag.slice(0, -1) + alphabet[alphabet.indexOf(last) ^ 1];
    expect(await authority.authorize(join([segments(root)[0]!, tweaked]), request)).toMatchObject({
      allowed: false,
      code: "malformed",
      reason: expect.stringContaining("not canonical base64url"),
    });
  });
});
