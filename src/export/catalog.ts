/**
 * `toolgate export` as data: one catalog, any target format, and an
 * honest account of what did not carry over.
 */
import { ToolgateError } from "../core/errors.js";
import { toToolDescriptors, type ToolDescriptor } from "../schema/descriptor.js";
import {
  EXPORT_FORMATS,
  toAnthropic,
  toJsonSchema,
  toMcp,
  toOpenAI,
  toVercelAI,
  type ExportFormat,
} from "./formats.js";
import { toGbnf } from "./gbnf/grammar.js";

export interface CatalogExport {
  output: unknown;
  notes: string[];
  failed: boolean;
}

/**
 * The catalog in `format`: a JSON value, or the grammar text for gbnf. `notes` say what did
 * not carry over (tools that cannot be strict and why; constraints a grammar cannot express);
 * `failed` is true when `strict` was asked and some tool cannot be strict.
 */
export interface ExportOptions {
  /** With "openai": check strict mode and set `strict` per tool. */
  strict?: boolean;
  /** With "gbnf": the largest length/item bound written as repetition (default 64). */
  max_repeat?: number;
}

export function exportCatalog(
  catalog: readonly ToolDescriptor[],
  format: ExportFormat,
  options: ExportOptions = {},
): CatalogExport {
  if (!EXPORT_FORMATS.includes(format))
    throw new ToolgateError(
      "invalid_input",
      `format must be one of ${EXPORT_FORMATS.join(", ")}; received ${JSON.stringify(format) ?? "nothing"}`,
    );
  // A library caller may hand over tools in any accepted form (OpenAI, Anthropic, a ToolSpec): read each one.
  // A ToolSpec is read as found: its MCP annotations are toMcpTool's to make (pass specs.map(toMcpTool), as the CLI
  // does).
  const tools = toToolDescriptors(catalog);
  if (options.strict && format !== "openai")
    throw new ToolgateError("invalid_input", `--strict applies to --format openai only; received --format ${format}`);
  switch (format) {
    case "mcp":
      return { output: toMcp(tools), notes: [], failed: false };
    case "anthropic":
      return { output: toAnthropic(tools), notes: [], failed: false };
    case "vercel-ai":
      return { output: toVercelAI(tools), notes: [], failed: false };
    case "json-schema":
      return { output: toJsonSchema(tools), notes: [], failed: false };
    case "openai": {
      const r = toOpenAI(tools, { strict: options.strict === true });
      const bad = (r.verdicts ?? []).filter((v) => !v.ok);
      const notes = bad.flatMap((v) => [
        `${v.tool}: cannot be strict (emitted with strict: false):`,
        ...v.problems.map((p) => `  ${p.pointer || "/"}: ${p.message}`),
      ]);
      if (r.verdicts) notes.push(`${r.verdicts.length - bad.length} of ${r.verdicts.length} tool(s) can be strict`);
      return { output: r.tools, notes, failed: bad.length > 0 };
    }
    case "gbnf": {
      const r = toGbnf(tools, options.max_repeat !== undefined ? { max_repeat: options.max_repeat } : {});
      const notes = r.gaps.map((g) => `${g.tool} ${g.pointer || "/"}: ${g.message}`);
      if (r.gaps.length > 0)
        notes.push(`${r.gaps.length} constraint(s) the grammar cannot express (listed above); the rest is exact`);
      return { output: r.grammar, notes, failed: false };
    }
  }
}
