/**
 * Reads `rg --json` output in bounded memory and linear time, whatever the lines are. Each event
 * is one line (JSON escapes every newline inside a string), so the reader only looks for newline
 * bytes: an event up to `lineBytes` is collected in parts and joined once, then parsed; a longer
 * one (a match on a very long line: its whole text is in the event) is never held whole — its
 * first JSON tokens are read in a streaming way, each string kept to a short head, and the rest
 * is skipped to the next newline. Only match events inside the requested page are parsed at all;
 * the others are counted.
 */
import { cut, LongEvent } from "./grep-long-event.js";
import type { Match } from "./grep-match.js";

export type { Match } from "./grep-match.js";

export interface ReaderOptions {
  /** Index of the first match to keep (the page's cursor) and how many to keep. */
  first: number;
  count: number;
  /** Matches counted before the reader says to stop ripgrep. */
  maxMatches: number;
  /** Bytes of one event held whole; a longer event is streamed. */
  lineBytes: number;
  /** Characters of a line shown around its match. */
  textChars: number;
}

const MATCH_PREFIX = Buffer.from('{"type":"match"');
const BEGIN_PREFIX = Buffer.from('{"type":"begin"');
const NEWLINE = 0x0a;

export class RgEventReader {
  /** Match events seen (at most maxMatches + 1). */
  matches = 0;
  /** Files with a match seen so far (ripgrep's begin events). */
  files = 0;
  readonly kept: Match[] = [];
  /** True once more than maxMatches matches were seen: stop ripgrep. */
  stopped = false;
  /** The most bytes of one event held at once (parts waiting for their newline, or a long event's string heads). */
  peakBytes = 0;
  private parts: Buffer[] = [];
  private partBytes = 0;
  private long: LongEvent | null = null;
  /** In a long event that is not kept: skip to its end. */
  private skipping = false;

  constructor(private readonly o: ReaderOptions) {}

  push(chunk: Buffer): void {
    let pos = 0;
    while (pos < chunk.length && !this.stopped) {
      const nl = chunk.indexOf(NEWLINE, pos);
      const end = nl === -1 ? chunk.length : nl;
      const piece = chunk.subarray(pos, end);
      if (this.long) {
        this.long.feed(piece);
        this.peakBytes = Math.max(this.peakBytes, this.long.heldBytes());
      } else if (!this.skipping) this.collect(piece);
      if (nl === -1) return;
      this.finishEvent();
      pos = nl + 1;
    }
  }

  /** The stream ended: an event without a final newline still counts. */
  end(): void {
    if (this.partBytes > 0 || this.long) this.finishEvent();
  }

  private collect(piece: Buffer): void {
    if (piece.length === 0) return;
    this.parts.push(piece);
    this.partBytes += piece.length;
    this.peakBytes = Math.max(this.peakBytes, this.partBytes);
    if (this.partBytes <= this.o.lineBytes) return;
    // Too long to hold: decide from its start whether it is a match at all, then stream or skip the rest.
    const head = Buffer.concat(this.parts);
    this.parts = [];
    this.partBytes = 0;
    if (!head.subarray(0, MATCH_PREFIX.length).equals(MATCH_PREFIX)) {
      if (head.subarray(0, BEGIN_PREFIX.length).equals(BEGIN_PREFIX)) this.files++;
      this.skipping = true;
      return;
    }
    const index = this.countMatch();
    if (index === null || !this.inPage(index)) {
      this.skipping = true;
      return;
    }
    this.long = new LongEvent();
    this.long.feed(head);
  }

  private finishEvent(): void {
    if (this.long) {
      const m = this.long.result(this.o.textChars);
      if (m) this.kept.push(m);
      this.long = null;
    } else if (this.skipping) {
      this.skipping = false;
    } else if (this.partBytes > 0) {
      const line = this.parts.length === 1 ? this.parts[0]! : Buffer.concat(this.parts);
      if (line.subarray(0, MATCH_PREFIX.length).equals(MATCH_PREFIX)) {
        const index = this.countMatch();
        if (index !== null && this.inPage(index)) this.kept.push(parseMatch(line.toString("utf8"), this.o.textChars));
      } else if (line.subarray(0, BEGIN_PREFIX.length).equals(BEGIN_PREFIX)) this.files++;
    }
    this.parts = [];
    this.partBytes = 0;
  }

  /** Counts one match event; its index, or null once past the bound (then the reader stops). */
  private countMatch(): number | null {
    if (this.matches >= this.o.maxMatches) {
      this.stopped = true;
      return null;
    }
    return this.matches++;
  }

  private inPage(index: number): boolean {
    return index >= this.o.first && index < this.o.first + this.o.count;
  }
}

interface RgText {
  text?: string;
  bytes?: string;
}
interface RgMatch {
  data: { path: RgText; lines: RgText; line_number: number; submatches: { start: number }[] };
}

const asText = (t: RgText) => t.text ?? Buffer.from(t.bytes ?? "", "base64").toString("utf8");

/** One match event held whole. */
function parseMatch(json: string, textChars: number): Match {
  const { data } = JSON.parse(json) as RgMatch;
  const lineText = asText(data.lines).replace(/\r?\n$/, "");
  const byteStart = data.submatches[0]?.start ?? 0;
  // ripgrep reports byte offsets; the model counts characters.
  const column = Buffer.from(lineText, "utf8").subarray(0, byteStart).toString("utf8").length + 1;
  return { path: asText(data.path), line: data.line_number, column, text: cut(lineText, column, textChars) };
}
