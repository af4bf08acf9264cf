/**
 * A JSON Schema `pattern` (ECMA-262) as GBNF over a JSON string's contents, for `toGbnf`: the
 * pattern is read by schema/regex.ts and each construct becomes GBNF here.
 * Supported: patterns anchored at both ends (`^…$`) built from literals, escapes, `.`,
 * classes (ranges, negation, \d \w \s and their negations), groups (capturing, `(?:`),
 * alternation and the quantifiers * + ? {n} {n,} {n,m} (lazy forms match the same strings).
 * Characters are admitted in their plain JSON form (`"` as `\"`, `\` as `\\`, controls as
 * `\n` `\t` `\r` or `\u00XX`); a `\uXXXX` spelling of a printable character is not admitted.
 * Anything else — lookaround, backreferences, \b, Unicode properties, unanchored patterns, anchors inside, negated
 * shorthands inside a class, characters beyond the Basic Multilingual Plane in a class,
 * repetitions above 4096 — returns the reason it cannot be expressed.
 */
import {
  PatternReader,
  UnsupportedPattern,
  type Atom,
  type CharSet,
  type PatternBuilder,
  type Property,
  type Ranges,
} from "../../schema/regex.js";

const MAX_REPEAT = 4096;

/** A code point inside a GBNF class: letters and digits as themselves, the rest as \xHH or \uHHHH. */
const hex = (c: number) =>
  /[0-9A-Za-z]/.test(String.fromCodePoint(c))
    ? String.fromCodePoint(c)
    : c <= 0xff
      ? `\\x${c.toString(16).padStart(2, "0")}`
      : `\\u${c.toString(16).padStart(4, "0")}`;

/** True when `expr` is one unit a postfix operator can follow: a class, a literal or one parenthesised group. */
function isUnit(expr: string): boolean {
  if (/^\[[^\]]*\]$/.test(expr) || /^"(?:[^"\\]|\\.)*"$/.test(expr)) return true;
  if (!expr.startsWith("(")) return false;
  let depth = 0;
  for (let i = 0; i < expr.length; i++) {
    const c = expr[i];
    if (c === '"') {
      for (i++; i < expr.length && expr[i] !== '"'; i++) if (expr[i] === "\\") i++;
    } else if (c === "[") {
      for (i++; i < expr.length && expr[i] !== "]"; i++) if (expr[i] === "\\") i++;
    } else if (c === "(") depth++;
    else if (c === ")" && --depth === 0) return i === expr.length - 1;
  }
  return false;
}
const inRanges = (c: number, r: Ranges) => r.some(([a, b]) => c >= a && c <= b);

/** The JSON spelling of one code point as a GBNF literal (for ", \ and control characters). */
function escapedLiteral(c: number): string {
  const named: Record<number, string> = {
    0x22: '"',
    0x5c: "\\",
    0x0a: "n",
    0x09: "t",
    0x0d: "r",
    0x08: "b",
    0x0c: "f",
  };
  const body = named[c] !== undefined ? `\\${named[c]}` : `\\u${c.toString(16).padStart(4, "0")}`;
  return `"${body.replace(/\\/g, "\\\\").replace(/"/g, '\\"')}"`;
}

/** Code points that JSON must escape: they never appear raw inside a string. */
const MUST_ESCAPE: Ranges = [
  [0x00, 0x1f],
  [0x22, 0x22],
  [0x5c, 0x5c],
];

