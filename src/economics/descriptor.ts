/**
 * The one view of a tool the economics work on: name, description, input schema, plus
 * what the export formats carry along. Built from any of the forms a tool arrives in —
 * a toolgate ToolSpec or MCP descriptor (`inputSchema`), the seed's listings
 * (`parameters`), Anthropic (`input_schema`) or OpenAI (`{type:"function", function}`).
 */
import { ToolgateError } from "../schema/errors.js";
import type { ToolAnnotations } from "../schema/types.js";
import { toDescriptor as readDescriptor } from "../schema/descriptor.js";

export interface ToolDescriptor {
  name: string;
  description: string;
  inputSchema: Record<string, unknown>;
  title?: string;
  outputSchema?: Record<string, unknown>;
  annotations?: ToolAnnotations;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

/**
 * Normalises one tool of any accepted form (read by the linter's descriptor reader, so both
 * accept the same forms); `where` names it in errors (e.g. `tools[3]`).
 */
export function toToolDescriptor(value: unknown, where = "tool", index = 0): ToolDescriptor {
  if (!isObject(value)) throw new ToolgateError("invalid_catalog", `${where} must be a tool object; received ${JSON.stringify(value)?.slice(0, 60) ?? String(value)}`);
  const d = readDescriptor(value, index);
  if (typeof d.rawName !== "string" || d.rawName === "") {
    throw new ToolgateError("invalid_catalog", `${where}.name must be a non-empty string; received ${JSON.stringify(d.rawName) ?? "nothing"}. Every tool needs a name.`);
  }
  if (!isObject(d.schema)) {
    throw new ToolgateError(
      "invalid_catalog",
      `${where} (${d.name}) has no input schema object; expected inputSchema, input_schema or parameters to be a JSON Schema object; received ${JSON.stringify(d.schema) ?? "nothing"}`,
    );
  }
  const body = d.schemaPointer?.startsWith("/function") ? (value.function as Record<string, unknown>) : value;
  const out: ToolDescriptor = { name: d.name, description: typeof d.description === "string" ? d.description : "", inputSchema: d.schema };
  if (typeof body.title === "string") out.title = body.title;
  if (isObject(body.outputSchema)) out.outputSchema = body.outputSchema;
  if (d.annotations) out.annotations = d.annotations;
  return out;
}

/** Normalises a list of tools, naming each by its index in errors. */
export function toToolDescriptors(values: readonly unknown[]): ToolDescriptor[] {
  return values.map((v, i) => toToolDescriptor(v, `tools[${i}]`, i));
}

/**
 * The exact text whose tokens are a tool's definition cost (issue 8, "Catalog token cost"):
 * the compact JSON (no whitespace) of `{name, description, inputSchema}` in that key order —
 * what an MCP client forwards to the model for each tool. Title, annotations and output
 * schema are left out: most clients do not send them to the model.
 */
export function definitionText(tool: ToolDescriptor): string {
  return JSON.stringify({ name: tool.name, description: tool.description, inputSchema: tool.inputSchema });
}
