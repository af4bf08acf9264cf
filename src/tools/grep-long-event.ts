/**
 * One match event too long to hold (a match on a very long line), read as it streams: its first
 * JSON tokens, each string kept to a short head, in ripgrep's fixed field order (grep-events.ts).
 */
import { isAscii } from "node:buffer";
import type { Match } from "./grep-match.js";

/** A long line is cut to a window that starts a little before the match. */
export function cut(text: string, column: number, max: number): string {
  if (text.length <= max) return text;
  const start = Math.max(0, Math.min(column - 1 - Math.floor(max / 4), text.length - max));
  return `${start > 0 ? "…" : ""}${text.slice(start, start + max)}${start + max < text.length ? "…" : ""}`;
}

/** Bytes kept of each JSON string of a long event (the path, the line's head, the match's head). */
const STRING_HEAD = 64 * 1024;
/** Tokens of a match event up to the first submatch's end offset (see LongEvent.result). */
const TOKENS_NEEDED = 21;

interface StrToken {
  kind: "str";
  head: Buffer[];
  headBytes: number;
  /** Bytes of the JSON string's content, escapes as written. */
  bytes: number;
  /** Escapes in it, and how many of them are \uXXXX (one byte each of the line: ripgrep escapes only control characters
   * so). */
  escapes: number;
  unicode: number;
  ascii: boolean;
  /** The last bytes of its content, to tell a line terminator (`\n`, `\r\n` as written). */
  tail: string;
}
interface NumToken {
  kind: "num";
  text: string;
}

/**
 * The first tokens of one long match event, read as they stream: strings (heads kept, lengths
 * counted, whether all ASCII) and numbers. A string's end is found with native searches for `"`
 * and `\`, so a line of any length costs a few passes over its bytes, never a copy of it.
 */
export class LongEvent {
  private readonly tokens: (StrToken | NumToken)[] = [];
  private state: "out" | "str" | "num" = "out";
  private escaped = false;
  feed(buf: Buffer): void {
    let i = 0;
    while (i < buf.length && this.tokens.length <= TOKENS_NEEDED) {
      if (this.state === "str") {
        const t = this.tokens[this.tokens.length - 1] as StrToken;
        if (this.escaped) {
          if (buf[i] === 0x75) t.unicode++;
          this.take(t, buf.subarray(i, i + 1));
          this.escaped = false;
          i++;
          continue;
        }
        const q = buf.indexOf(0x22, i);
        const b = buf.indexOf(0x5c, i);
        const stop = q === -1 ? b : b === -1 ? q : Math.min(q, b);
        if (stop === -1) {
          this.take(t, buf.subarray(i));
          return;
        }
        this.take(t, buf.subarray(i, stop));
        if (stop === b) {
          this.take(t, buf.subarray(stop, stop + 1));
          t.escapes++;
          this.escaped = true;
        } else this.state = "out";
        i = stop + 1;
      } else if (this.state === "num") {
        const c = buf[i]!;
        if ((c >= 0x30 && c <= 0x39) || c === 0x2d) {
          (this.tokens[this.tokens.length - 1] as NumToken).text += String.fromCharCode(c);
          i++;
        } else this.state = "out";
      } else {
        const c = buf[i]!;
        if (c === 0x22) {
          this.tokens.push({
            kind: "str",
            head: [],
            headBytes: 0,
            bytes: 0,
            escapes: 0,
            unicode: 0,
            ascii: true,
            tail: "",
          });
          this.state = "str";
        } else if ((c >= 0x30 && c <= 0x39) || c === 0x2d) {
          this.tokens.push({ kind: "num", text: "" });
          this.state = "num";
          continue;
        }
        i++;
      }
    }
  }

  heldBytes(): number {
    return this.tokens.reduce((n, t) => n + (t.kind === "str" ? t.headBytes : t.text.length), 0);
  }

  private take(t: StrToken, part: Buffer): void {
    if (part.length === 0) return;
    t.bytes += part.length;
    if (t.ascii && !isAscii(part)) t.ascii = false;
    t.tail = (t.tail + part.subarray(Math.max(0, part.length - 4)).toString("latin1")).slice(-4);
    if (t.headBytes < STRING_HEAD) {
      const kept = part.subarray(0, STRING_HEAD - t.headBytes);
      t.head.push(Buffer.from(kept));
      t.headBytes += kept.length;
    }
  }

