/** Shared set-up for the capability tests: two fixed test keys and a settable clock. */
import { createCapabilityAuthority, type CapabilityAuthorityOptions } from "../../src/capability/authority.js";
import { keyRingFromMap } from "../../src/capability/keys.js";
import { createMemoryStore } from "../../src/idempotency/stores/memory.js";

/** Test-only keys (never used outside these tests). */
export const KEY_K1 = Buffer.alloc(32, 0x11).toString("base64");
export const KEY_K2 = Buffer.alloc(48, 0x22).toString("base64");

export const T0 = Date.UTC(2026, 0, 1);
export const HOUR = 3_600_000;

export function testAuthority(options: Partial<CapabilityAuthorityOptions> = {}) {
  const clock = { now: T0 };
  const keys = options.keys ?? keyRingFromMap({ k1: KEY_K1, k2: KEY_K2 }, "test keys", "k1");
  const store = options.store ?? createMemoryStore();
  const authority = createCapabilityAuthority({ now: () => clock.now, ...options, keys, store });
  return { authority, clock, keys, store };
}
