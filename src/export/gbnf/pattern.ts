/**
 * A JSON Schema `pattern` (ECMA-262) as GBNF over a JSON string's contents, for `toGbnf`.
 * Supported: patterns anchored at both ends (`^…$`) built from literals, escapes, `.`,
 * classes (ranges, negation, \d \w \s and their negations), groups (capturing, `(?:`),
 * alternation and the quantifiers * + ? {n} {n,} {n,m} (lazy forms match the same strings).
 * Characters are admitted in their plain JSON form (`"` as `\"`, `\` as `\\`, controls as
 * `\n` `\t` `\r` or `\u00XX`); a `\uXXXX` spelling of a printable character is not admitted.
 * Anything else — lookaround, backreferences, \b, unanchored patterns, characters beyond the
 * Basic Multilingual Plane in a class — returns the reason it cannot be expressed.
 */

type Ranges = [number, number][];
interface CharSet {
  negated: boolean;
  ranges: Ranges;
}

const MAX_REPEAT = 4096;
const D: Ranges = [[0x30, 0x39]];
const W: Ranges = [[0x30, 0x39], [0x41, 0x5a], [0x5f, 0x5f], [0x61, 0x7a]];
const S: Ranges = [[0x09, 0x0d], [0x20, 0x20], [0xa0, 0xa0], [0x1680, 0x1680], [0x2000, 0x200a], [0x2028, 0x2029], [0x202f, 0x202f], [0x205f, 0x205f], [0x3000, 0x3000], [0xfeff, 0xfeff]];
const LINE_TERMINATORS: Ranges = [[0x0a, 0x0a], [0x0d, 0x0d], [0x2028, 0x2029]];
const SIMPLE_ESCAPES: Record<string, number> = { n: 10, t: 9, r: 13, f: 12, v: 11, "0": 0 };

class Unsupported extends Error {}

/** A code point inside a GBNF class: letters and digits as themselves, the rest as \xHH or \uHHHH. */
const hex = (c: number) =>
  /[0-9A-Za-z]/.test(String.fromCodePoint(c)) ? String.fromCodePoint(c) : c <= 0xff ? `\\x${c.toString(16).padStart(2, "0")}` : `\\u${c.toString(16).padStart(4, "0")}`;

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
  const named: Record<number, string> = { 0x22: '"', 0x5c: "\\", 0x0a: "n", 0x09: "t", 0x0d: "r", 0x08: "b", 0x0c: "f" };
  const body = named[c] !== undefined ? `\\${named[c]}` : `\\u${c.toString(16).padStart(4, "0")}`;
  return `"${body.replace(/\\/g, "\\\\").replace(/"/g, '\\"')}"`;
}

/** Code points that JSON must escape: they never appear raw inside a string. */
const MUST_ESCAPE: Ranges = [[0x00, 0x1f], [0x22, 0x22], [0x5c, 0x5c]];

