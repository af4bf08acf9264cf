/**
 * Reads a tool descriptor in any of the forms found in the wild into a `LintDescriptor`:
 * a toolgate ToolSpec (`inputSchema` + `effect`), an MCP tool (`inputSchema` + `annotations`),
 * the seed's form (`parameters`, seed 000 Listing 1), Anthropic's (`input_schema`) and
 * OpenAI's (`{type: "function", function: {name, description, parameters}}`).
 */
import type { ToolAnnotations } from "./types.js";
import type { LintDescriptor } from "./lint/finding.js";
import { isRecord } from "./lint/util.js";

const SCHEMA_KEYS = ["inputSchema", "parameters", "input_schema"] as const;

export function toDescriptor(raw: unknown, index = 0): LintDescriptor {
  let body: Record<string, unknown> = isRecord(raw) ? raw : {};
  let base = "";
  if (isRecord(body.function) && body.type === "function") {
    body = body.function;
    base = "/function";
  }
  const key = SCHEMA_KEYS.find((k) => k in body);
  const rawName = body.name;
  return {
    name: typeof rawName === "string" && rawName !== "" ? rawName : `#${index}`,
    rawName,
    description: body.description,
    schema: key ? body[key] : undefined,
    schemaPointer: key ? `${base}/${key}` : null,
    effect: body.effect,
    annotations: isRecord(body.annotations) ? (body.annotations as ToolAnnotations) : undefined,
    raw,
  };
}
