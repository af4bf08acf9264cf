/**
 * `lintTool` / `lintCatalog`: pure functions from tool descriptors (ours or a foreign MCP
 * server's) to findings. They never throw on a schema found in the wild: anything the rules
 * cannot read becomes a TG000 finding.
 */
import type { UncheckedDescriptor } from "../descriptor.js";
import type { FindingInput, LintContext, LintFinding } from "./finding.js";
import { readDescriptor } from "../descriptor.js";
import { catalogRules, schemaRules, toolRules } from "./rules.js";
import { isPlainObject } from "../../core/json.js";
import { shapeOf } from "../../core/describe.js";
import { localRefPath, lookup, walkSchema } from "./walk.js";

/** How many `$ref` hops a rule follows before giving up (a ref cycle has no end). */
const MAX_REF_HOPS = 32;

const SEVERITY_ORDER = { error: 0, warning: 1 } as const;

/** Lints one tool descriptor (ToolSpec, MCP tool, `{name, description, parameters}`, …). */
export function lintTool(descriptor: unknown, index = 0): LintFinding[] {
  return lintDescriptor(readDescriptor(descriptor, index));
}

/** Lints a catalog: every tool, then the catalog-level rules (e.g. overlap between tools). */
export function lintCatalog(tools: readonly unknown[]): LintFinding[] {
  if (!Array.isArray(tools)) {
    const found = shapeOf(tools);
    return [
      {
        rule: "TG000",
        severity: "error",
        tool: "(catalog)",
        pointer: "",
        message: `a catalog must be an array of tool descriptors; found ${found}`,
        fix: "pass the array (e.g. the tools of a tools/list result), or lintSources for a file's contents in any shape",
      },
    ];
  }
  const descriptors = tools.map((t, i) => readDescriptor(t, i));
  const findings = descriptors.flatMap((d) => lintDescriptor(d));
  for (const rule of catalogRules) {
    try {
      findings.push(...rule(descriptors));
    } catch (err) {
      findings.push({
        rule: "TG000",
        severity: "error",
        tool: "(catalog)",
        pointer: "",
        message: `a catalog rule failed: ${(err as Error).message}`,
        fix: "report this as a toolgate bug with the catalog attached",
      });
    }
  }
  return findings;
}

function lintDescriptor(tool: UncheckedDescriptor): LintFinding[] {
  const findings: LintFinding[] = [];
  const seen = new Set<string>();
  const report = (f: FindingInput) => {
    const key = `${f.rule}\0${f.pointer}\0${f.message}`;
    if (seen.has(key)) return;
    seen.add(key);
    findings.push({ ...f, tool: tool.name });
  };
  const base = tool.schemaPointer ?? "";
  const ctx = contextFor(tool, tool.schema, base, report);
  if (!isPlainObject(tool.raw)) {
    report({
      rule: "TG000",
      severity: "error",
      pointer: "",
      message: `a tool descriptor must be an object; found ${Array.isArray(tool.raw) ? "an array" : tool.raw === null ? "null" : typeof tool.raw}`,
      fix: 'pass {"name", "description", "inputSchema"} (MCP) or {"name", "description", "parameters"}',
    });
    return findings;
  }
  try {
    lintSchema(tool, ctx);
    for (const rule of toolRules) rule(tool, ctx);
    lintOutputSchema(tool, report);
  } catch (err) {
    // A rule bug must not take the whole catalog down; it surfaces as a finding instead.
    report({
      rule: "TG000",
      severity: "error",
      pointer: base,
      message: `the linter could not finish this tool: ${(err as Error).message}`,
      fix: "report this as a toolgate bug with the tool descriptor attached",
    });
  }
  return findings.sort(
    (a, b) => SEVERITY_ORDER[a.severity] - SEVERITY_ORDER[b.severity] || a.rule.localeCompare(b.rule),
  );
}

