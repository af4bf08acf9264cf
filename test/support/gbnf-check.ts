/**
 * A small GBNF recogniser: parses the subset of llama.cpp's grammar notation that `toGbnf`
 * writes (literals, character classes with ranges and negation, rule references, groups,
 * alternation, `*` `+` `?` and `{m}` `{m,}` `{m,n}`) and decides whether a text is in the
 * language. Matching is by sets of end positions with memoised rules, which is exact for
 * grammars without left recursion (toGbnf writes none). Used to test the exported grammars.
 */
type Node =
  | { k: "lit"; cps: number[] }
  | { k: "cls"; neg: boolean; ranges: [number, number][] }
  | { k: "ref"; name: string }
  | { k: "seq"; items: Node[] }
  | { k: "alt"; alts: Node[] }
  | { k: "rep"; node: Node; min: number; max: number };

/** A grammar the recogniser cannot read: the message names the rule and the column. */
export class GbnfSyntaxError extends Error {
  override name = "GbnfSyntaxError";
}

class Parser {
  private i = 0;
  constructor(
    private readonly s: string,
    private readonly rule: string,
  ) {}
  private fail(msg: string): never {
    throw new GbnfSyntaxError(
      `rule ${this.rule}: ${msg} at column ${this.i + 1}: ${this.s.slice(this.i, this.i + 20)}`,
    );
  }
  private skip(): void {
    while (this.i < this.s.length && /\s/.test(this.s[this.i]!)) this.i++;
  }
  private escape(): number {
    const c = this.s[this.i++];
    const hex = (n: number) => {
      const h = this.s.slice(this.i, this.i + n);
      if (!/^[0-9a-fA-F]+$/.test(h) || h.length !== n) this.fail("bad hex escape");
      this.i += n;
      return parseInt(h, 16);
    };
    switch (c) {
      case "n":
        return 10;
      case "t":
        return 9;
      case "r":
        return 13;
      case "x":
        return hex(2);
      case "u":
        return hex(4);
      case undefined:
        return this.fail("unfinished escape");
      default:
        return c.codePointAt(0)!;
    }
  }
  private char(): number {
    const c = this.s.codePointAt(this.i)!;
    this.i += c > 0xffff ? 2 : 1;
    if (c === 92) return this.escape();
    return c;
  }
  parse(): Node {
    const n = this.alt();
    this.skip();
    if (this.i < this.s.length) this.fail("unexpected text");
    return n;
  }
  private alt(): Node {
    const alts = [this.seq()];
    this.skip();
    while (this.s[this.i] === "|") {
      this.i++;
      alts.push(this.seq());
      this.skip();
    }
    return alts.length === 1 ? alts[0]! : { k: "alt", alts };
  }
  private seq(): Node {
    const items: Node[] = [];
    for (;;) {
      this.skip();
      const c = this.s[this.i];
      if (c === undefined || c === "|" || c === ")") break;
      items.push(this.postfix(this.atom()));
    }
    return items.length === 1 ? items[0]! : { k: "seq", items };
  }
  private atom(): Node {
    const c = this.s[this.i];
    if (c === '"') {
      this.i++;
      const cps: number[] = [];
      while (this.s[this.i] !== '"') {
        if (this.i >= this.s.length) this.fail("unterminated literal");
        cps.push(this.char());
      }
      this.i++;
      return { k: "lit", cps };
    }
    if (c === "[") {
      this.i++;
      const neg = this.s[this.i] === "^";
      if (neg) this.i++;
      const ranges: [number, number][] = [];
      while (this.s[this.i] !== "]") {
        if (this.i >= this.s.length) this.fail("unterminated character class");
        const lo = this.char();
        let hi = lo;
        if (this.s[this.i] === "-" && this.s[this.i + 1] !== "]") {
          this.i++;
          hi = this.char();
        }
        ranges.push([lo, hi]);
      }
      this.i++;
      return { k: "cls", neg, ranges };
    }
    if (c === "(") {
      this.i++;
      const n = this.alt();
      if (this.s[this.i] !== ")") this.fail("expected )");
      this.i++;
      return n;
    }
    const m = /^[a-zA-Z0-9-]+/.exec(this.s.slice(this.i));
    if (!m) this.fail("expected a literal, class, group or rule name");
    this.i += m[0].length;
    return { k: "ref", name: m[0] };
  }
  private postfix(node: Node): Node {
    for (;;) {
      const c = this.s[this.i];
      if (c === "*") node = { k: "rep", node, min: 0, max: Infinity };
      else if (c === "+") node = { k: "rep", node, min: 1, max: Infinity };
      else if (c === "?") node = { k: "rep", node, min: 0, max: 1 };
      else if (c === "{") {
        const m = /^\{(\d+)(,(\d*))?\}/.exec(this.s.slice(this.i));
        if (!m) this.fail("bad repetition");
        const min = Number(m[1]);
        const max = m[2] === undefined ? min : m[3] === "" ? Infinity : Number(m[3]);
        node = { k: "rep", node, min, max };
        this.i += m[0].length - 1;
      } else return node;
      this.i++;
    }
  }
}

