/**
 * The one reader of ECMAScript regular expressions (a JSON Schema `pattern`): it parses and
 * hands each construct, in reading order, to a builder that turns it into what its caller
 * needs — an example string (pattern-example.ts) or GBNF (export/gbnf/pattern.ts). The
 * reader knows the syntax; what a caller supports is its builder's choice, and a builder
 * refuses a construct by throwing `UnsupportedPattern` when the reader reaches it.
 *
 * Read: literals, `.`, escapes (\d \w \s and their negations, \n \t \r \f \v \0, \xHH, \uHHHH,
 * Unicode properties \p{…} and \P{…}, escaped punctuation), classes (ranges, negation,
 * shorthands), groups (capturing and `(?:`), alternation, the anchors ^ and $, and the
 * quantifiers * + ? {n} {n,} {n,m}, lazy or not. Refused, with the reason: lookaround and named
 * groups, backreferences, \b \B \k \c and other letter escapes (\p and \P without a name),
 * malformed \x and \u escapes, unclosed groups and classes, ranges out of order or ending in a
 * shorthand or property, and a quantifier on a quantifier. A `{` that opens no
 * quantifier is a literal. An escaped character is one UTF-16 unit (an escaped astral character
 * is read as its two surrogates); a literal character is one code point.
 */

/** Inclusive code point ranges. */
export type Ranges = [number, number][];

export interface CharSet {
  negated: boolean;
  ranges: Ranges;
}

export type Shorthand = "d" | "D" | "w" | "W" | "s" | "S";

/** A Unicode property escape, `\p{L}` or `\P{Script=Greek}`: its set is Unicode's, not listed here. */
export interface Property {
  kind: "property";
  letter: "p" | "P";
  /** What is between the braces. */
  name: string;
}

/** One escape or class character that stands for one character or a set of them. */
type Single = { kind: "char"; cp: number } | { kind: "shorthand"; letter: Shorthand; set: CharSet } | Property;

/** One item of a class, as written. */
export type ClassItem = Single | { kind: "range"; from: number; to: number };

/** One atom that matches a single character, as written. */
export type Atom = Single | { kind: "dot"; set: CharSet } | { kind: "class"; negated: boolean; items: ClassItem[] };

export interface Quantifier {
  min: number;
  /** Infinity for no upper bound. */
  max: number;
  /** As written, without a lazy `?`: `*`, `+`, `?`, `{2}`, `{2,}`, `{2,5}`. */
  text: string;
}

/** Turns the constructs the reader meets into a result `T`; any method may throw `UnsupportedPattern`. */
export interface PatternBuilder<T> {
  atom(atom: Atom): T;
  anchor(which: "^" | "$"): T;
  group(body: T): T;
  sequence(items: T[]): T;
  /** Two or more branches. */
  alternation(branches: T[]): T;
  repeat(item: T, quantifier: Quantifier): T;
  /** Each class item as it is read, before the class is complete. */
  classItem?(item: ClassItem): void;
}

/** A pattern the reader or a builder cannot handle; the message is the reason. */
export class UnsupportedPattern extends Error {
  override name = "UnsupportedPattern";
}

const DIGIT: Ranges = [[0x30, 0x39]];
const WORD: Ranges = [
  [0x30, 0x39],
  [0x41, 0x5a],
  [0x5f, 0x5f],
  [0x61, 0x7a],
];
const SPACE: Ranges = [
  [0x09, 0x0d],
  [0x20, 0x20],
  [0xa0, 0xa0],
  [0x1680, 0x1680],
  [0x2000, 0x200a],
  [0x2028, 0x2029],
  [0x202f, 0x202f],
  [0x205f, 0x205f],
  [0x3000, 0x3000],
  [0xfeff, 0xfeff],
];
/** What `.` does not match. */
export const LINE_TERMINATORS: Ranges = [
  [0x0a, 0x0a],
  [0x0d, 0x0d],
  [0x2028, 0x2029],
];
const SHORTHANDS: Record<string, Ranges> = { d: DIGIT, w: WORD, s: SPACE };
const SIMPLE_ESCAPES: Record<string, number> = { n: 10, t: 9, r: 13, f: 12, v: 11, "0": 0 };

/**
 * Reads `pattern` between `from` and `to` (groups and branches end at `to`; a class or escape
 * may read past it). Call `alternation()` or `sequence()`, then `done()` to know whether all of
 * it was read.
 */
export class PatternReader<T> {
  private i: number;
  constructor(
    private readonly p: string,
    private readonly builder: PatternBuilder<T>,
    from = 0,
    private readonly to = p.length,
  ) {
    this.i = from;
  }

  /** Where reading stopped. */
  get index(): number {
    return this.i;
  }

  /** The next UTF-16 unit, or undefined at the end of the pattern. */
  peek(): string | undefined {
    return this.p[this.i];
  }

  done(): boolean {
    return this.i === this.to;
  }

  alternation(): T {
    const branches = [this.sequence()];
    while (this.i < this.to && this.p[this.i] === "|") {
      this.i++;
      branches.push(this.sequence());
    }
    return branches.length === 1 ? branches[0]! : this.builder.alternation(branches);
  }

