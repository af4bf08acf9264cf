/**
 * The tag chain, as in macaroons: `tag0 = HMAC-SHA256(root_key[kid], block0)`,
 * `tagN = HMAC-SHA256(tag(N-1), blockN)`. Only the final tag travels (token.ts). Verifying
 * recomputes the chain from the root key over the exact transported bytes and compares the
 * final tag in constant time, so every block is covered and none can be dropped, reordered,
 * swapped in from another token or edited.
 */
import { createHmac, timingSafeEqual, type KeyObject } from "node:crypto";

/** Extends a chain by one block: the next tag. Needs only the previous tag, never the root key. */
export function nextTag(prev: Buffer | KeyObject, block: Buffer): Buffer {
  return createHmac("sha256", prev).update(block).digest();
}

/** The final tag of a chain from the root key. */
export function chainTag(rootKey: KeyObject, blocks: readonly Buffer[]): Buffer {
  let tag = nextTag(rootKey, blocks[0]!);
  for (let i = 1; i < blocks.length; i++) tag = nextTag(tag, blocks[i]!);
  return tag;
}

/** Whether `tag` is the chain's final tag under `rootKey` (constant-time comparison). */
export function verifyChain(rootKey: KeyObject, blocks: readonly Buffer[], tag: Buffer): boolean {
  const expected = chainTag(rootKey, blocks);
  return expected.length === tag.length && timingSafeEqual(expected, tag);
}
