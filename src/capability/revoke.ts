/**
 * Revocation by grant id, in the same store as idempotency records. A child token carries every
 * ancestor's id in its chain, and `authorize` asks `store.revocations.firstRevoked(chain_ids)` in
 * one round trip, so revoking a grant revokes every grant attenuated from it, on the next call.
 */
import type { Store } from "../idempotency/store.js";
import { ToolgateError } from "../core/errors.js";

/** What `newGrantId` makes: `cap_` and 16 URL-safe characters. Anything else is a typo, not a grant. */
const ID = /^cap_[A-Za-z0-9_-]{16}$/;

/** Marks `id` revoked. `until` lets the store forget it after the grant would have expired anyway. */
export async function revokeGrant(
  store: Store,
  id: string,
  input: { reason: string | null; until: number | null; now: number },
): Promise<void> {
  if (typeof id !== "string" || !ID.test(id)) {
    throw new ToolgateError(
      "invalid_grant",
      `cannot revoke ${JSON.stringify(id)}: expected a grant id such as cap_3q2Xn0u8mB1Kc9dZ (toolgate cap inspect TOKEN shows it) or a whole tg1. token`,
    );
  }
  await store.revocations.revoke(id, input);
}
