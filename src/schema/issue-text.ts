/**
 * The one renderer of argument problems: schema issues and semantic `check`
 * issues become the same text, each line naming the field, what was expected, what arrived
 * and an example (docs/observations.md, "An error is an observation too").
 */
import type { ObservationIssue } from "../core/observation.js";
import type { CheckIssue } from "../core/tool.js";
import { RECEIVED_MAX, showValue } from "./received.js";

/** At most this many issues are listed; the rest are counted. */
export const MAX_RENDERED_ISSUES = 10;

/**
 * A received value as `showValue`/`showTyped` leave a cut one: its head, then `… (N characters)`
 * and maybe the type. Shown as it is: cutting it again would count the cut text, not the value.
 */
const ALREADY_CUT = /… \(\d+ characters\)(?: \([a-z]+\))?$/;
const shown = (received: unknown) =>
  typeof received === "string" && received.length <= 2 * RECEIVED_MAX + 48 && ALREADY_CUT.test(received)
    ? received
    : showValue(received);

/** Codes whose example is the closest allowed name or value to what was sent: a likely typo. */
const SUGGESTS = new Set(["unknown_field", "invalid_enum"]);

/** One line: `since must be YYYY-MM-DD; received 3/5/26; example 2026-03-05`. */
export function renderIssue(issue: ObservationIssue): string {
  return line(issue, issue.received);
}

/** An issue's line with its received value already shown. */
function line(issue: CheckIssue, received: string | undefined): string {
  let text = issue.message;
  // An empty string would leave "received" saying nothing: show it as "".
  if (received !== undefined) text += `; received ${received === "" ? '""' : received}`;
  // An empty example (e.g. an empty default) shows nothing: leave the clause out.
  const example = issue.example === undefined ? "" : showValue(issue.example);
  if (example !== "") text += SUGGESTS.has(issue.code) ? `; did you mean ${example}?` : `; example ${example}`;
  return text;
}

/** The observation text for a call refused before it ran, for schema issues and `check` issues alike. */
export function renderIssues(tool: string, issues: readonly (ObservationIssue | CheckIssue)[]): string {
  const n = issues.length;
  let text = `${tool} was not run: ${n === 1 ? "1 problem" : `${n} problems`} with the arguments.\n`;
  for (let i = 0; i < n && i < MAX_RENDERED_ISSUES; i++) {
    const issue = issues[i]!;
    // The line of `fromCheckIssue(issue)`, without building it.
    text += `- ${line(issue, issue.received === undefined ? undefined : shown(issue.received))}\n`;
  }
  if (n > MAX_RENDERED_ISSUES) text += `- … and ${n - MAX_RENDERED_ISSUES} more\n`;
  return `${text}Fix ${n === 1 ? "it" : "them"} and call ${tool} again; nothing was changed.`;
}

/** A `check` failure as an issue: same shape, received cut to the same bound (once: a received value already cut stays
 * as it is). */
export function fromCheckIssue(issue: CheckIssue): ObservationIssue {
  const out: ObservationIssue = { path: issue.path, code: issue.code, message: issue.message };
  if (issue.expected !== undefined) out.expected = issue.expected;
  if (issue.received !== undefined) out.received = shown(issue.received);
  if (issue.example !== undefined) out.example = issue.example as ObservationIssue["example"];
  return out;
}
