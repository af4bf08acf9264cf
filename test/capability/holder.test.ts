import { describe, expect, it } from "vitest";
import { createCapabilityAuthority } from "../../src/capability/authority.js";
import { keyRingFromMap } from "../../src/capability/keys.js";
import { HOUR, KEY_K2, T0, testAuthority } from "./support.js";

// Who holds a capability, for bounds shared among a grant's holders: the issued grant, by a
// one-way key no holder can choose, and nobody for a token that does not verify now.
describe("authority.holder", () => {
  it("is the issued grant for the token and everything attenuated from it, and another grant for another issue", async () => {
    const { authority } = testAuthority();
    const token = authority.issue({ rights: ["read"], objects: ["tool:note_read"], ttl_ms: HOUR });
    const narrower = authority.attenuate(authority.attenuate(token, { rights: ["read"] }), { ttl_ms: HOUR / 2 });
    const holder = await authority.holder(token);
    expect(holder).toEqual({
      key: expect.stringMatching(/^hld_[A-Za-z0-9_-]{32}$/),
      grant: expect.stringMatching(/^cap_/),
    });
    expect(await authority.holder(narrower)).toEqual(holder);
    const other = await authority.holder(
      authority.issue({ rights: ["read"], objects: ["tool:note_read"], ttl_ms: HOUR }),
    );
    expect(other!.key).not.toBe(holder!.key);
    expect(JSON.stringify(holder)).not.toContain(token.split(".").at(-1));
  });

  it("is null for a token that is malformed, forged, signed by another key, expired or revoked", async () => {
    const { authority, clock } = testAuthority();
    const token = authority.issue({ rights: ["read"], objects: ["tool:note_read"], ttl_ms: HOUR });
    const foreign = createCapabilityAuthority({
      keys: keyRingFromMap({ k1: KEY_K2 }, "other keys"),
      now: () => T0,
    }).issue({ rights: ["read"], objects: ["tool:note_read"], ttl_ms: HOUR });
    const forged = token.slice(0, -4) + (token.endsWith("AAAA") ? "BBBB" : "AAAA");
    for (const bad of ["", "garbage", "tg1.x", forged, foreign]) expect(await authority.holder(bad), bad).toBeNull();
    const revoked = authority.issue({ rights: ["read"], objects: ["tool:note_read"], ttl_ms: HOUR });
    await authority.revoke(revoked);
    expect(await authority.holder(revoked)).toBeNull();
    expect(await authority.holder(token)).not.toBeNull();
    clock.now += HOUR + 1;
    expect(await authority.holder(token)).toBeNull();
  });
});
