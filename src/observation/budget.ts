/**
 * Observation budgets (docs/observations.md, "Observation is a budget"): a rendered
 * observation fits a token budget (o200k). What does not fit is cut at token boundaries, keeping
 * the head and the tail, and replaced by a marker that says how much was cut and how to get it.
 * A long text is encoded only near its ends (`ends.ts`): cutting 10 MB to 2,000 tokens reads
 * about as much as cutting 20 KB.
 */
import { CHARS_PER_TOKEN_READ, tokenEnds, type TextEnds } from "./ends.js";
import { countTokens, decodeTokens, encodeTokensUpTo } from "./tokens.js";

/** The gateway default when neither the tool nor the gateway sets one (2,000 tokens). */
export const DEFAULT_BUDGET_TOKENS = 2000;

/**
 * The smallest budget a gateway accepts: the frame of a cut observation (header, fence lines,
 * marker with its hint, continuation) takes about 150 tokens on its own.
 */
export const MIN_BUDGET_TOKENS = 200;

/** Result of fitting one text into a token budget. */
export interface Fitted {
  text: string;
  /** Tokens removed from the middle; 0 when the text fitted. Estimated when `estimated` is set. */
  omitted_tokens: number;
  /** Set when the text was too long to encode whole and `omitted_tokens` is an estimate (from the ends). */
  estimated?: true;
  /** Token count of `text` when it was computed (always when cut), else null: the caller counts lazily. */
  tokens: number | null;
  /** The text that was cut out (empty when nothing was), for a continuation to serve later. */
  removed: string;
}

/** Share of the kept tokens given to the head; the tail keeps the rest (exit codes, summaries, last lines). */
const HEAD_SHARE = 0.7;

/**
 * A cheap upper bound: a token encodes at least one UTF-8 byte, so a text of at most `budget`
 * bytes fits without running the tokenizer. This keeps small A0 observations off the encoder.
 */
export function surelyFits(text: string, budget: number): boolean {
  return text.length <= budget && Buffer.byteLength(text, "utf8") <= budget;
}

/**
 * Renders the line that replaces a cut middle: `omitted` tokens (an estimate when `estimated`),
 * and the lines removed when the cut fell on line boundaries.
 */
export type CutMarker = (omitted: number, cut: LineRange | null, estimated: boolean) => string;

/**
 * Cuts `text` to at most `budget` tokens, keeping head and tail. `marker` renders the line that
 * replaces the middle. The marker's own tokens count against the budget.
 */
export function fitText(text: string, budget: number, marker: CutMarker): Fitted {
  if (surelyFits(text, budget)) return { text, omitted_tokens: 0, tokens: null, removed: "" };
  // budget + 1 from the head decides whether the text fits; the tail keeps at most its share.
  const ends = tokenEnds(text, budget + 1, budget - Math.floor(budget * HEAD_SHARE));
  if (!ends.estimated && ends.total <= budget) return { text, omitted_tokens: 0, tokens: ends.total, removed: "" };

  // The marker's size depends on the numbers in it; measure it with the largest ones it can hold.
  const most = ends.total;
  const markerTokens = countTokens(marker(most, { first: most, last: most, total: most }, ends.estimated)) + 2;
  let keep = Math.max(0, budget - markerTokens);
  for (;;) {
    const cut = cutMiddle(text, ends, keep, marker);
    const n = countTokens(cut.text);
    // Token counts are not additive at the seams; shrink until the whole really fits.
    if (n <= budget || keep === 0) return { ...cut, tokens: n };
    keep = Math.max(0, keep - (n - budget));
  }
}

/** Lines removed by a cut, 1-based and inclusive, out of `total` lines in the uncut text. */
export interface LineRange {
  first: number;
  last: number;
  total: number;
}

