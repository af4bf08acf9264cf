/**
 * Scans of a whole file's text that give the event loop back between slices, so a large file
 * (file_edit rewrites up to 16 MiB, file_view reads up to 64 MiB) never holds other calls up for
 * long: a search for old_str (slow in the worst case for a long repetitive needle), line
 * counts and line numbers, hashing.
 */
import { createHash } from "node:crypto";
import { linesFromOffset } from "./text.js";

/** Characters scanned between two yields: a few milliseconds of indexOf. */
export const SCAN_SLICE = 1 << 20;

export const yieldLoop = (): Promise<void> => new Promise((done) => setImmediate(done));

/**
 * Start offsets of the non-overlapping occurrences of `needle`, left to right, searched one
 * window at a time: each window reaches `needle.length - 1` past its slice, so a match starting
 * in the slice is found whole, and the loop yields after each window and every MATCHES_PER_YIELD.
 */
export async function occurrences(text: string, needle: string): Promise<number[]> {
  const found: number[] = [];
  let slice = 0;
  while (slice <= text.length - needle.length) {
    const window = text.slice(slice, slice + SCAN_SLICE + needle.length - 1);
    let next = found.length > 0 ? Math.max(0, found.at(-1)! + needle.length - slice) : 0;
    for (let at = window.indexOf(needle, next); at !== -1 && at < SCAN_SLICE; at = window.indexOf(needle, next)) {
      found.push(slice + at);
      next = at + needle.length;
      if (found.length % MATCHES_PER_YIELD === 0) await yieldLoop();
    }
    slice += SCAN_SLICE;
    // Small texts answer without a yield, as a plain indexOf would.
    if (slice <= text.length - needle.length) await yieldLoop();
  }
  return found;
}

/** Matches recorded between two yields when a window holds many. */
const MATCHES_PER_YIELD = 50_000;

/** 1-based line number of each of `offsets` (ascending) in `text`, in one pass. */
export async function lineNumbers(text: string, offsets: readonly number[]): Promise<number[]> {
  const lines: number[] = [];
  let line = 1;
  let scanned = 0;
  let nl = text.indexOf("\n");
  for (const offset of offsets) {
    while (nl !== -1 && nl < offset) {
      line++;
      const next = text.indexOf("\n", nl + 1);
      scanned += (next === -1 ? text.length : next) - nl;
      nl = next;
      if (scanned > SCAN_SLICE) {
        scanned = 0;
        await yieldLoop();
      }
    }
    lines.push(line);
  }
  return lines;
}

/** Bytes hashed between two yields. */
const BYTE_SLICE = 8 << 20;

/** `contentVersion` (SHA-256 hex of the bytes), a slice at a time. */
export async function versionOf(bytes: Buffer): Promise<string> {
  const hash = createHash("sha256");
  for (let at = 0; at < bytes.length; at += BYTE_SLICE) {
    hash.update(bytes.subarray(at, at + BYTE_SLICE));
    if (at + BYTE_SLICE < bytes.length) await yieldLoop();
  }
  return hash.digest("hex");
}

export interface LineStats {
  /** Lines as an editor numbers them (see text.ts `lineCount`). */
  count: number;
  /** CRLF when every line break is CRLF, LF when none is, else mixed; none without a break. */
  endings: "LF" | "CRLF" | "mixed" | "none";
}

/** A text as a string, or as its UTF-8 bytes (a line break is the byte 0x0A either way). */
type Text = string | Buffer;
const nextBreak = (t: Text, from: number) => (typeof t === "string" ? t.indexOf("\n", from) : t.indexOf(10, from));
const isReturn = (t: Text, i: number) => (typeof t === "string" ? t.charCodeAt(i) : t[i]) === 13;

/** `lineCount` and `lineEndings` of `text` in one pass. */
export async function lineStats(text: Text): Promise<LineStats> {
  let breaks = 0;
  let crlf = 0;
  let last = 0;
  for (let nl = nextBreak(text, 0); nl !== -1; nl = nextBreak(text, nl + 1)) {
    breaks++;
    if (nl > 0 && isReturn(text, nl - 1)) crlf++;
    if (nl - last > SCAN_SLICE) {
      last = nl;
      await yieldLoop();
    }
  }
  const count = text.length === 0 ? 0 : breaks + (nextBreak(text, text.length - 1) === -1 ? 1 : 0);
  const endings = breaks === 0 ? "none" : crlf === 0 ? "LF" : crlf === breaks ? "CRLF" : "mixed";
  return { count, endings };
}

/** Offset (characters, or bytes) where 1-based line `first` starts in `text`, or -1 past the end. */
export async function lineStart(text: Text, first: number): Promise<number> {
  let at = 0;
  let last = 0;
  for (let line = 1; line < first && at !== -1; line++) {
    at = nextBreak(text, at);
    at = at === -1 ? -1 : at + 1;
    if (at - last > SCAN_SLICE) {
      last = at;
      await yieldLoop();
    }
  }
  return at;
}

/**
 * Up to `max` lines of UTF-8 `bytes` from byte offset `at` (-1: none), decoded (invalid
 * sequences as U+FFFD; a BOM dropped only at the very start, as a whole-file decode would):
 * only the lines asked for are decoded, however large the file.
 */
export function decodeLines(bytes: Buffer, at: number, max: number): string[] {
  if (at === -1 || at >= bytes.length) return [];
  let end = at;
  for (let n = 0; n < max && end !== -1 && end < bytes.length; n++) {
    end = bytes.indexOf(10, end);
    end = end === -1 ? -1 : end + 1;
  }
  const text = new TextDecoder("utf-8", { ignoreBOM: at > 0 }).decode(
    bytes.subarray(at, end === -1 ? bytes.length : end),
  );
  return linesFromOffset(text, 0, max);
}