  /**
   * The match, from ripgrep's fixed field order: "type" "match" "data" "path" {"text"|"bytes": P}
   * "lines" {…: L} "line_number" N "absolute_offset" A "submatches" [{"match" {…: M} "start" S "end" E} …].
   * Null when the event does not have that shape (then it is counted, not shown).
   */
  result(textChars: number): Match | null {
    const t = this.tokens;
    const key = (i: number, ...names: string[]) =>
      t[i]?.kind === "str" && names.includes(decode(t[i] as StrToken).value);
    const ok =
      key(0, "type") &&
      key(2, "data") &&
      key(3, "path") &&
      key(4, "text", "bytes") &&
      key(6, "lines") &&
      key(7, "text", "bytes") &&
      key(9, "line_number") &&
      t[10]?.kind === "num";
    if (!ok || t[5]?.kind !== "str" || t[8]?.kind !== "str") return null;
    const path = decodeField(t[5] as StrToken, key(4, "bytes"));
    const line = decodeField(t[8] as StrToken, key(7, "bytes"));
    const lineNumber = Number((t[10] as NumToken).text);
    const hasSub =
      key(13, "submatches") && key(14, "match") && t[16]?.kind === "str" && key(17, "start") && t[18]?.kind === "num";
    const start = hasSub ? Number((t[18] as NumToken).text) : 0;
    const matched = hasSub ? decodeField(t[16] as StrToken, key(15, "bytes")) : { value: "", complete: true };
    const lineToken = t[8] as StrToken;
    const headBytes = Buffer.byteLength(line.value);
    let column: number;
    let text: string;
    if (start < headBytes) {
      // The match starts within the head kept: count its column exactly and cut a window around it.
      column = Buffer.from(line.value, "utf8").subarray(0, start).toString("utf8").length + 1;
      text = cut(line.value, column, textChars);
      if (!text.endsWith("…")) text += "…";
    } else {
      // An ASCII line has one character per byte; otherwise the column counts bytes (said in the text).
      column = start + 1;
      // Only the match itself is known this far into the line: it is shown, cut on both sides.
      text = `…${matched.value.slice(0, textChars)}…`;
    }
    const unit = lineToken.ascii || start < headBytes ? "" : "; column counted in bytes";
    return {
      path: path.value,
      line: lineNumber,
      column,
      text: `${text} [line of ${rawLength(lineToken)} bytes cut${unit}]`,
    };
  }
}

/** The line's length in bytes as ripgrep read it, without its terminator: the JSON string's length less what its
 * escapes add. */
const rawLength = (t: StrToken) =>
  t.bytes - t.escapes - 4 * t.unicode - (t.tail.endsWith("\\r\\n") ? 2 : t.tail.endsWith("\\n") ? 1 : 0);

/** JSON string content of a token's head, decoded; a cut inside an escape or a UTF-8 sequence is dropped. */
function decode(t: StrToken): { value: string; complete: boolean } {
  let raw = Buffer.concat(t.head)
    .toString("utf8")
    .replace(/\uFFFD+$/, "");
  const complete = t.headBytes === t.bytes;
  if (!complete)
    raw = raw.replace(/\\(u[0-9a-fA-F]{0,3})?$/, (m, _u, offset: number) =>
      precededByOddBackslashes(raw, offset) ? m : "",
    );
  try {
    return { value: JSON.parse(`"${raw}"`) as string, complete };
  } catch {
    return { value: raw, complete };
  }
}

function precededByOddBackslashes(s: string, offset: number): boolean {
  let n = 0;
  for (let i = offset - 1; i >= 0 && s[i] === "\\"; i--) n++;
  return n % 2 === 1;
}

/** A "text" field decoded, or a "bytes" (base64) field decoded to UTF-8. */
function decodeField(t: StrToken, base64: boolean): { value: string; complete: boolean } {
  const d = decode(t);
  if (!base64) return d;
  const usable = d.value.slice(0, d.value.length - (d.value.length % 4));
  return {
    value: Buffer.from(usable, "base64")
      .toString("utf8")
      .replace(/\uFFFD+$/, ""),
    complete: d.complete,
  };
}