/** A character set as GBNF over JSON string contents. */
function setToGbnf(set: CharSet): string {
  const alts: string[] = [];
  // The raw part: the set minus what JSON escapes.
  const raw = set.negated ? `[^${[...set.ranges, ...MUST_ESCAPE].map(([a, b]) => (a === b ? hex(a) : `${hex(a)}-${hex(b)}`)).join("")}]` : null;
  if (raw) alts.push(raw);
  else {
    const parts: string[] = [];
    for (const [a, b] of set.ranges) {
      if (b > 0xffff) throw new Unsupported("a class with characters beyond U+FFFF");
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
  if (alts.length === 0) throw new Unsupported("an empty character class");
  return alts.length === 1 ? alts[0]! : `(${alts.join(" | ")})`;
}

class PatternParser {
  private i = 0;
  constructor(private readonly p: string) {}

  parse(): string {
    if (!this.p.startsWith("^") || !this.p.endsWith("$") || this.p.endsWith("\\$")) throw new Unsupported("a pattern not anchored with ^ and $");
    this.i = 1;
    const end = this.p.length - 1;
    // ^a|b$ means (^a)|(b$), not ^(a|b)$: only a single top-level branch keeps both anchors.
    const body = this.sequence(end);
    if (this.p[this.i] === "|") throw new Unsupported("alternation outside a group (the anchors bind only its first and last branch; write ^(a|b)$)");
    if (this.i !== this.p.length - 1) throw new Unsupported(`unexpected ${this.p[this.i]} at ${this.i}`);
    return body || `""`;
  }

  private alternation(end: number): string {
    const alts = [this.sequence(end)];
    while (this.i < end && this.p[this.i] === "|") {
      this.i++;
      alts.push(this.sequence(end));
    }
    if (alts.length === 1) return alts[0]!;
    return `(${alts.map((a) => a || `""`).join(" | ")})`;
  }

  private sequence(end: number): string {
    const items: string[] = [];
    while (this.i < end && this.p[this.i] !== "|" && this.p[this.i] !== ")") items.push(this.quantified(end));
    return items.join(" ");
  }

  private quantified(end: number): string {
    const atom = this.atom(end);
    const c = this.p[this.i];
    let q = "";
    if (c === "*" || c === "+" || c === "?") {
      q = c;
      this.i++;
    } else if (c === "{") {
      const m = /^\{(\d+)(,(\d*))?\}/.exec(this.p.slice(this.i));
      if (m) {
        const max = m[3] ? Number(m[3]) : m[2] ? Infinity : Number(m[1]);
        if (Number(m[1]) > MAX_REPEAT || (max !== Infinity && max > MAX_REPEAT)) throw new Unsupported(`a repetition above ${MAX_REPEAT}`);
        q = m[0];
        this.i += m[0].length;
      }
    }
    if (q && this.p[this.i] === "?") this.i++; // lazy: same language
    if (q && /^[*+?{]/.test(this.p[this.i] ?? "")) throw new Unsupported("a repeated quantifier");
    return q ? `${isUnit(atom) ? atom : `(${atom})`}${q}` : atom;
  }

  private atom(end: number): string {
    const c = this.p[this.i]!;
    if (c === "(") {
      this.i++;
      if (this.p[this.i] === "?") {
        if (this.p[this.i + 1] !== ":") throw new Unsupported("lookaround or a named group");
        this.i += 2;
      }
      const inner = this.alternation(end);
      if (this.p[this.i] !== ")") throw new Unsupported("an unclosed group");
      this.i++;
      return `(${inner || `""`})`;
    }
    if (c === "[") return setToGbnf(this.klass());
    if (c === ".") {
      this.i++;
      return setToGbnf({ negated: true, ranges: LINE_TERMINATORS });
    }
    if (c === "^" || c === "$") throw new Unsupported("an anchor inside the pattern");
    if (c === "*" || c === "+" || c === "?" || c === ")") throw new Unsupported(`a stray ${c}`);
    if (c === "\\") {
      const set = this.escape(false);
      return setToGbnf(set);
    }
    this.i += c.length;
    const cp = this.p.codePointAt(this.i - 1)!;
    return setToGbnf({ negated: false, ranges: [[cp, cp]] });
  }

  /** After a backslash: a class shorthand or one character. */
  private escape(inClass: boolean): CharSet {
    this.i++;
    const e = this.p[this.i++];
    if (e === undefined) throw new Unsupported("a trailing backslash");
    if (e === "d" || e === "D") return { negated: e === "D", ranges: D };
    if (e === "w" || e === "W") return { negated: e === "W", ranges: W };
    if (e === "s" || e === "S") return { negated: e === "S", ranges: S };
    if (SIMPLE_ESCAPES[e] !== undefined) return { negated: false, ranges: [[SIMPLE_ESCAPES[e]!, SIMPLE_ESCAPES[e]!]] };
    if (e === "x" || e === "u") {
      const n = e === "x" ? 2 : 4;
      const h = this.p.slice(this.i, this.i + n);
      if (!/^[0-9a-fA-F]+$/.test(h) || h.length !== n) throw new Unsupported(`a malformed \\${e} escape`);
      this.i += n;
      const cp = parseInt(h, 16);
      return { negated: false, ranges: [[cp, cp]] };
    }
    if (/[bBpPkc1-9]/.test(e) && !(inClass && e === "b")) throw new Unsupported(`the escape \\${e}`);
    if (inClass && e === "b") return { negated: false, ranges: [[8, 8]] };
    if (/[a-zA-Z]/.test(e)) throw new Unsupported(`the escape \\${e}`);
    const cp = e.codePointAt(0)!;
    return { negated: false, ranges: [[cp, cp]] };
  }

  private klass(): CharSet {
    this.i++;
    const negated = this.p[this.i] === "^";
    if (negated) this.i++;
    const ranges: Ranges = [];
    while (this.p[this.i] !== "]") {
      if (this.i >= this.p.length) throw new Unsupported("an unclosed class");
      const lo = this.classAtom();
      if (lo.negated || lo.ranges.length !== 1 || lo.ranges[0]![0] !== lo.ranges[0]![1]) {
        if (lo.negated) throw new Unsupported("a negated shorthand inside a class");
        ranges.push(...lo.ranges);
        continue;
      }
      const a = lo.ranges[0]![0];
      if (this.p[this.i] === "-" && this.p[this.i + 1] !== "]" && this.i + 1 < this.p.length) {
        this.i++;
        const hi = this.classAtom();
        if (hi.negated || hi.ranges.length !== 1 || hi.ranges[0]![0] !== hi.ranges[0]![1]) throw new Unsupported("a range ending in a class shorthand");
        const b = hi.ranges[0]![0];
        if (b < a) throw new Unsupported("a range out of order");
        ranges.push([a, b]);
      } else ranges.push([a, a]);
    }
    this.i++;
    return { negated, ranges };
  }

  private classAtom(): CharSet {
    if (this.p[this.i] === "\\") return this.escape(true);
    const cp = this.p.codePointAt(this.i)!;
    this.i += cp > 0xffff ? 2 : 1;
    return { negated: false, ranges: [[cp, cp]] };
  }
}

/**
 * GBNF for the contents (between the quotes) of JSON strings matching `pattern`, or the
 * reason it cannot be written.
 */
export function patternToGbnf(pattern: string): { expr: string } | { reason: string } {
  try {
    return { expr: new PatternParser(pattern).parse() };
  } catch (err) {
    if (err instanceof Unsupported) return { reason: err.message };
    throw err;
  }
}
