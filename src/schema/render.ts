/**
 * The one renderer of argument problems (STYLE.md 13–14): schema issues and semantic `check`
 * issues become the same text, each line naming the field, what was expected, what arrived
 * and an example (seed 003, "An error is also an observation").
 */
import type { ObservationIssue } from "../runtime/types.js";
import type { CheckIssue } from "./types.js";
import { showValue } from "./received.js";

/** At most this many issues are listed; the rest are counted. */
export const MAX_RENDERED_ISSUES = 10;

/** Codes whose example is the closest allowed name or value to what was sent: a likely typo. */
const SUGGESTS = new Set(["unknown_field", "invalid_enum"]);

/** One line: `since must be YYYY-MM-DD; received 3/5/26; example 2026-03-05`. */
export function renderIssue(issue: ObservationIssue): string {
  let line = issue.message;
  if (issue.received !== undefined) line += `; received ${issue.received}`;
  // An empty example (e.g. an empty default) shows nothing: leave the clause out.
  const example = issue.example === undefined ? "" : showValue(issue.example);
  if (example !== "") line += SUGGESTS.has(issue.code) ? `; did you mean ${example}?` : `; example ${example}`;
  return line;
}

/** The observation text for a call refused before it ran, for schema issues and `check` issues alike. */
export function renderIssues(tool: string, issues: readonly (ObservationIssue | CheckIssue)[]): string {
  const shown = issues.slice(0, MAX_RENDERED_ISSUES).map((i) => `- ${renderIssue(fromCheckIssue(i))}`);
  const more = issues.length - shown.length;
  const count = issues.length === 1 ? "1 problem" : `${issues.length} problems`;
  return [
    `${tool} was not run: ${count} with the arguments.`,
    ...shown,
    ...(more > 0 ? [`- … and ${more} more`] : []),
    `Fix ${issues.length === 1 ? "it" : "them"} and call ${tool} again; nothing was changed.`,
  ].join("\n");
}

/** A `check` failure as an issue: same shape, received cut to the same bound. */
export function fromCheckIssue(issue: CheckIssue): ObservationIssue {
  return {
    path: issue.path,
    code: issue.code,
    message: issue.message,
    ...(issue.expected !== undefined ? { expected: issue.expected } : {}),
    ...(issue.received !== undefined ? { received: showValue(issue.received) } : {}),
    ...(issue.example !== undefined ? { example: issue.example as ObservationIssue["example"] } : {}),
  };
}
