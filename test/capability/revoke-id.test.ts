import { describe, expect, it } from "vitest";
import { revokeGrant } from "../../src/capability/revoke.js";
import { createMemoryStore } from "../../src/idempotency/stores/memory.js";
import { T0 } from "./support.js";

// A mistyped id must not be stored as a revocation that protects nothing while the command
// reports success: every grant id toolgate issues is cap_ and 16 URL-safe characters.
describe("revokeGrant's id", () => {
  const input = { reason: null, until: null, now: T0 };

  it("refuses an id that no toolgate grant can have", async () => {
    const store = createMemoryStore();
    for (const id of ["bogus", "cap_x", "cap_3q2Xn0u8mB1Kc9d", "cap_3q2Xn0u8mB1Kc9dZZ", "g1"]) {
      await expect(revokeGrant(store, id, input), id).rejects.toThrow(
        /expected a grant id such as cap_3q2Xn0u8mB1Kc9dZ/,
      );
    }
    expect(await store.revocations.list(T0)).toEqual([]);
  });

  it("revokes a well-formed grant id", async () => {
    const store = createMemoryStore();
    await revokeGrant(store, "cap_3q2Xn0u8mB1Kc9dZ", input);
    expect(await store.revocations.firstRevoked(["cap_3q2Xn0u8mB1Kc9dZ"], T0)).toBe("cap_3q2Xn0u8mB1Kc9dZ");
  });
});
