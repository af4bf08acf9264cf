import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { gbnfAccepts, parseGbnf } from "../../support/gbnf-check.js";
import { patternToGbnf } from "../../../src/export/gbnf/pattern.js";

/** The grammar for `pattern` over a whole JSON string literal. */
function grammar(pattern: string) {
  const r = patternToGbnf(pattern);
  if (!("expr" in r)) throw new Error(`not expressible: ${r.reason}`);
  return parseGbnf(`root ::= "\\"" ${r.expr} "\\""\n`);
}

const PATTERNS = [
  "^/([a-zA-Z0-9_.-]+/)*[a-zA-Z0-9_.-]+$", // file_edit's path in test/schema/fixtures/seed-listing-1.json
  "^([0-9a-f]{64})?$",
  "^\\d{4}-\\d{2}-\\d{2}$",
  '^[^\\s"]{1,8}$',
  "^(?:cat|dog)s?\\.$",
  "^a.c$",
  "^[\\w\\-]+@[a-z]+\\.(com|org)$",
  "^[^a-z]*$",
  '^\\\\["\\n]?x{2,}$',
  "^$",
];
const alphabet = fc.constantFrom(...'abcxyz09AZ_-./@\\"\n\t \u00e9\u20ac\u2028{}|s.com'.split(""));
const candidates = (pattern: string) =>
  fc.oneof(
    fc.string({ unit: alphabet, maxLength: 12 }),
    fc.stringMatching(new RegExp(pattern, "u"), { maxLength: 100 }),
  );

describe("patternToGbnf", () => {
  it.each(PATTERNS)("agrees with ECMA-262 RegExp on %s", (pattern) => {
    const g = grammar(pattern);
    const re = new RegExp(pattern, "u");
    fc.assert(
      fc.property(candidates(pattern), (s) => {
        expect(gbnfAccepts(g, JSON.stringify(s))).toBe(re.test(s));
      }),
      { numRuns: 200 },
    );
  });

  it("writes seed-listing-1.json's path pattern compactly", () => {
    expect(patternToGbnf("^/([a-zA-Z0-9_.-]+/)*[a-zA-Z0-9_.-]+$")).toMatchInlineSnapshot(`
      {
        "expr": "[\\x2f] ([a-zA-Z0-9\\x5f\\x2e\\x2d]+ [\\x2f])* [a-zA-Z0-9\\x5f\\x2e\\x2d]+",
      }
    `);
  });

  it("says why a pattern cannot be written", () => {
    const reasons = [
      "^a",
      "ab$",
      "^a|b$",
      "^(?=a)a$",
      "^(a)\\1$",
      "^\\bword$",
      "^\\p{L}+$",
      "^a{1,99999}$",
      "^[z-a]$",
      "^a**$",
      "^(a$",
    ].map((p) => [p, (patternToGbnf(p) as { reason?: string }).reason]);
    expect(reasons).toMatchInlineSnapshot(`
      [
        [
          "^a",
          "a pattern not anchored with ^ and $",
        ],
        [
          "ab$",
          "a pattern not anchored with ^ and $",
        ],
        [
          "^a|b$",
          "alternation outside a group (the anchors bind only its first and last branch; write ^(a|b)$)",
        ],
        [
          "^(?=a)a$",
          "lookaround or a named group",
        ],
        [
          "^(a)\\1$",
          "the escape \\1",
        ],
        [
          "^\\bword$",
          "the escape \\b",
        ],
        [
          "^\\p{L}+$",
          "the escape \\p",
        ],
        [
          "^a{1,99999}$",
          "a repetition above 4096",
        ],
        [
          "^[z-a]$",
          "a range out of order",
        ],
        [
          "^a**$",
          "a repeated quantifier",
        ],
        [
          "^(a$",
          "an unclosed group",
        ],
      ]
    `);
  });
});
