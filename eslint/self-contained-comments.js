/**
 * A comment stands on the repository alone: it says its reason itself, or points to ARCHITECTURE.md
 * or a page of docs/. This rule reports comments, and the titles of tests and suites, that cite a
 * document a reader of the repository does not have: a numbered seed, an issue or pull request, an
 * outside style or design guide, or the listings, tables and exercises of such a document.
 *
 * It reads the parser's comment list, so code and string literals are never taken for comments,
 * and it reports the line of the citation inside a block comment.
 */

/** Each citation: what it looks like, and what the message calls it. */
export const CITATIONS = [
  { pattern: /\bseeds?\s+\d+/i, what: "a numbered seed" },
  { pattern: /\bseed's\b/i, what: "a seed" },
  { pattern: /\bshared\/seeds\b/, what: "the seeds folder" },
  { pattern: /\b(?:issue|pull request|PR)\s*#?\d+/i, what: "an issue or pull request" },
  { pattern: /\b(?:STYLE|DESIGN)\.md\b/, what: "an outside guide" },
  { pattern: /\b(?:Listing|Table)\s+\d+/, what: "a listing or table of an outside document" },
  { pattern: /\bexercise\s+\d+/i, what: "an exercise of an outside document" },
];

/** The first citation in `text`, or null. */
export function findCitation(text) {
  let first = null;
  for (const { pattern, what } of CITATIONS) {
    const m = pattern.exec(text);
    if (m && (first === null || m.index < first.index)) first = { index: m.index, text: m[0], what };
  }
  return first;
}

const TEST_FUNCTIONS = new Set(["describe", "it", "test", "suite", "bench"]);

/** `describe(...)`, `it.each(...)(...)`'s callee, `describe.skip(...)`: the name of the test function, or null. */
function testFunctionName(callee) {
  let node = callee;
  while (node.type === "MemberExpression") node = node.object;
  if (node.type === "CallExpression") return testFunctionName(node.callee);
  return node.type === "Identifier" && TEST_FUNCTIONS.has(node.name) ? node.name : null;
}

const FIX = "say the reason in the project's own words, or point to ARCHITECTURE.md or a docs/ page";

/** @type {import("eslint").Rule.RuleModule} */
export default {
  meta: {
    type: "suggestion",
    docs: { description: "comments and test titles cite only what the repository holds" },
    schema: [],
    messages: {
      comment: `this comment cites {{what}} ("{{text}}"), which the repository does not hold: ${FIX}`,
      title: `this test title cites {{what}} ("{{text}}"), which the repository does not hold: ${FIX}`,
    },
  },
  create(context) {
    const source = context.sourceCode;
    return {
      Program() {
        for (const comment of source.getAllComments()) {
          const found = findCitation(comment.value);
          if (!found) continue;
          // comment.value starts after the opening `//` or `/*`.
          const start = comment.range[0] + 2 + found.index;
          const loc = { start: source.getLocFromIndex(start), end: source.getLocFromIndex(start + found.text.length) };
          context.report({ loc, messageId: "comment", data: { what: found.what, text: found.text } });
        }
      },
      CallExpression(node) {
        const title = node.arguments[0];
        if (!title || testFunctionName(node.callee) === null) return;
        const text =
          title.type === "Literal" && typeof title.value === "string"
            ? title.value
            : title.type === "TemplateLiteral"
              ? title.quasis.map((q) => q.value.cooked ?? "").join("${}")
              : null;
        const found = text === null ? null : findCitation(text);
        if (found) context.report({ node: title, messageId: "title", data: { what: found.what, text: found.text } });
      },
    };
  },
};