function cutMiddle(text: string, ends: TextEnds, keep: number, marker: CutMarker): Omit<Fitted, "tokens"> {
  const headN = Math.min(Math.floor(keep * HEAD_SHARE), ends.head.length);
  const tailN = Math.min(keep - Math.floor(keep * HEAD_SHARE), ends.tail.length);
  // A token slice can end inside a character (decoded as U+FFFD): keep only what is really text.
  let head = exactPrefix(text, decodeTokens(ends.head.slice(0, headN)));
  let tail = tailN > 0 ? exactSuffix(text, decodeTokens(ends.tail.slice(ends.tail.length - tailN))) : "";
  // Prefer whole lines when a line break is close to the seam: a half line misleads more than a shorter head.
  const headBreak = head.lastIndexOf("\n");
  if (headBreak >= 0 && headBreak >= head.length * 0.6) head = head.slice(0, headBreak + 1);
  const tailBreak = tail.indexOf("\n");
  if (tailBreak >= 0 && tailBreak <= tail.length * 0.4) tail = tail.slice(tailBreak + 1);
  const omitted = Math.max(1, ends.total - countTokens(head) - countTokens(tail));
  const range = lineRange(text, head, tail);
  const line = marker(omitted, range, ends.estimated);
  const sep = head.length === 0 || head.endsWith("\n") ? "" : "\n";
  const after = tail.length === 0 ? "" : "\n";
  const removed = text.slice(head.length, text.length - tail.length);
  return {
    text: `${head}${sep}${line}${after}${tail}`,
    omitted_tokens: omitted,
    removed,
    ...(ends.estimated ? { estimated: true as const } : {}),
  };
}

/**
 * The first part of `text` within `budget` tokens, preferring to end on a line break, and the
 * rest: how a continuation pages through text in order.
 */
export function takeHead(text: string, budget: number): { head: string; rest: string } {
  if (surelyFits(text, budget)) return { head: text, rest: "" };
  // Only the page is encoded (its first tokens are exactly the text's), however long the rest.
  const { ids, end } = encodeTokensUpTo(text, { tokens: budget, chars: Math.max(4096, budget * CHARS_PER_TOKEN_READ) });
  if (end === text.length && ids.length <= budget) return { head: text, rest: "" };
  let head = exactPrefix(text, decodeTokens(ids.slice(0, Math.max(1, budget))));
  const br = head.lastIndexOf("\n");
  if (br >= head.length * 0.6) head = head.slice(0, br + 1);
  // Always make progress, even when the first token is part of a longer character.
  if (head.length === 0) head = text.slice(0, text.codePointAt(0)! > 0xffff ? 2 : 1);
  return { head, rest: text.slice(head.length) };
}

/** The longest prefix of `text` that `decoded` agrees with (drops a split character's U+FFFD). */
function exactPrefix(text: string, decoded: string): string {
  let i = 0;
  const n = Math.min(text.length, decoded.length);
  while (i < n && text.charCodeAt(i) === decoded.charCodeAt(i)) i++;
  // Never end between the two halves of a surrogate pair.
  if (i > 0 && isHighSurrogate(text.charCodeAt(i - 1))) i--;
  return text.slice(0, i);
}

/** The longest suffix of `text` that `decoded` agrees with. */
function exactSuffix(text: string, decoded: string): string {
  let i = 0;
  const n = Math.min(text.length, decoded.length);
  while (i < n && text.charCodeAt(text.length - 1 - i) === decoded.charCodeAt(decoded.length - 1 - i)) i++;
  if (i > 0 && isLowSurrogate(text.charCodeAt(text.length - i))) i--;
  return text.slice(text.length - i);
}

const isHighSurrogate = (c: number) => c >= 0xd800 && c <= 0xdbff;
const isLowSurrogate = (c: number) => c >= 0xdc00 && c <= 0xdfff;

/** Beyond this many lines a long text's cut is not given line numbers: counting them would cost more than the cut. */
const MAX_COUNTED_LINES = 500_000;

/** The cut lines when head ends and tail starts on a line boundary; null when a line was split (or there are too many
 * to count). */
function lineRange(text: string, head: string, tail: string): LineRange | null {
  const headWhole = head.length === 0 || head.endsWith("\n");
  const tailWhole = tail.length === 0 || text[text.length - tail.length - 1] === "\n";
  if (!headWhole || !tailWhole) return null;
  const total = countLines(text, MAX_COUNTED_LINES);
  if (total === null) return null;
  const headLines = head.length === 0 ? 0 : countLines(head)! - 1;
  const tailLines = tail.length === 0 ? 0 : countLines(tail)!;
  return { first: headLines + 1, last: total - tailLines, total };
}

/** Lines in `text` (line breaks + 1), or null past `max`. */
function countLines(text: string, max = Infinity): number | null {
  let n = 1;
  for (let i = text.indexOf("\n"); i !== -1; i = text.indexOf("\n", i + 1)) if (++n > max) return null;
  return n;
}
