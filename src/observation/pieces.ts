/**
 * The pieces a text is byte-pair-encoded in, each at most `MAX_PIECE_LENGTH` long.
 *
 * An encoder splits text into pieces with its regex and byte-pair-encodes each piece on its own,
 * in time quadratic in the piece's length: one unbroken run (100,000 dots, a long word, a CJK
 * paragraph without punctuation) took seconds. Here the pieces are found once, in order (ASCII
 * o200k text by hand, `o200k-ascii.ts`; anything else with the encoder's own regex, one match
 * at a time on a window of the text), and a piece longer than the bound is cut every
 * `MAX_PIECE_LENGTH` characters, so the work is linear in the text whatever it holds, and no
 * scan reads a long run further than the piece it is cutting.
 *
 * A chunk boundary forces a token boundary the encoder would not have made, so a text with a
 * piece longer than the bound may count differently from the whole-piece encoding: measured on
 * millions of random long runs, between 2 fewer and 2 more tokens per cut, 0.17 more on average
 * (test/observation/tokens.test.ts checks the bound). Ordinary text (words, numbers, code,
 * separator lines, indentation) has no piece that long, and its count is exact.
 */
import { createRequire } from "node:module";
import { isAscii, pieceEnd } from "./o200k-ascii.js";

/**
 * The longest text handed to the encoder at once, in UTF-16 code units. Twice o200k's longest
 * token (128 bytes), so a chunk still holds whole long tokens, and small enough that one chunk
 * encodes in well under a millisecond.
 */
export const MAX_PIECE_LENGTH = 256;

/** The encodings toolgate counts with: o200k (GPT-4o family, the default) and cl100k. */
export type TokenizerName = "o200k" | "cl100k";

const require = createRequire(import.meta.url);
const { O200K_TOKEN_SPLIT_REGEX, CL100K_TOKEN_SPLIT_REGEX } = require("gpt-tokenizer/cjs/encodingParams/constants") as {
  O200K_TOKEN_SPLIT_REGEX: RegExp;
  CL100K_TOKEN_SPLIT_REGEX: RegExp;
};
// Own sticky copies: each match must start where the previous one ended.
const SPLIT: Record<TokenizerName, RegExp> = {
  o200k: new RegExp(O200K_TOKEN_SPLIT_REGEX.source, "uy"),
  cl100k: new RegExp(CL100K_TOKEN_SPLIT_REGEX.source, "uy"),
};

/**
 * Calls `each` with every piece of `text` in order (long pieces in chunks); the pieces
 * concatenate to `text`. `each` returns true to stop early. Where a piece starts depends only on
 * the text from there on, so the pieces seen so far are exactly the first pieces of the whole
 * text, and a walk over `text.slice(end)` goes on with exactly the pieces that followed.
 * `reach` promises that `each` stops the walk before a piece starting at or after it.
 * Returns the offset reached (`text.length` when not stopped).
 */
export function forEachPiece(
  text: string,
  tokenizer: TokenizerName,
  each: (piece: string) => boolean | void,
  reach = text.length,
): number {
  let at = 0;
  if (tokenizer === "o200k") {
    // A piece that starts before `reach` ends within MAX_PIECE_LENGTH and is decided by at most
    // 3 characters after it: only that far need be ASCII for the hand-written cut, however long
    // the text. A walk that goes on past it anyway continues with the regex, which agrees.
    const whole = reach >= text.length - MAX_PIECE_LENGTH - LOOKAHEAD;
    const ascii = isAscii(whole ? text : text.slice(0, reach + MAX_PIECE_LENGTH + LOOKAHEAD))
      ? whole
        ? text.length
        : reach
      : 0;
    while (at < ascii) {
      const end = pieceEnd(text, at, MAX_PIECE_LENGTH);
      if (each(text.slice(at, end)) === true) return end;
      at = end;
    }
  }
  const re = SPLIT[tokenizer];
  while (at < text.length) {
    // The regex runs on a window, so one run of megabytes is never scanned whole. A match that
    // starts the window and ends well before its end is the match in place (the regex looks at
    // most a few characters ahead); one that reaches near the end is a long run, cut at the bound.
    const window = text.slice(at, at + WINDOW);
    re.lastIndex = 0;
    const m = re.exec(window);
    let length = m === null ? 0 : m[0].length;
    // No alternative matched here: hand on one character, so that no text is ever lost.
    if (length === 0) length = wholeCharsIn(text, at, 1);
    else if (length > WINDOW - LOOKAHEAD && at + window.length < text.length)
      length = wholeCharsIn(text, at, MAX_PIECE_LENGTH);
    const stopped = emit(text, at, at + length, each);
    if (stopped !== -1) return stopped;
    at += length;
  }
  return text.length;
}

/** Characters the regex sees at once, and how far past a match's end it may have looked. */
const WINDOW = 1024;
const LOOKAHEAD = 8;

/**
 * The length of `text.slice(at, at + n)` (at most up to `bound`), one shorter when that would
 * end between the halves of a surrogate pair (one longer when `n` is 1: the pair whole).
 */
function wholeCharsIn(text: string, at: number, n: number, bound = text.length): number {
  const end = Math.min(bound, at + n);
  if (end < bound && isHighSurrogate(text.charCodeAt(end - 1)) && isLowSurrogate(text.charCodeAt(end)))
    return n === 1 ? 2 : end - at - 1;
  return end - at;
}

/** Hands on `text[start, end)`, in chunks when it is longer than the bound: -1, or the offset reached when `each`
 * stopped. */
function emit(text: string, start: number, end: number, each: (piece: string) => boolean | void): number {
  if (end - start <= MAX_PIECE_LENGTH) return each(text.slice(start, end)) === true ? end : -1;
  for (let i = start; i < end;) {
    // Never between the two halves of a surrogate pair: each chunk is whole characters.
    const stop = i + wholeCharsIn(text, i, MAX_PIECE_LENGTH, end);
    if (each(text.slice(i, stop)) === true) return stop;
    i = stop;
  }
  return -1;
}

const isHighSurrogate = (c: number) => c >= 0xd800 && c <= 0xdbff;
const isLowSurrogate = (c: number) => c >= 0xdc00 && c <= 0xdfff;
