/**
 * The lint rule that keeps comments standing on the repository alone (eslint/self-contained-comments.js):
 * what it reports, where, and what it leaves alone.
 */
import { RuleTester } from "eslint";
import tseslint from "typescript-eslint";
import { describe, it } from "vitest";
import rule from "../../eslint/self-contained-comments.js";

RuleTester.describe = describe;
RuleTester.it = it;
RuleTester.itOnly = it.only;

const tester = new RuleTester({ languageOptions: { parser: tseslint.parser } });

const cites = (what: string, text: string, line = 1, column?: number) => ({
  messageId: "comment" as const,
  data: { what, text },
  line,
  ...(column === undefined ? {} : { column }),
});

tester.run("self-contained-comments", rule, {
  valid: [
    "/** Claims the key (docs/idempotency.md): a repeat never runs twice. */ export const a = 1;",
    "// RFC 8785 §3.2.2.3 refuses NaN.\nexport const b = 2;",
    "/** The fixture test/schema/fixtures/seed-listing-5.json, as ToolDescriptors. */ export const seedListing5 = 3;",
    "// A seeded generator: the same sequence for the same seed.\nexport const c = 4;",
    "// The renderer adds what the issue's fields say; tools #0 and #1 are both named get.\nexport const d = 5;",
    // Code and string literals are not comments; only test titles are read among strings.
    'export const fix = "give each a distinct verb (seed 003)";',
    'expect(x).toBe("seed 003");',
    'it("reads the bare parameters form", () => {});',
  ],
  invalid: [
    {
      code: '/** The four states (seed 000, "The endpoint record"). */ export const a = 1;',
      errors: [cites("a numbered seed", "seed 000", 1, 22)],
    },
    // The line of the citation inside a block comment, not the comment's first line.
    {
      code: "/**\n * Stage 4, settle: A2 and A3 calls run through the record\n * (Seed 003, the contract).\n */\nexport const a = 1;",
      errors: [cites("a numbered seed", "Seed 003", 3, 5)],
    },
    {
      code: "// Default 2,000 tokens (issue 5).\nexport const b = 2;",
      errors: [cites("an issue or pull request", "issue 5")],
    },
    { code: "// Fixed in PR #12.\nexport const b = 2;", errors: [cites("an issue or pull request", "PR #12")] },
    {
      code: "// Errors split by audience (STYLE.md 12).\nexport const c = 3;",
      errors: [cites("an outside guide", "STYLE.md")],
    },
    { code: "// The pipeline of DESIGN.md.\nexport const c = 3;", errors: [cites("an outside guide", "DESIGN.md")] },
    {
      code: "// Follows Listing 5 and Table 1.\nexport const d = 4;",
      errors: [cites("a listing or table of an outside document", "Listing 5")],
    },
    {
      code: "// The seed's illustration of the mask overhead.\nexport const e = 5;",
      errors: [cites("a seed", "seed's")],
    },
    {
      code: "// As exercise 2 asks.\nexport const f = 6;",
      errors: [cites("an exercise of an outside document", "exercise 2")],
    },
    {
      code: "// Read ../shared/seeds/000.txt first.\nexport const g = 7;",
      errors: [cites("the seeds folder", "shared/seeds")],
    },
    {
      code: "// seed 000\n/* issue 3 */\nexport const h = 8;",
      errors: [cites("a numbered seed", "seed 000", 1), cites("an issue or pull request", "issue 3", 2)],
    },
    {
      code: 'describe("breakeven (seed 000, equation 1)", () => { it.each([1])(`case ${1} of issue 3`, () => {}); it.skip("Listing 5\'s four tools", () => {}); });',
      errors: [
        { messageId: "title", data: { what: "a numbered seed", text: "seed 000" } },
        { messageId: "title", data: { what: "an issue or pull request", text: "issue 3" } },
        { messageId: "title", data: { what: "a listing or table of an outside document", text: "Listing 5" } },
      ],
    },
  ],
});
