/**
 * An example string for a simple `pattern` (STYLE.md 13: every rejection gives an example): a
 * schema often has none of its own, or only an empty default. Handles anchors, literals,
 * escapes (\d \w \s and escaped punctuation), character classes, groups, alternation (the
 * first branch) and quantifiers; anything else yields no example rather than a wrong one.
 * The result is checked against the pattern itself.
 */

/** Parsed piece of a pattern: the text one occurrence produces. */
type Gen = () => string | null;

const ESCAPES: Record<string, string> = { d: "0", w: "a", s: " ", D: "a", W: "-", S: "a" };

/** A non-empty string matching `pattern`, or undefined when the pattern is beyond this generator. */
export function exampleForPattern(pattern: string): string | undefined {
  let i = 0;
  const peek = () => pattern[i];

  function sequence(): Gen | null {
    const parts: Gen[] = [];
    while (i < pattern.length && peek() !== ")" && peek() !== "|") {
      const atom = parseAtom();
      if (!atom) return null;
      const q = quantifier();
      if (!q) return null;
      // Optional parts are included once: an example should show what the part looks like.
      parts.push(() => {
        const one = atom();
        return one === null ? null : one.repeat(q);
      });
    }
    return () => {
      let out = "";
      for (const p of parts) {
        const s = p();
        if (s === null) return null;
        out += s;
      }
      return out;
    };
  }

  function alternation(): Gen | null {
    const first = sequence();
    if (!first) return null;
    // Later branches are parsed (to find the group's end) but not used.
    while (peek() === "|") {
      i++;
      if (!sequence()) return null;
    }
    return first;
  }

  function parseAtom(): Gen | null {
    const c = pattern[i++];
    if (c === undefined) return null;
    if (c === "^" || c === "$") return () => "";
    if (c === "(") {
      if (pattern.startsWith("?:", i)) i += 2;
      else if (peek() === "?") return null; // lookarounds and named groups: not handled
      const inner = alternation();
      if (!inner || pattern[i++] !== ")") return null;
      return inner;
    }
    if (c === "[") return charClass();
    if (c === "\\") {
      const e = pattern[i++];
      if (e === undefined) return null;
      if (e in ESCAPES) return () => ESCAPES[e]!;
      if (/[a-zA-Z0-9]/.test(e)) return null; // \b, \u…, back-references
      return () => e;
    }
    if (c === ".") return () => "a";
    if ("*+?{}|)".includes(c)) return null;
    return () => c;
  }

  function charClass(): Gen | null {
    if (peek() === "^") return null; // negated classes: no safe pick
    let first: string | undefined;
    while (i < pattern.length && peek() !== "]") {
      let c = pattern[i++]!;
      if (c === "\\") {
        const e = pattern[i++];
        if (e === undefined) return null;
        c = ESCAPES[e] ?? e;
      }
      first ??= c;
    }
    if (pattern[i++] !== "]" || first === undefined) return null;
    const pick = first;
    return () => pick;
  }

  /** How many times to repeat the atom: the least that shows it at least once. */
  function quantifier(): number | null {
    const c = peek();
    if (c === "?" || c === "*" || c === "+") {
      i++;
      if (peek() === "?") i++;
      return 1;
    }
    if (c === "{") {
      const m = /^\{(\d+)(,(\d*))?\}/.exec(pattern.slice(i));
      if (!m) return null;
      i += m[0].length;
      return Math.max(1, Number(m[1]));
    }
    return 1;
  }

  const gen = alternation();
  if (!gen || i !== pattern.length) return undefined;
  const out = gen();
  if (!out) return undefined;
  try {
    return new RegExp(pattern, "u").test(out) ? out : undefined;
  } catch {
    return undefined;
  }
}
