/**
 * The tokens at both ends of a text, for cutting its middle out. A text that can be encoded
 * within one counting step's bounds (`STEP_LIMITS`: 128 K characters, of which 8 KB not
 * seen before) is encoded whole, so its figures are exact; a longer or costlier one (a proxied
 * 10 MB output) is encoded only as far as a cut can keep from each end, and the tokens of the
 * middle, which nobody reads, are estimated from those ends. The work is bounded by the budget,
 * not by the text.
 */
import { encodeTokens, encodeTokensUpTo, STEP_LIMITS } from "./tokens.js";

/**
 * The most characters read per token wanted from an end. o200k's longest token is 128 bytes and
 * ordinary text averages about 4 characters a token; past 32 an end keeps fewer tokens than it
 * could (the cut is then deeper than needed), never more.
 */
export const CHARS_PER_TOKEN_READ = 32;

/** Tokens kept beyond what a cut needs from the tail, so a seam at the window's start stays out of it. */
const TAIL_MARGIN = 8;

export interface TextEnds {
  /** The first tokens of the text (at least `need` when it has that many). */
  head: number[];
  /** The last tokens of the text (the same array as `head` when the whole text was encoded). */
  tail: number[];
  /** Tokens in the whole text. */
  total: number;
  /** True when `total` is estimated: the middle was never encoded. */
  estimated: boolean;
}

/**
 * Tokens at both ends of `text`: at least `need` from the start and `tailNeed` from the end when
 * the text has them (a cut keeps more of its head than of its tail).
 */
export function tokenEnds(text: string, need: number, tailNeed = need): TextEnds {
  const maxChars = need * CHARS_PER_TOKEN_READ;
  // The whole text when one step can read it: exact figures. A text longer than a step reads
  // cannot be, so only what the cut keeps is read.
  const whole = text.length <= STEP_LIMITS.chars;
  const head = encodeTokensUpTo(text, whole ? STEP_LIMITS : { tokens: need, chars: maxChars });
  if (head.end === text.length) return { head: head.ids, tail: head.ids, total: head.ids.length, estimated: false };
  if (whole && head.ids.length < need && head.end < maxChars) {
    // A large budget keeps more than one step reads: read on, in proportion to the budget.
    const more = encodeTokensUpTo(text.slice(head.end), { tokens: need - head.ids.length, chars: maxChars - head.end });
    for (const id of more.ids) head.ids.push(id);
    head.end += more.end;
    if (head.end === text.length) return { head: head.ids, tail: head.ids, total: head.ids.length, estimated: false };
  }
  // A walk stops at a piece boundary of the whole text, so the rest encodes as it does in place.
  const rest = text.slice(head.end);
  // The tail's window starts at what the head's rate says `tailNeed` tokens take (CJK: half a
  // character a token; English: four), and doubles if that was too little.
  const perToken = head.end / Math.max(1, head.ids.length);
  const tail = suffixTokens(
    rest,
    tailNeed + TAIL_MARGIN,
    Math.ceil(tailNeed * perToken * 1.25) + 64,
    Math.max(1024, tailNeed * CHARS_PER_TOKEN_READ),
  );
  if (tail.start === 0)
    return { head: head.ids, tail: tail.ids, total: head.ids.length + tail.ids.length, estimated: false };
  const readChars = head.end + (rest.length - tail.start);
  const rate = (head.ids.length + tail.ids.length) / readChars;
  return {
    head: head.ids,
    tail: tail.ids,
    total: head.ids.length + tail.ids.length + Math.ceil(tail.start * rate),
    estimated: true,
  };
}

/**
 * Tokens of a suffix of `text` holding at least `need` tokens (or `maxChars` characters, or the
 * whole text), found by doubling a window from the end, `firstWidth` wide at first; `start` is
 * where the window begins.
 */
function suffixTokens(
  text: string,
  need: number,
  firstWidth: number,
  maxChars: number,
): { ids: number[]; start: number } {
  let width = Math.min(text.length, firstWidth, maxChars);
  for (;;) {
    let start = text.length - width;
    // Never start on the second half of a surrogate pair.
    if (start > 0 && isLowSurrogate(text.charCodeAt(start))) start++;
    const ids = encodeTokens(text.slice(start));
    if (ids.length >= need || start === 0 || width >= maxChars) return { ids, start };
    width = Math.min(text.length, maxChars, width * 2);
  }
}

const isLowSurrogate = (c: number) => c >= 0xdc00 && c <= 0xdfff;