/** A rule context whose `$ref`s resolve inside `root`, which sits at `base` in the descriptor. */
function contextFor(
  tool: UncheckedDescriptor,
  root: unknown,
  base: string,
  report: (f: FindingInput) => void,
): LintContext {
  return {
    tool,
    report,
    resolve(schema, pointer) {
      let cur: unknown = schema;
      let at = pointer;
      for (let hop = 0; hop < MAX_REF_HOPS; hop++) {
        if (!isPlainObject(cur) || typeof cur.$ref !== "string") return { schema: cur, pointer: at };
        const path = localRefPath(cur.$ref);
        if (path === undefined) return undefined;
        const hit = lookup(root, path);
        if (!hit.found) return undefined;
        cur = hit.value;
        at = base + path;
      }
      return undefined;
    },
  };
}

/**
 * An MCP `outputSchema` is read by clients and validators, not filled by the model, so the
 * shape rules do not apply; it must still be a usable schema (TG000: an object, `$ref`s that resolve).
 */
function lintOutputSchema(tool: UncheckedDescriptor, report: (f: FindingInput) => void): void {
  const raw = tool.raw as Record<string, unknown>;
  if (!("outputSchema" in raw) || raw.outputSchema === undefined) return;
  const root = raw.outputSchema;
  if (!isPlainObject(root)) {
    report({
      rule: "TG000",
      severity: "error",
      pointer: "/outputSchema",
      message: `the output schema must be a JSON Schema object; found ${Array.isArray(root) ? "an array" : root === null ? "null" : typeof root}`,
      fix: 'use {"type": "object", "properties": {…}} or leave outputSchema out',
    });
    return;
  }
  const ctx = contextFor(tool, root, "/outputSchema", report);
  walkSchema(root, "/outputSchema", ctx, (node) => {
    if (typeof node.schema.$ref === "string") checkRef(node.schema.$ref, node.pointer, root, ctx);
  });
}

function lintSchema(tool: UncheckedDescriptor, ctx: LintContext): void {
  const { schema, schemaPointer } = tool;
  if (schemaPointer === null) {
    ctx.report({
      rule: "TG000",
      severity: "error",
      pointer: "",
      message: "the tool has no input schema (inputSchema, parameters or input_schema)",
      fix: 'add an inputSchema; a tool without arguments uses {"type": "object", "properties": {}, "additionalProperties": false}',
    });
    return;
  }
  if (!isPlainObject(schema)) {
    ctx.report({
      rule: "TG000",
      severity: "error",
      pointer: schemaPointer,
      message: `the input schema must be a JSON Schema object; found ${Array.isArray(schema) ? "an array" : schema === null ? "null" : typeof schema}`,
      fix: 'use {"type": "object", "properties": {…}, "required": […], "additionalProperties": false}',
    });
    return;
  }
  if (schema.type !== undefined && schema.type !== "object") {
    ctx.report({
      rule: "TG000",
      severity: "error",
      pointer: schemaPointer + "/type",
      message: `tool arguments are an object, but the input schema has type ${JSON.stringify(schema.type)}`,
      fix: 'wrap the value in an object property: {"type": "object", "properties": {"value": …}}',
    });
  }
  walkSchema(schema, schemaPointer, ctx, (node) => {
    if (typeof node.schema.$ref === "string") checkRef(node.schema.$ref, node.pointer, tool.schema, ctx);
    for (const rule of schemaRules) rule(node, ctx);
  });
}

function checkRef(ref: string, pointer: string, root: unknown, ctx: LintContext): void {
  const path = localRefPath(ref);
  if (path === undefined) {
    ctx.report({
      rule: "TG000",
      severity: "warning",
      pointer: pointer + "/$ref",
      message: `$ref ${JSON.stringify(ref)} is not a local reference; the linter did not follow it`,
      fix: 'inline the referenced schema under $defs and point at it with "#/$defs/NAME"',
    });
  } else if (!lookup(root, path).found) {
    ctx.report({
      rule: "TG000",
      severity: "error",
      pointer: pointer + "/$ref",
      message: `$ref ${JSON.stringify(ref)} points nowhere in this schema`,
      fix: "define the target under $defs (2020-12) or definitions (draft-07), or fix the reference",
    });
  }
}
