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

/** Line endings of a text: CRLF when every line break is CRLF, LF when none is, else mixed. */
export function lineEndings(text: string): "LF" | "CRLF" | "mixed" | "none" {
  const breaks = (text.match(/\n/g) ?? []).length;
  if (breaks === 0) return "none";
  const crlf = (text.match(/\r\n/g) ?? []).length;
  return crlf === 0 ? "LF" : crlf === breaks ? "CRLF" : "mixed";
}

/**
 * Splits a text into lines as an editor numbers them: a final line break ends the last line
 * rather than starting an empty one; "\r" before "\n" is not part of the line.
 */
export function splitLines(text: string): string[] {
  if (text.length === 0) return [];
  const lines = text.split("\n");
  if (lines[lines.length - 1] === "") lines.pop();
  return lines.map((l) => (l.endsWith("\r") ? l.slice(0, -1) : l));
}

/** 1-based line number of character offset `index` in `text`. */
export function lineAt(text: string, index: number): number {
  let line = 1;
  for (let i = text.indexOf("\n"); i !== -1 && i < index; i = text.indexOf("\n", i + 1)) line++;
  return line;
}

/** `cat -n` style rendering of lines starting at 1-based `first`. */
export function numbered(lines: string[], first: number): string {
  const width = String(first + lines.length - 1).length;
  return lines.map((l, i) => `${String(first + i).padStart(width)}\t${l}`).join("\n");
}
