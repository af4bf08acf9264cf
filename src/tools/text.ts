/** Text helpers shared by file_view and file_edit: versions, binary detection, lines. */
import { createHash } from "node:crypto";

/** The version of a file: SHA-256 of its bytes, lowercase hex (what expected_version compares). */
export function contentVersion(bytes: Buffer | string): string {
  return createHash("sha256").update(bytes).digest("hex");
}

/** Offset of the first NUL byte in the first 8 KiB (git's heuristic for binary), or -1. */
export function binaryMarker(bytes: Buffer): number {
  return bytes.subarray(0, 8192).indexOf(0);
}

/** Occurrences of `needle` in `text` (indexOf loop: no arrays on a 10 MB file). */
function count(text: string, needle: string): number {
  let n = 0;
  for (let i = text.indexOf(needle); i !== -1; i = text.indexOf(needle, i + needle.length)) n++;
  return n;
}

/** Line endings of a text: CRLF when every line break is CRLF, LF when none is, else mixed. */
export function lineEndings(text: string): "LF" | "CRLF" | "mixed" | "none" {
  const breaks = count(text, "\n");
  if (breaks === 0) return "none";
  const crlf = count(text, "\r\n");
  return crlf === 0 ? "LF" : crlf === breaks ? "CRLF" : "mixed";
}

/** Lines as an editor numbers them: a final line break ends the last line rather than starting one. */
export function lineCount(text: string): number {
  if (text.length === 0) return 0;
  return count(text, "\n") + (text.endsWith("\n") ? 0 : 1);
}

/**
 * Up to `max` lines starting at 1-based line `first`, without "\r\n"/"\n"; `max` may be
 * Infinity. Scans only as far as needed, so a window of a 10 MB file costs one pass to `first`.
 */
export function linesFrom(text: string, first: number, max: number): string[] {
  let at = 0;
  for (let line = 1; line < first && at !== -1; line++) {
    at = text.indexOf("\n", at);
    at = at === -1 ? -1 : at + 1;
  }
  return linesFromOffset(text, at, max);
}

/** Up to `max` lines starting at character offset `at` (-1: none), as `linesFrom`. */
export function linesFromOffset(text: string, at: number, max: number): string[] {
  const out: string[] = [];
  while (at !== -1 && at < text.length && out.length < max) {
    const end = text.indexOf("\n", at);
    const line = text.slice(at, end === -1 ? text.length : end);
    out.push(line.endsWith("\r") ? line.slice(0, -1) : line);
    at = end === -1 ? -1 : end + 1;
  }
  return out;
}

/** Every line of a text (see `linesFrom`). */
export function splitLines(text: string): string[] {
  return linesFrom(text, 1, Infinity);
}

/** `cat -n` style rendering of lines starting at 1-based `first`. */
export function numbered(lines: string[], first: number): string {
  const width = String(first + lines.length - 1).length;
  return lines.map((l, i) => `${String(first + i).padStart(width)}\t${l}`).join("\n");
}

/** "1 more line", "2 more lines": a count with its noun in the right number. */
export function plural(n: number, one: string, many = `${one}s`): string {
  return `${n} ${n === 1 ? one : many}`;
}
