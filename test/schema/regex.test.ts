/** The one regular-expression reader: what it hands its builder, in which order, and what it refuses. */
import { describe, expect, it } from "vitest";
import { PatternReader, UnsupportedPattern, type Atom, type PatternBuilder } from "../../src/schema/regex.js";
import { exampleForPattern } from "../../src/schema/pattern-example.js";
import { patternToGbnf } from "../../src/export/gbnf/pattern.js";

const atomText = (a: Atom): string => {
  switch (a.kind) {
    case "char":
      return `char(${a.cp})`;
    case "dot":
      return "dot";
    case "shorthand":
      return `\\${a.letter}`;
    case "property":
      return `\\${a.letter}{${a.name}}`;
    case "class":
      return `[${a.negated ? "^" : ""}${a.items.map((i) => (i.kind === "range" ? `${i.from}-${i.to}` : i.kind === "char" ? String(i.cp) : atomText(i))).join(",")}]`;
  }
};

/** Writes the reading back as a tree, and logs each builder call in order. */
function read(pattern: string): { tree: string; calls: string[] } {
  const calls: string[] = [];
  const log = (s: string) => (calls.push(s), s);
  const builder: PatternBuilder<string> = {
    atom: (a) => log(atomText(a)),
    anchor: (w) => log(w),
    group: (b) => log(`(${b})`),
    sequence: (items) => items.join(" "),
    alternation: (branches) => log(`alt(${branches.join(" | ")})`),
    repeat: (item, q) => log(`${item}{${q.min},${q.max}}`),
    classItem: (i) => void calls.push(`item ${i.kind}`),
  };
  const reader = new PatternReader(pattern, builder);
  const tree = reader.alternation();
  if (!reader.done()) throw new UnsupportedPattern(`stopped at ${reader.index}`);
  return { tree, calls };
}

const reason = (pattern: string) => {
  try {
    read(pattern);
    return "read";
  } catch (err) {
    return (err as Error).message;
  }
};

describe("PatternReader", () => {
  it("reads each construct into the builder, in reading order", () => {
    expect(read("^(?:a|b\\d)+?[^x-z\\s]{2,}.\\p{L}\\u0041$")).toMatchInlineSnapshot(`
      {
        "calls": [
          "^",
          "char(97)",
          "char(98)",
          "\\d",
          "alt(char(97) | char(98) \\d)",
          "(alt(char(97) | char(98) \\d))",
          "(alt(char(97) | char(98) \\d)){1,Infinity}",
          "item range",
          "item shorthand",
          "[^120-122,\\s]",
          "[^120-122,\\s]{2,Infinity}",
          "dot",
          "\\p{L}",
          "char(65)",
          "$",
        ],
        "tree": "^ (alt(char(97) | char(98) \\d)){1,Infinity} [^120-122,\\s]{2,Infinity} dot \\p{L} char(65) $",
      }
    `);
  });

  it("reads a literal astral character as one code point, and a `{` that opens no quantifier as a literal", () => {
    expect(read("😀{2}").tree).toBe("char(128512){2,2}");
    expect(read("a{x}").tree).toBe("char(97) char(123) char(120) char(125)");
  });

  it("names what it refuses", () => {
    expect(
      ["(?=a)", "(a", "[a", "[z-a]", "[a-\\d]", "[a-\\p{L}]", "a**", "*", "\\1", "\\b", "\\pL", "\\x4", "\\"].map(
        (p) => [p, reason(p)],
      ),
    ).toMatchInlineSnapshot(`
      [
        [
          "(?=a)",
          "lookaround or a named group",
        ],
        [
          "(a",
          "an unclosed group",
        ],
        [
          "[a",
          "an unclosed class",
        ],
        [
          "[z-a]",
          "a range out of order",
        ],
        [
          "[a-\\d]",
          "a range ending in a class shorthand",
        ],
        [
          "[a-\\p{L}]",
          "the escape \\p",
        ],
        [
          "a**",
          "a repeated quantifier",
        ],
        [
          "*",
          "a stray *",
        ],
        [
          "\\1",
          "the escape \\1",
        ],
        [
          "\\b",
          "the escape \\b",
        ],
        [
          "\\pL",
          "the escape \\p",
        ],
        [
          "\\x4",
          "a malformed \\x escape",
        ],
        [
          "\\",
          "a trailing backslash",
        ],
      ]
    `);
  });

  it("serves both readers of patterns: the example generator and the GBNF compiler read the same syntax", () => {
    for (const pattern of ["^[A-Z]{2}-\\d{4}$", "^(?:foo|bar)+$", "^\\t[\\x41-\\x43]\\u00e9$"]) {
      const example = exampleForPattern(pattern);
      expect(example && new RegExp(pattern, "u").test(example)).toBe(true);
      expect(patternToGbnf(pattern)).toHaveProperty("expr");
    }
    // What one reader refuses, the other cannot read either.
    for (const pattern of ["^(?<=a)b$", "^(a)\\1$", "^[z-a]$"]) {
      expect(exampleForPattern(pattern)).toBeUndefined();
      expect(patternToGbnf(pattern)).toHaveProperty("reason");
    }
  });
});
