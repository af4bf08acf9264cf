/**
 * `toolgate/capability`: key rings, tokens read without a key, grant views and typed objects —
 * what `toolgate cap` is built from. The authority and `attenuate` are in the root. An explicit
 * list, documented in docs/api.md.
 */
export { KeyRing, keyRingFromMap, generateKey } from "../capability/keys.js";
export { parseToken, TOKEN_PREFIX } from "../capability/token.js";
export type { ParsedToken } from "../capability/token.js";
export { viewGrant, summariseGrant } from "../capability/grant.js";
export type { GrantView, EffectiveGrant } from "../capability/grant.js";
export { parseObject, ObjectError } from "../capability/objects.js";
export type { CapObject, ObjectKind } from "../capability/objects.js";
