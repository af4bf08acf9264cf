/**
 * The token's wire form: one compact, URL-safe string with a version prefix,
 *
 *     tg1.<block 0>.<block 1>…<block n>.<tag>
 *
 * each block the base64url (no padding) of its RFC 8785 canonical JSON, and `tag` the base64url
 * of the final 32-byte chain tag (chain.ts). Only the final tag travels, as in macaroons: a
 * holder can append a block (offline attenuation) but cannot drop or reorder one, because that
 * would need an earlier tag, which HMAC does not reveal.
 *
 * Decoding is strict: base64url must be canonical (re-encoding gives the same text), so no two
 * strings decode to the same token and any changed character either fails to parse or fails
 * the tag. Parsing costs JSON and object normalisation, so parsed tokens are cached by string;
 * the cache holds no verification result — the tag is checked on every call.
 */
import { canonicalize } from "../canonical/jcs.js";
import { checkBlock, MalformedError, type Block, type ParsedBlock } from "./block.js";
import { effectiveGrant, type EffectiveGrant } from "./grant.js";
import { memoize } from "../core/lru.js";

export const TOKEN_PREFIX = "tg1.";
export const TAG_BYTES = 32;
/** Bounds on what one token may make the verifier do. */
export const MAX_TOKEN_CHARS = 16_384;
export const MAX_BLOCKS = 16;

export interface ParsedToken {
  text: string;
  /** Exact bytes of each block as transported: what the tags cover. */
  bytes: Buffer[];
  blocks: ParsedBlock[];
  tag: Buffer;
  grant: EffectiveGrant;
}

const B64URL = /^[A-Za-z0-9_-]+$/;

function decodeSegment(seg: string, what: string): Buffer {
  if (!B64URL.test(seg)) throw new MalformedError(`${what} is not base64url (letters, digits, - and _ only)`);
  const buf = Buffer.from(seg, "base64url");
  if (buf.toString("base64url") !== seg) throw new MalformedError(`${what} is not canonical base64url`);
  return buf;
}

/** Encodes one block as it travels and is signed: canonical JSON bytes. */
export function blockBytes(block: Block): Buffer {
  return Buffer.from(canonicalize(block), "utf8");
}

export function encodeToken(bytes: readonly Buffer[], tag: Buffer): string {
  return TOKEN_PREFIX + bytes.map((b) => b.toString("base64url")).join(".") + "." + tag.toString("base64url");
}

/** Parses a token without verifying it. Throws MalformedError naming what does not parse. */
export function decodeToken(text: string): ParsedToken {
  if (typeof text !== "string") throw new MalformedError(`the token must be a string; received ${typeof text}`);
  if (text.length > MAX_TOKEN_CHARS)
    throw new MalformedError(`the token is ${text.length} characters, above the limit of ${MAX_TOKEN_CHARS}`);
  if (!text.startsWith(TOKEN_PREFIX))
    throw new MalformedError(`the token must start with ${TOKEN_PREFIX} (format tg1.<block>….<tag>)`);
  const segs = text.slice(TOKEN_PREFIX.length).split(".");
  if (segs.length < 2)
    throw new MalformedError("the token must have at least one block and a tag (format tg1.<block>….<tag>)");
  if (segs.length - 1 > MAX_BLOCKS)
    throw new MalformedError(`the token has ${segs.length - 1} blocks, above the limit of ${MAX_BLOCKS}`);
  const tag = decodeSegment(segs.pop()!, "the tag");
  if (tag.length !== TAG_BYTES) throw new MalformedError(`the tag must be ${TAG_BYTES} bytes; received ${tag.length}`);
  const bytes: Buffer[] = [];
  const blocks: ParsedBlock[] = [];
  const ids = new Set<string>();
  segs.forEach((seg, i) => {
    const b = decodeSegment(seg, `block ${i}`);
    let json: unknown;
    try {
      json = JSON.parse(b.toString("utf8"));
    } catch {
      throw new MalformedError(`block ${i} is not JSON`);
    }
    const parsed = checkBlock(json, i);
    if (ids.has(parsed.block.id))
      throw new MalformedError(`block ${i}.id repeats the id ${parsed.block.id} of an earlier block`);
    ids.add(parsed.block.id);
    bytes.push(b);
    blocks.push(parsed);
  });
  return { text, bytes, blocks, tag, grant: effectiveGrant(blocks) };
}

/** `decodeToken` memoised by the exact string, up to 1024 tokens (parse once, verify every time). */
export const parseToken: (text: string) => ParsedToken = memoize(1024, decodeToken);
