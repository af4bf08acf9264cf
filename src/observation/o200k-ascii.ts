/**
 * The o200k pre-tokenizer for ASCII text, by hand. o200k splits text into pieces with one large
 * Unicode regex and byte-pair-encodes each piece on its own, so a text's token count is the sum
 * of its pieces' counts. The regex (gpt-tokenizer's `O200K_TOKEN_SPLIT_REGEX`) is
 *
 *   1  [^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(contraction)?
 *   2  [^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(contraction)?
 *   3  \p{N}{1,3}
 *   4   ?[^\s\p{L}\p{N}]+[\r\n/]*
 *   5  \s*[\r\n]+
 *   6  \s+(?!\S)
 *   7  \s+
 *
 * with contraction = '(?:[sS]|[dD]|[mM]|[tT]|[lL][lL]|[vV][eE]|[rR][eE]). Restricted to ASCII
 * the classes are plain character ranges, and `pieceEnd` finds the same pieces without the
 * regex engine (test/observation/o200k-ascii.test.ts checks it against the regex itself).
 */

const isUpper = (c: number) => c >= 65 && c <= 90;
const isLower = (c: number) => c >= 97 && c <= 122;
const isLetter = (c: number) => isUpper(c) || isLower(c);
const isDigit = (c: number) => c >= 48 && c <= 57;
const isNewline = (c: number) => c === 10 || c === 13;
/** JavaScript's `\s` within ASCII: tab, line feed, vertical tab, form feed, carriage return, space. */
const isSpace = (c: number) => c === 32 || (c >= 9 && c <= 13);
/** `[^\s\p{L}\p{N}]` within ASCII. */
const isOther = (c: number) => !isSpace(c) && !isLetter(c) && !isDigit(c);

/** True when every code unit of `text` is ASCII (the only input `pieceEnd` accepts). */
export function isAscii(text: string): boolean {
  // Any other code unit takes more than one UTF-8 byte (a lone surrogate three), and the native
  // byte count is many times faster than a loop on long text.
  if (text.length > 64) return Buffer.byteLength(text, "utf8") === text.length;
  for (let i = 0; i < text.length; i++) if (text.charCodeAt(i) > 127) return false;
  return true;
}

/** End of an optional contraction (`'s`, `'ll`, …) at `i`; `i` itself when there is none. */
function contraction(s: string, i: number): number {
  if (s.charCodeAt(i) !== 39) return i;
  const a = s.charCodeAt(i + 1) | 32; // lower-cased; NaN | 32 = 32 past the end
  if (a === 115 || a === 100 || a === 109 || a === 116) return i + 2; // s d m t
  const b = s.charCodeAt(i + 2) | 32;
  if ((a === 108 && b === 108) || (a === 118 && b === 101) || (a === 114 && b === 101)) return i + 3; // ll ve re
  return i;
}

/** Alternatives 1 and 2 from `j` (after the optional prefix character), read no further than `limit`: the end, or -1.
 * */
function word(s: string, j: number, limit: number): number {
  let k = j;
  while (k < limit && isUpper(s.charCodeAt(k))) k++;
  const uppers = k - j;
  const lowerStart = k;
  while (k < limit && isLower(s.charCodeAt(k))) k++;
  if (k === limit) return k;
  // 1: uppercase run, then at least one lowercase; 2: at least one uppercase, then any lowercase.
  if (k > lowerStart || uppers > 0) {
    const end = contraction(s, k);
    return end <= limit ? end : k;
  }
  return -1;
}

/**
 * End (exclusive) of the o200k piece that starts at `i` in ASCII text `s` (`i < s.length`).
 * With `max`, a piece longer than `max` characters ends after `max` (the rest of the run is then
 * read as the pieces that start there): the scan never reads much past `i + max`, so one run of
 * megabytes is cut into bounded pieces in linear time.
 */
export function pieceEnd(s: string, i: number, max = Infinity): number {
  const n = s.length;
  const limit = Math.min(n, i + max);
  const c = s.charCodeAt(i);
  // 1 and 2: letters, after one optional character that is not a newline, letter or digit.
  if (isLetter(c)) return word(s, i, limit);
  if (!isNewline(c) && !isDigit(c) && isLetter(s.charCodeAt(i + 1))) return word(s, i + 1, limit);
  // 3: one to three digits.
  if (isDigit(c)) return isDigit(s.charCodeAt(i + 1)) ? (isDigit(s.charCodeAt(i + 2)) ? i + 3 : i + 2) : i + 1;
  // 4: an optional space, punctuation, then any line breaks and slashes.
  const p = c === 32 && isOther(s.charCodeAt(i + 1)) ? i + 1 : isOther(c) ? i : -1;
  if (p !== -1) {
    let k = p + 1;
    while (k < limit && isOther(s.charCodeAt(k))) k++;
    while (k < limit && (isNewline(s.charCodeAt(k)) || s.charCodeAt(k) === 47)) k++;
    return k;
  }
  // 5–7: a whitespace run. With a line break in it: up to and including its last line break;
  // otherwise the run, less its last character when something follows and the run is longer than one.
  let end = i;
  let lastNewline = -1;
  while (end < limit && isSpace(s.charCodeAt(end))) {
    if (isNewline(s.charCodeAt(end))) lastNewline = end;
    end++;
  }
  // A run that goes on past the bound: cut at the bound.
  if (end === limit && limit < n && isSpace(s.charCodeAt(limit))) return limit;
  if (lastNewline !== -1) return lastNewline + 1;
  if (end === n || end - i === 1) return end;
  return end - 1;
}
