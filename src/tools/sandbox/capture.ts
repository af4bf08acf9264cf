/**
 * Bounded capture of a stream (docs/observations.md, "Observation is a budget"): keeps the
 * first and the last bytes, counts what fell between, and renders the kept text with a marker
 * that says how much was cut, first to a byte bound while reading, then to a token bound.
 */
import { tokenEnds } from "../../observation/ends.js";
import { countTokens, decodeTokens } from "../../observation/tokens.js";

/** Keeps at most `limitBytes` of a stream: the first half and the last half. */
export class HeadTailCapture {
  private readonly head: Buffer[] = [];
  private headBytes = 0;
  private tail: Buffer = Buffer.alloc(0);
  /** Every byte the stream produced, kept or not. */
  total = 0;

  constructor(private readonly limitBytes: number) {}

  push(chunk: Buffer): void {
    this.total += chunk.length;
    const headRoom = Math.ceil(this.limitBytes / 2) - this.headBytes;
    if (headRoom > 0) {
      const taken = chunk.subarray(0, headRoom);
      this.head.push(taken);
      this.headBytes += taken.length;
      chunk = chunk.subarray(taken.length);
    }
    if (chunk.length === 0) return;
    const tailLimit = Math.floor(this.limitBytes / 2);
    this.tail = Buffer.concat([this.tail, chunk]);
    if (this.tail.length > tailLimit) this.tail = this.tail.subarray(this.tail.length - tailLimit);
  }

  /** The kept text and how many bytes were cut from the middle (0 when nothing was). */
  result(): { head: string; tail: string; omittedBytes: number } {
    const head = Buffer.concat(this.head);
    const omittedBytes = this.total - head.length - this.tail.length;
    if (omittedBytes === 0)
      return { head: Buffer.concat([head, this.tail]).toString("utf8"), tail: "", omittedBytes: 0 };
    return { head: head.toString("utf8"), tail: this.tail.toString("utf8"), omittedBytes };
  }
}

export interface BoundedText {
  text: string;
  /** Bytes of the original stream left out of `text` (0 when complete). */
  omitted_bytes: number;
  /** Tokens left out by the token bound (in addition to any bytes cut while reading). */
  omitted_tokens: number;
}

/**
 * Renders a capture within `maxTokens` (o200k), head and tail kept, with one marker line such
 * as `[… 48213 bytes cut from the middle of stdout …]` where anything was left out.
 */
export function boundCapture(capture: HeadTailCapture, maxTokens: number, stream: string): BoundedText {
  const { head, tail, omittedBytes } = capture.result();
  const headBudget = Math.ceil(maxTokens / 2);
  const tailBudget = maxTokens - headBudget;
  let keptHead: number[];
  let keptTail: number[];
  let tokens: number;
  // Only the ends a cut keeps are encoded (observation/ends.ts): a long head or tail of one
  // unbroken run costs the budget's worth of work, not the capture's.
  if (omittedBytes === 0) {
    const all = tokenEnds(head, headBudget, tailBudget);
    if (!all.estimated && all.total <= maxTokens) return { text: head, omitted_bytes: 0, omitted_tokens: 0 };
    [keptHead, keptTail, tokens] = [
      all.head.slice(0, headBudget),
      all.tail.slice(Math.max(0, all.tail.length - tailBudget)),
      all.total,
    ];
  } else {
    const h = tokenEnds(head, headBudget, 0);
    const t = tokenEnds(tail, 0, tailBudget);
    [keptHead, keptTail, tokens] = [
      h.head.slice(0, headBudget),
      t.tail.slice(Math.max(0, t.tail.length - tailBudget)),
      h.total + t.total,
    ];
  }
  const headText = decodeTokens(keptHead);
  const tailText = decodeTokens(keptTail);
  const omitted = capture.total - Buffer.byteLength(headText) - Buffer.byteLength(tailText);
  const marker = cutMarker(omitted, capture.total, stream);
  return {
    text: `${headText}${headText.endsWith("\n") ? "" : "\n"}${marker}\n${tailText}`,
    omitted_bytes: omitted,
    omitted_tokens: tokens - keptHead.length - keptTail.length,
  };
}

const cutMarker = (omitted: number, total: number, stream: string) =>
  `[… ${omitted} bytes cut from the middle of ${stream} (${total} bytes in all) …]`;

/** The most tokens a cut marker line takes (its numbers at their largest), which `boundCapture` adds to its bound. */
export const MARKER_TOKENS = countTokens(cutMarker(1e15, 1e15, "stdout")) + 2;

/**
 * Splits `total` tokens between two streams, markers included: a stream whose bytes fit in half
 * (so its tokens do, with no cut) takes what it needs and the other gets the rest. Returns each
 * stream's bound for `boundCapture` (marker excluded), at most `perStream`.
 */
export function shareTokens(
  a: HeadTailCapture,
  b: HeadTailCapture,
  total: number,
  perStream: number,
): [number, number] {
  const half = Math.floor(total / 2);
  const exact = (c: HeadTailCapture) => (c.total <= half ? countTokens(c.result().head) : null);
  const [na, nb] = [exact(a), exact(b)];
  const bound = (n: number) => Math.max(1, Math.min(perStream, n - MARKER_TOKENS));
  if (na !== null && nb !== null) return [Math.min(perStream, Math.max(na, 1)), Math.min(perStream, Math.max(nb, 1))];
  if (nb !== null) return [bound(total - nb), Math.max(nb, 1)];
  if (na !== null) return [Math.max(na, 1), bound(total - na)];
  return [bound(half), bound(total - half)];
}