/** A character set as GBNF over JSON string contents. */
function setToGbnf(set: CharSet): string {
  const alts: string[] = [];
  // The raw part: the set minus what JSON escapes.
  const raw = set.negated
    ? `[^${[...set.ranges, ...MUST_ESCAPE].map(([a, b]) => (a === b ? hex(a) : `${hex(a)}-${hex(b)}`)).join("")}]`
    : null;
  if (raw) alts.push(raw);
  else {
    const parts: string[] = [];
    for (const [a, b] of set.ranges) {
      if (b > 0xffff) throw new UnsupportedPattern("a class with characters beyond U+FFFF");
      // Cut the must-escape code points out of [a, b].
      let lo = a;
      for (const [x, y] of MUST_ESCAPE) {
        if (y < lo || x > b) continue;
        if (x > lo) parts.push(lo === x - 1 ? hex(lo) : `${hex(lo)}-${hex(x - 1)}`);
        lo = Math.max(lo, y + 1);
      }
      if (lo <= b) parts.push(lo === b ? hex(lo) : `${hex(lo)}-${hex(b)}`);
    }
    if (parts.length > 0) alts.push(`[${parts.join("")}]`);
  }
  // The escaped part: each must-escape code point the set holds.
  for (const [x, y] of MUST_ESCAPE) {
    for (let c = x; c <= y; c++) if (inRanges(c, set.ranges) !== set.negated) alts.push(escapedLiteral(c));
  }
  if (alts.length === 0) throw new UnsupportedPattern("an empty character class");
  return alts.length === 1 ? alts[0]! : `(${alts.join(" | ")})`;
}

/** Unicode properties would need Unicode's tables written out as classes. */
const unsupportedProperty = (p: Property) => new UnsupportedPattern(`the escape \\${p.letter}`);

/** The character set an atom matches. */
function setOf(atom: Atom): CharSet {
  switch (atom.kind) {
    case "char":
      return { negated: false, ranges: [[atom.cp, atom.cp]] };
    case "dot":
    case "shorthand":
      return atom.set;
    case "property":
      throw unsupportedProperty(atom);
    case "class":
      return {
        negated: atom.negated,
        ranges: atom.items.flatMap((it): Ranges => {
          if (it.kind === "property") throw unsupportedProperty(it);
          return it.kind === "char" ? [[it.cp, it.cp]] : it.kind === "range" ? [[it.from, it.to]] : it.set.ranges;
        }),
      };
  }
}

const toGbnf: PatternBuilder<string> = {
  atom: (atom) => setToGbnf(setOf(atom)),
  anchor() {
    throw new UnsupportedPattern("an anchor inside the pattern");
  },
  group: (body) => `(${body || `""`})`,
  sequence: (items) => items.join(" "),
  alternation: (branches) => `(${branches.map((a) => a || `""`).join(" | ")})`,
  repeat(item, q) {
    if (q.min > MAX_REPEAT || (q.max !== Infinity && q.max > MAX_REPEAT))
      throw new UnsupportedPattern(`a repetition above ${MAX_REPEAT}`);
    return `${isUnit(item) ? item : `(${item})`}${q.text}`;
  },
  classItem(item) {
    if (item.kind === "property") throw unsupportedProperty(item);
    if (item.kind === "shorthand" && item.set.negated)
      throw new UnsupportedPattern("a negated shorthand inside a class");
  },
};

/** ^body$ where body is one sequence: ^a|b$ means (^a)|(b$), so only a single top-level branch keeps both anchors. */
function anchoredBody(p: string): string {
  if (!p.startsWith("^") || !p.endsWith("$") || p.endsWith("\\$"))
    throw new UnsupportedPattern("a pattern not anchored with ^ and $");
  const reader = new PatternReader(p, toGbnf, 1, p.length - 1);
  const body = reader.sequence();
  if (reader.peek() === "|")
    throw new UnsupportedPattern(
      "alternation outside a group (the anchors bind only its first and last branch; write ^(a|b)$)",
    );
  if (!reader.done()) throw new UnsupportedPattern(`unexpected ${reader.peek()} at ${reader.index}`);
  return body || `""`;
}

/**
 * GBNF for the contents (between the quotes) of JSON strings matching `pattern`, or the
 * reason it cannot be written.
 */
export function patternToGbnf(pattern: string): { expr: string } | { reason: string } {
  try {
    return { expr: anchoredBody(pattern) };
  } catch (err) {
    if (err instanceof UnsupportedPattern) return { reason: err.message };
    throw err;
  }
}
