/**
 * TG010 naming and description — docs/schemas.md (a distinct verb and object; names and
 * descriptions are what the model selects by, read as part of the context).
 */
import type { CatalogRule, LintFinding, SchemaRule, ToolRule } from "../finding.js";
import { descriptionOf } from "../util.js";
import { short } from "../../../core/describe.js";

/** MCP and the model APIs accept tool names of this shape. */
export const TOOL_NAME = /^[a-zA-Z0-9_-]{1,64}$/;
/** Past this a description costs more context on every turn than it earns (docs/economics.md, equation 2). */
export const MAX_DESCRIPTION_CHARS = 4096;
/**
 * Below either of these a tool description cannot say what the tool does *and* when to use it
 * (docs/schemas.md: the model selects by the description). Placeholders such as
 * "x", "TODO", "Runs it", "List files" or "Read a file" are flagged; "Returns one order." is
 * not (the floor catches placeholders; it does not judge prose).
 */
export const MIN_DESCRIPTION_CHARS = 12;
export const MIN_DESCRIPTION_WORDS = 3;

export const toolNaming: ToolRule = (tool, ctx) => {
  const name = tool.rawName;
  if (typeof name !== "string" || !TOOL_NAME.test(name)) {
    ctx.report({
      rule: "TG010",
      severity: "error",
      pointer: "/name",
      message:
        typeof name === "string"
          ? `tool name ${JSON.stringify(short(name))} does not match ^[a-zA-Z0-9_-]{1,64}$`
          : `the tool has no name (found ${name === undefined ? "nothing" : typeof name})`,
      fix: "name the tool with a verb and an object in letters, digits, _ and -, at most 64 characters, e.g. search_customer_orders",
    });
  }
  const d = tool.description;
  if (typeof d !== "string" || d.trim() === "") {
    ctx.report({
      rule: "TG010",
      severity: "error",
      pointer: "/description",
      message: "the tool has no description, so the model must guess when to use it",
      fix: "say what the tool does, when to use it rather than its neighbours, and what it returns",
    });
  } else if (d.length > MAX_DESCRIPTION_CHARS) {
    ctx.report({
      rule: "TG010",
      severity: "warning",
      pointer: "/description",
      message: `the description is ${d.length} characters, sent with every turn`,
      fix: `cut it below ${MAX_DESCRIPTION_CHARS} characters: say what the tool does and when to use it; move the rest to documentation`,
    });
  } else if (d.trim().length < MIN_DESCRIPTION_CHARS || d.trim().split(/\s+/).length < MIN_DESCRIPTION_WORDS) {
    ctx.report({
      rule: "TG010",
      severity: "warning",
      pointer: "/description",
      message: `the description ${JSON.stringify(short(d.trim()))} is too short to tell the model when to use the tool (fewer than ${MIN_DESCRIPTION_WORDS} words or ${MIN_DESCRIPTION_CHARS} characters)`,
      fix: 'say what the tool does, when to use it rather than its neighbours, and what it returns, e.g. "Search a customer\'s orders by status; use it to find the order_id before refund_order"',
    });
  }
};

/** TG010: every property has a description (the model reads it to fill the field). */
export const propertyDescription: SchemaRule = (node, ctx) => {
  if (node.role !== "property" || !node.name) return;
  const desc = descriptionOf(node.schema);
  if (desc.trim() === "" && typeof node.schema.$ref !== "string") {
    ctx.report({
      rule: "TG010",
      severity: "warning",
      pointer: node.pointer,
      message: `property ${node.name} has no description`,
      fix: `describe ${node.name}: what it is, its unit or format, and what a missing value means`,
    });
  } else if (desc.length > MAX_DESCRIPTION_CHARS) {
    ctx.report({
      rule: "TG010",
      severity: "warning",
      pointer: node.pointer,
      message: `the description of ${node.name} is ${desc.length} characters`,
      fix: `cut it below ${MAX_DESCRIPTION_CHARS} characters`,
    });
  }
};

/** TG010 across a catalog: two tools with one name make every call to that name ambiguous. */
export const duplicateNames: CatalogRule = (tools) => {
  const first = new Map<string, number>();
  const findings: LintFinding[] = [];
  tools.forEach((tool, i) => {
    if (typeof tool.rawName !== "string") return;
    const at = first.get(tool.rawName);
    if (at === undefined) {
      first.set(tool.rawName, i);
      return;
    }
    findings.push({
      rule: "TG010",
      severity: "error",
      tool: tool.name,
      pointer: "/name",
      message: `tools #${at} and #${i} are both named ${tool.rawName}, so a call to ${tool.rawName} is ambiguous`,
      fix: `rename one of them, or merge them into one tool`,
    });
  });
  return findings;
};
