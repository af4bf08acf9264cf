/**
 * The pieces a text is byte-pair-encoded in, each at most `MAX_PIECE_LENGTH` long.
 *
 * An encoder splits text into pieces with its regex and byte-pair-encodes each piece on its own,
 * in time quadratic in the piece's length: one unbroken run (100,000 dots, a long word, a CJK
 * paragraph without punctuation) took seconds. Here the pieces are found once, in order, over
 * the whole text (ASCII o200k text by hand, `o200k-ascii.ts`; anything else with the encoder's
 * own regex, one match at a time), and a piece longer than the bound is handed on in chunks of
 * `MAX_PIECE_LENGTH`, so the work is linear in the text whatever it holds.
 *
 * A chunk boundary forces a token boundary the encoder would not have made, so a text with a
 * piece longer than the bound may count differently from the whole-piece encoding: measured on
 * millions of random long runs, between 2 fewer and 2 more tokens per cut, 0.17 more on average
 * (test/observation/tokens.test.ts checks the bound). Ordinary text (words, numbers, code,
 * separator lines, indentation) has no piece that long, and its count is exact.
 */
import { createRequire } from "node:module";
import { isAscii, pieceEnd } from "./o200k-ascii.js";
import type { TokenizerName } from "./tokens.js";

/**
 * The longest text handed to the encoder at once, in UTF-16 code units. Twice o200k's longest
 * token (128 bytes), so a chunk still holds whole long tokens, and small enough that one chunk
 * encodes in well under a millisecond.
 */
export const MAX_PIECE_LENGTH = 256;

const require = createRequire(import.meta.url);
const { O200K_TOKEN_SPLIT_REGEX, CL100K_TOKEN_SPLIT_REGEX } = require("gpt-tokenizer/cjs/encodingParams/constants") as {
  O200K_TOKEN_SPLIT_REGEX: RegExp;
  CL100K_TOKEN_SPLIT_REGEX: RegExp;
};
// Own copies: `lastIndex` is state, and these walk one text at a time.
const SPLIT: Record<TokenizerName, RegExp> = {
  o200k: new RegExp(O200K_TOKEN_SPLIT_REGEX.source, "gu"),
  cl100k: new RegExp(CL100K_TOKEN_SPLIT_REGEX.source, "gu"),
};

/**
 * Calls `each` with every piece of `text` in order (long pieces in chunks); the pieces
 * concatenate to `text`. `each` returns true to stop early: the pieces seen so far are exactly
 * the first pieces of the whole text, so a prefix counted this way is counted as in place.
 * Returns the offset reached (`text.length` when not stopped).
 */
export function forEachPiece(text: string, tokenizer: TokenizerName, each: (piece: string) => boolean | void): number {
  if (tokenizer === "o200k" && isAscii(text)) {
    for (let i = 0; i < text.length; ) {
      const end = pieceEnd(text, i);
      const stopped = emit(text, i, end, each);
      if (stopped !== -1) return stopped;
      i = end;
    }
    return text.length;
  }
  const re = SPLIT[tokenizer];
  re.lastIndex = 0;
  let at = 0;
  try {
    for (let m = re.exec(text); m !== null; m = re.exec(text)) {
      // Every character starts some alternative, so matches are contiguous; a gap would still be
      // handed on, so that encoding never loses text.
      let stopped = m.index > at ? emit(text, at, m.index, each) : -1;
      const end = m.index + m[0].length;
      if (stopped === -1) stopped = emit(text, m.index, end, each);
      if (stopped !== -1) return stopped;
      at = end;
      if (m[0].length === 0) re.lastIndex++;
    }
    const stopped = at < text.length ? emit(text, at, text.length, each) : -1;
    return stopped === -1 ? text.length : stopped;
  } finally {
    re.lastIndex = 0;
  }
}

/** Hands on `text[start, end)`, in chunks when it is longer than the bound: -1, or the offset reached when `each` stopped. */
function emit(text: string, start: number, end: number, each: (piece: string) => boolean | void): number {
  if (end - start <= MAX_PIECE_LENGTH) return each(text.slice(start, end)) === true ? end : -1;
  for (let i = start; i < end; ) {
    let stop = Math.min(end, i + MAX_PIECE_LENGTH);
    // Never between the two halves of a surrogate pair: each chunk is whole characters.
    if (stop < end && isHighSurrogate(text.charCodeAt(stop - 1)) && isLowSurrogate(text.charCodeAt(stop))) stop--;
    if (each(text.slice(i, stop)) === true) return stop;
    i = stop;
  }
  return -1;
}

const isHighSurrogate = (c: number) => c >= 0xd800 && c <= 0xdbff;
const isLowSurrogate = (c: number) => c >= 0xdc00 && c <= 0xdfff;
