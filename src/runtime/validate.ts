/**
 * Stage 2, validate: the schema first, then the tool's semantic `check` (docs/observations.md: passing
 * the schema is necessary but not sufficient; ownership, existence and policy are checked
 * after parsing). Both failures are observations rendered by the schema area's one renderer.
 */
import type { CheckIssue, ToolContext, ToolSpec } from "../core/tool.js";
import type { JsonValue } from "../core/json.js";
import { createValidator, type Validator } from "../schema/validate.js";
import { fromCheckIssue, renderIssues } from "../schema/issue-text.js";
import { isThenable, refuse, type Refusal } from "./call.js";

export { createValidator };

/** The validated arguments, or a refusal listing every issue. */
export function validateSchema(validator: Validator, tool: ToolSpec, args: unknown): { value: JsonValue } | Refusal {
  const r = validator.validate({ name: tool.name, inputSchema: tool.inputSchema }, args);
  if (r.ok) return { value: r.value as JsonValue };
  return refuse("invalid_arguments", renderIssues(tool.name, r.issues), { issues: r.issues });
}

/**
 * Runs the tool's semantic check; a throwing check is a check failure, not a crash. A check that answers
 * synchronously (a `defineTool` tool's zod parse, with no check of its own or a synchronous one) is answered
 * synchronously: no promise for the common call.
 */
export function runCheck(tool: ToolSpec, args: JsonValue, ctx: ToolContext): null | Refusal | Promise<null | Refusal> {
  if (!tool.check) return null;
  let found: CheckIssue[] | void | Promise<CheckIssue[] | void>;
  try {
    found = tool.check(args as Record<string, unknown>, ctx);
  } catch (err) {
    return checkThrew(tool, err);
  }
  return isThenable(found)
    ? found.then(checkRefusal.bind(null, tool), (err: unknown) => checkThrew(tool, err))
    : checkRefusal(tool, found);
}

function checkThrew(tool: ToolSpec, err: unknown): Refusal {
  return refuse(
    "check_failed",
    `${tool.name}'s semantic check could not run; nothing was executed. Try again; if it repeats, report it.`,
    {
      untrusted: (err as Error)?.message ?? String(err),
    },
  );
}

function checkRefusal(tool: ToolSpec, found: CheckIssue[] | void): null | Refusal {
  if (!found || found.length === 0) return null;
  const issues = found.map(fromCheckIssue);
  return refuse("check_failed", renderIssues(tool.name, issues), { issues });
}