/** Parses a grammar's rules (a rule starts at `name ::=`; later lines continue it; `#` starts a comment). */
export function parseGbnf(text: string): Map<string, Node> {
  const bodies = new Map<string, string>();
  let current: string | null = null;
  for (const raw of text.split("\n")) {
    const line = raw.replace(/^\s*#.*$/, "");
    const m = /^([a-zA-Z0-9-]+)\s*::=(.*)$/.exec(line);
    if (m) {
      if (bodies.has(m[1]!)) throw new GbnfSyntaxError(`rule ${m[1]} is defined twice`);
      current = m[1]!;
      bodies.set(current, m[2]!);
    } else if (line.trim() !== "") {
      if (current === null) throw new GbnfSyntaxError(`text before the first rule: ${line.trim()}`);
      bodies.set(current, `${bodies.get(current)} ${line}`);
    }
  }
  const rules = new Map<string, Node>();
  for (const [name, body] of bodies) rules.set(name, new Parser(body, name).parse());
  for (const [name, node] of rules) {
    const check = (n: Node): void => {
      if (n.k === "ref" && !rules.has(n.name))
        throw new GbnfSyntaxError(`rule ${name} refers to undefined rule ${n.name}`);
      if (n.k === "seq") n.items.forEach(check);
      if (n.k === "alt") n.alts.forEach(check);
      if (n.k === "rep") check(n.node);
    };
    check(node);
  }
  return rules;
}

/** Whether `text` is in the language of `grammar` from rule `root`. */
export function gbnfAccepts(grammar: string | Map<string, Node>, text: string, root = "root"): boolean {
  const rules = typeof grammar === "string" ? parseGbnf(grammar) : grammar;
  if (!rules.has(root)) throw new GbnfSyntaxError(`no rule ${root}`);
  const input = Array.from(text, (c) => c.codePointAt(0)!);
  const memo = new Map<string, Set<number>>();
  const match = (n: Node, pos: number): Set<number> => {
    switch (n.k) {
      case "lit": {
        for (let j = 0; j < n.cps.length; j++) if (input[pos + j] !== n.cps[j]) return new Set();
        return new Set([pos + n.cps.length]);
      }
      case "cls": {
        const c = input[pos];
        if (c === undefined) return new Set();
        const inside = n.ranges.some(([lo, hi]) => c >= lo && c <= hi);
        return inside !== n.neg ? new Set([pos + 1]) : new Set();
      }
      case "ref": {
        const key = `${n.name}@${pos}`;
        const hit = memo.get(key);
        if (hit) return hit;
        memo.set(key, new Set()); // guards against left recursion: treated as no match
        const out = match(rules.get(n.name)!, pos);
        memo.set(key, out);
        return out;
      }
      case "seq": {
        let at = new Set([pos]);
        for (const item of n.items) {
          const next = new Set<number>();
          for (const p of at) for (const q of match(item, p)) next.add(q);
          if (next.size === 0) return next;
          at = next;
        }
        return at;
      }
      case "alt": {
        const out = new Set<number>();
        for (const a of n.alts) for (const q of match(a, pos)) out.add(q);
        return out;
      }
      case "rep": {
        const out = new Set<number>();
        let frontier = new Set([pos]);
        let count = 0;
        if (n.min === 0) out.add(pos);
        const seen = new Set<number>();
        while (frontier.size > 0 && count < n.max) {
          const next = new Set<number>();
          for (const p of frontier) for (const q of match(n.node, p)) next.add(q);
          count++;
          if (count >= n.min) for (const q of next) out.add(q);
          if (n.max === Infinity && count >= n.min) {
            // Past the minimum, a position reached before adds nothing new.
            for (const q of [...next]) if (seen.has(q)) next.delete(q);
            for (const q of next) seen.add(q);
          }
          frontier = next;
        }
        return out;
      }
    }
  };
  return match({ k: "ref", name: root }, 0).has(input.length);
}