  sequence(): T {
    const items: T[] = [];
    while (this.i < this.to && this.p[this.i] !== "|" && this.p[this.i] !== ")") items.push(this.quantified());
    return this.builder.sequence(items);
  }

  private quantified(): T {
    const item = this.atom();
    const q = this.quantifier();
    if (!q) return item;
    const out = this.builder.repeat(item, q);
    if (this.p[this.i] === "?") this.i++; // lazy: same language
    if (/^[*+?{]/.test(this.p[this.i] ?? "")) throw new UnsupportedPattern("a repeated quantifier");
    return out;
  }

  private quantifier(): Quantifier | undefined {
    const c = this.p[this.i];
    if (c === "*" || c === "+" || c === "?") {
      this.i++;
      return { min: c === "+" ? 1 : 0, max: c === "?" ? 1 : Infinity, text: c };
    }
    if (c !== "{") return undefined;
    const m = /^\{(\d+)(,(\d*))?\}/.exec(this.p.slice(this.i));
    if (!m) return undefined;
    this.i += m[0].length;
    const min = Number(m[1]);
    return { min, max: m[3] ? Number(m[3]) : m[2] ? Infinity : min, text: m[0] };
  }

  private atom(): T {
    const c = this.p[this.i]!;
    if (c === "(") return this.group();
    if (c === "[") return this.builder.atom(this.klass());
    if (c === ".") {
      this.i++;
      return this.builder.atom({ kind: "dot", set: { negated: true, ranges: LINE_TERMINATORS } });
    }
    if (c === "^" || c === "$") {
      this.i++;
      return this.builder.anchor(c);
    }
    if (c === "*" || c === "+" || c === "?") throw new UnsupportedPattern(`a stray ${c}`);
    if (c === "\\") return this.builder.atom(this.escape(false));
    const cp = this.p.codePointAt(this.i)!;
    this.i += cp > 0xffff ? 2 : 1;
    return this.builder.atom({ kind: "char", cp });
  }

  private group(): T {
    this.i++;
    if (this.p[this.i] === "?") {
      if (this.p[this.i + 1] !== ":") throw new UnsupportedPattern("lookaround or a named group");
      this.i += 2;
    }
    const body = this.alternation();
    if (this.p[this.i] !== ")") throw new UnsupportedPattern("an unclosed group");
    this.i++;
    return this.builder.group(body);
  }

  /** After a backslash: a class shorthand or one character. */
  private escape(inClass: boolean): Single {
    this.i++;
    const e = this.p[this.i++];
    if (e === undefined) throw new UnsupportedPattern("a trailing backslash");
    if ("dDwWsS".includes(e)) {
      const lower = e.toLowerCase();
      return { kind: "shorthand", letter: e as Shorthand, set: { negated: e !== lower, ranges: SHORTHANDS[lower]! } };
    }
    if (SIMPLE_ESCAPES[e] !== undefined) return { kind: "char", cp: SIMPLE_ESCAPES[e] };
    if (e === "x" || e === "u") {
      const n = e === "x" ? 2 : 4;
      const h = this.p.slice(this.i, this.i + n);
      if (!/^[0-9a-fA-F]+$/.test(h) || h.length !== n) throw new UnsupportedPattern(`a malformed \\${e} escape`);
      this.i += n;
      return { kind: "char", cp: parseInt(h, 16) };
    }
    if (inClass && e === "b") return { kind: "char", cp: 8 };
    const property = (e === "p" || e === "P") && /^\{([A-Za-z_]+(?:=[A-Za-z_]+)?)\}/.exec(this.p.slice(this.i));
    if (property) {
      this.i += property[0].length;
      return { kind: "property", letter: e as "p" | "P", name: property[1]! };
    }
    if (/[a-zA-Z1-9]/.test(e)) throw new UnsupportedPattern(`the escape \\${e}`);
    return { kind: "char", cp: e.codePointAt(0)! };
  }

  private klass(): Atom {
    this.i++;
    const negated = this.p[this.i] === "^";
    if (negated) this.i++;
    const items: ClassItem[] = [];
    while (this.p[this.i] !== "]") {
      if (this.i >= this.p.length) throw new UnsupportedPattern("an unclosed class");
      const lo = this.classAtom();
      let item: ClassItem = lo;
      if (lo.kind === "char" && this.p[this.i] === "-" && this.p[this.i + 1] !== "]" && this.i + 1 < this.p.length) {
        this.i++;
        const hi = this.classAtom();
        if (hi.kind === "property") throw new UnsupportedPattern(`the escape \\${hi.letter}`);
        if (hi.kind !== "char") throw new UnsupportedPattern("a range ending in a class shorthand");
        if (hi.cp < lo.cp) throw new UnsupportedPattern("a range out of order");
        item = { kind: "range", from: lo.cp, to: hi.cp };
      }
      this.builder.classItem?.(item);
      items.push(item);
    }
    this.i++;
    return { kind: "class", negated, items };
  }

  private classAtom(): Single {
    if (this.p[this.i] === "\\") return this.escape(true);
    const cp = this.p.codePointAt(this.i)!;
    this.i += cp > 0xffff ? 2 : 1;
    return { kind: "char", cp };
  }
}
