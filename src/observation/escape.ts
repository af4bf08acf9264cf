/**
 * Text an attacker may have chosen (a tool name a model proposed, a trajectory id a client sent,
 * a file name in the workspace) is shown by toolgate itself in terminals, elicitation prompts and
 * the gateway's own sentences. Shown raw, such text can drive the terminal (ESC sequences: clear
 * the screen, write the clipboard with OSC 52, conceal what follows), forge lines (a CR or LF
 * followed by a fake `arguments:` line) or reorder what a person reads (bidi overrides,
 * invisible characters). This module is the one place that decides which characters are unsafe
 * to show and how they are shown instead: as `\u{XXXX}`, visibly, with everything else unchanged.
 *
 * Unsafe: C0 and C1 controls and DEL (category Cc; a newline only when the caller does not keep
 * it), format characters (Cf: bidi embeddings, overrides and isolates, ALM, LRM/RLM, zero-width
 * space/joiners, word joiner, soft hyphen, BOM, tag characters), line and paragraph separators
 * (Zl, Zp), every other default-ignorable code point (Hangul fillers, variation selectors, the
 * combining grapheme joiner: they render as nothing) and lone surrogates.
 *
 * The result is for display: it does not escape the backslash, so it is not reversible.
 */

const UNSAFE = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\p{Default_Ignorable_Code_Point}\p{Cs}]/u;
const UNSAFE_ALL = new RegExp(UNSAFE.source, "gu");
const UNSAFE_BUT_NEWLINE = /(?!\n)[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\p{Default_Ignorable_Code_Point}\p{Cs}]/gu;
const UNSAFE_BUT_LAYOUT = /(?![\n\t])[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\p{Default_Ignorable_Code_Point}\p{Cs}]/gu;

/** How one unsafe character is shown: `\u{001B}`, `\u{202E}`, `\u{E0041}`. */
export function showCodePoint(char: string): string {
  return `\\u{${char.codePointAt(0)!.toString(16).toUpperCase().padStart(4, "0")}}`;
}

export interface EscapeOptions {
  /** Keep `\n` as a line break (a multi-line body the caller lays out); default false: shown as `\u{000A}`. */
  newlines?: boolean;
  /**
   * Keep `\t` too, with `newlines`: for quoted file text (a near-match the model must copy
   * exactly), where a tab is content and moves no cursor but the next column's.
   */
  tabs?: boolean;
}

/**
 * `text` with every unsafe character (see the module comment) shown as `\u{XXXX}`. Text without
 * one comes back as the same string.
 */
export function escapeUntrusted(text: string, options: EscapeOptions = {}): string {
  if (!UNSAFE.test(text)) return text;
  return text.replace(
    options.newlines ? (options.tabs ? UNSAFE_BUT_LAYOUT : UNSAFE_BUT_NEWLINE) : UNSAFE_ALL,
    showCodePoint,
  );
}

/** The first unsafe character of `text` and its index (UTF-16), or null: for refusing ids. */
export function firstUnsafe(text: string): { char: string; index: number } | null {
  const m = UNSAFE.exec(text);
  return m ? { char: m[0], index: m.index } : null;
}

/**
 * Why `value` cannot be an id, as the end of a sentence ("must not contain …; received …"), or
 * null when it has no unsafe character. Ids are printed in logs, terminals and prompts, where
 * such a character would hide or forge what a person reads.
 */
export function unsafeIdReason(value: string): string | null {
  const bad = firstUnsafe(value);
  if (!bad) return null;
  const shown = value.length > 60 ? `${escapeUntrusted(value.slice(0, 57))}…` : escapeUntrusted(value);
  return `must not contain control, bidi or invisible characters; received U+${bad.char.codePointAt(0)!.toString(16).toUpperCase().padStart(4, "0")} at index ${bad.index} in "${shown}"; use letters, digits and punctuation, e.g. a UUID`;
}

/**
 * JSON text that is safe to print: `JSON.stringify` escapes C0 controls but leaves DEL, C1,
 * bidi and invisible characters raw; here they become JSON `\uXXXX` escapes too, so the text
 * parses to the same value and shows nothing a terminal would act on.
 */
export function jsonForDisplay(value: unknown, indent?: number): string {
  const text = JSON.stringify(value, null, indent) ?? "null";
  if (!UNSAFE.test(text)) return text;
  return text.replace(UNSAFE_BUT_NEWLINE, (c) => {
    let out = "";
    for (let i = 0; i < c.length; i++) out += `\\u${c.charCodeAt(i).toString(16).padStart(4, "0")}`;
    return out;
  });
}

/**
 * A value someone else chose (a client's parameter, an upstream's name or URI) as a message shows
 * it: JSON, at most about `max` characters (a string cut before it is quoted, so it stays one
 * quoted string), with nothing in it a terminal would act on. A value nested deeper than
 * `JSON.stringify` goes is named as such, as is one JSON has no form for (a bigint, a cycle, from an
 * embedder: a wire's JSON has neither); `undefined` is "nothing".
 */
export function shownValue(value: unknown, max = 80): string {
  if (typeof value === "string")
    return escapeUntrusted(JSON.stringify(value.length > max ? `${value.slice(0, max - 3)}…` : value));
  let json: string;
  try {
    json = JSON.stringify(value) ?? "nothing";
  } catch (err) {
    return err instanceof RangeError ? "a value nested too deeply to show" : "a value JSON has no form for";
  }
  return escapeUntrusted(json.length > max ? `${json.slice(0, max - 3)}…` : json);
}
