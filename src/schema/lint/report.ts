/**
 * `toolgate lint` as data: inputs in any accepted shape → findings and a summary.
 * The CLI prints it as text, JSON or SARIF; the MCP engineer's `lint --mcp` feeds tools listed
 * by a live server into `lintSources` the same way.
 */
import { ToolgateError } from "../../core/errors.js";
import type { LintFinding } from "./finding.js";
import { lintCatalog } from "./index.js";
import { isPlainObject } from "../../core/json.js";
import { shapeOf } from "../../core/describe.js";

export interface LintSource {
  /** File name, `-` for standard input, or a label such as `mcp:CMD`. */
  source: string;
  /** One descriptor, an array, an MCP `tools/list` result `{tools}`, a JSON-RPC response, or a catalog file
   * `{…, tools}`. */
  value: unknown;
}

export interface SourcedFinding extends LintFinding {
  source: string;
}

export interface LintReport {
  findings: SourcedFinding[];
  summary: {
    tools: number;
    /** Tools with no finding at all. */
    clean: number;
    errors: number;
    warnings: number;
    byRule: Record<string, number>;
  };
}

/** The tools an input holds; throws ToolgateError `lint_input` for a shape that holds none. */
export function toolsOf(value: unknown, source: string): unknown[] {
  if (Array.isArray(value)) return value;
  if (isPlainObject(value)) {
    if (Array.isArray(value.tools)) return value.tools;
    if (isPlainObject(value.result) && Array.isArray(value.result.tools)) return value.result.tools;
    if (
      "name" in value ||
      "inputSchema" in value ||
      "parameters" in value ||
      "input_schema" in value ||
      "function" in value
    )
      return [value];
    const vercel = vercelTools(value);
    if (vercel) return vercel;
  }
  throw new ToolgateError(
    "lint_input",
    `${source}: expected a tool descriptor, an array of them, or {"tools": [...]}; found ${shapeOf(value)}`,
  );
}

/**
 * `toolgate export --format vercel-ai`'s shape, `{ [name]: { description, inputSchema } }`: every
 * value a descriptor without a name of its own. Read back as `[{ name, ...descriptor }]`.
 */
function vercelTools(value: Record<string, unknown>): unknown[] | undefined {
  const entries = Object.entries(value);
  if (entries.length === 0) return undefined;
  const isEntry = (v: unknown) => isPlainObject(v) && !("name" in v) && ("inputSchema" in v || "parameters" in v);
  return entries.every(([, v]) => isEntry(v))
    ? entries.map(([name, v]) => ({ name, ...(v as Record<string, unknown>) }))
    : undefined;
}

export function lintSources(sources: readonly LintSource[]): LintReport {
  const findings: SourcedFinding[] = [];
  let tools = 0;
  let clean = 0;
  for (const { source, value } of sources) {
    const list = toolsOf(value, source);
    const found = lintCatalog(list).map((f) => ({ ...f, source }));
    tools += list.length;
    const flagged = new Set(found.map((f) => f.tool));
    clean += list.length - [...flagged].filter((t) => t !== "(catalog)").length;
    findings.push(...found);
  }
  const byRule: Record<string, number> = {};
  for (const f of findings) byRule[f.rule] = (byRule[f.rule] ?? 0) + 1;
  const sorted = Object.fromEntries(Object.entries(byRule).sort(([a], [b]) => a.localeCompare(b)));
  const errors = findings.filter((f) => f.severity === "error").length;
  return {
    findings,
    summary: { tools, clean: Math.max(0, clean), errors, warnings: findings.length - errors, byRule: sorted },
  };
}
