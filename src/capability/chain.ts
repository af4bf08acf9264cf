/**
 * The tag chain, as in macaroons: `tag0 = HMAC-SHA256(root_key[kid], block0)`,
 * `tagN = HMAC-SHA256(tag(N-1), blockN)`. Only the final tag travels (token.ts). Verifying
 * recomputes the chain from the root key over the exact transported bytes and compares the
 * final tag in constant time, so every block is covered and none can be dropped, reordered,
 * swapped in from another token or edited.
 */
import { createHash, createHmac, timingSafeEqual, type KeyObject } from "node:crypto";

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

/** Every tag of the chain from the root key: `tags[i]` covers blocks 0…i. */
export function chainTags(rootKey: KeyObject, blocks: readonly Buffer[]): Buffer[] {
  const tags = [nextTag(rootKey, blocks[0]!)];
  for (let i = 1; i < blocks.length; i++) tags.push(nextTag(tags[i - 1]!, blocks[i]!));
  return tags;
}

/** Whether `tag` is the chain's final tag under `rootKey` (constant-time comparison). */
export function verifyChain(rootKey: KeyObject, blocks: readonly Buffer[], tag: Buffer): boolean {
  return verifiedTags(rootKey, blocks, tag) !== null;
}

/** The chain's tags when `tag` is its final tag under `rootKey` (constant-time comparison), else null. */
export function verifiedTags(rootKey: KeyObject, blocks: readonly Buffer[], tag: Buffer): Buffer[] | null {
  const tags = chainTags(rootKey, blocks);
  const expected = tags[tags.length - 1]!;
  return expected.length === tag.length && timingSafeEqual(expected, tag) ? tags : null;
}

/**
 * One-way names derived from a verified chain's tags. A tag is the chain's secret (with the
 * blocks, which are not secret, it is the token), so it is never stored or shown; a SHA-256 of
 * it under a purpose label is: whoever reads it cannot recover the tag, and nobody without the
 * tag, which only the root key or the chain's holder can compute, can produce it.
 *
 * - `budgetKey(tags[i])`: where the budget stated by block i is spent. Every token extending
 *   that block shares it (a child's calls count against its parent's budget), and no block
 *   a holder writes, whatever id it carries, can name another grant's budget.
 * - `chainFingerprint(tags)`: this exact chain, for binding an approval to the capability that asked.
 * - `holderKey(tags[0])`: the issued grant a chain descends from, the same for every token
 *   attenuated from it, for sharing a bound among its holders (HTTP sessions).
 */
export function budgetKey(tag: Buffer): string {
  return `bud_${createHash("sha256").update("toolgate budget\0").update(tag).digest("base64url").slice(0, 32)}`;
}

export function chainFingerprint(tags: readonly Buffer[]): string {
  return createHash("sha256")
    .update("toolgate chain\0")
    .update(tags[tags.length - 1]!)
    .digest("base64url")
    .slice(0, 22);
}

export function holderKey(rootTag: Buffer): string {
  return `hld_${createHash("sha256").update("toolgate holder\0").update(rootTag).digest("base64url").slice(0, 32)}`;
}
