/**
 * A catalog in each ecosystem's tool format:
 *  - mcp:       the MCP `tools/list` result,
 * `{ tools: [{ name, title?, description, inputSchema, outputSchema?, annotations? }] }`;
 *  - openai:    Chat Completions `tools`,
 * `[{ type: "function", function: { name, description, parameters, strict } }]`;
 *  - anthropic: Messages API `tools`, `[{ name, description, input_schema }]`;
 *  - vercel-ai: `{ [name]: { description, inputSchema } }` where inputSchema is the JSON Schema; in code,
 *               wrap each as `tool({ description, inputSchema: jsonSchema(inputSchema) })` from the `ai` package.
 *  - json-schema: `{ tools: [{ name, inputSchema, outputSchema? }] }`, every schema a JSON Schema
 *               document that names its dialect in `$schema`.
 * `$schema` is dropped from the schemas sent to OpenAI, Anthropic and the AI SDK (their validators reject or ignore
 * it).
 */
import type { ToolDescriptor } from "../schema/descriptor.js";
import { DRAFT_2020_12 } from "../schema/publish.js";
import { checkOpenAIStrict, type StrictVerdict } from "./openai-strict.js";

export type ExportFormat = "mcp" | "openai" | "anthropic" | "vercel-ai" | "gbnf" | "json-schema";
export const EXPORT_FORMATS: readonly ExportFormat[] = [
  "mcp",
  "openai",
  "anthropic",
  "vercel-ai",
  "gbnf",
  "json-schema",
];

/** The input schema without `$schema`, for APIs that take a bare schema. */
export function bareSchema(schema: Record<string, unknown>): Record<string, unknown> {
  const { $schema: _drop, ...rest } = schema;
  return rest;
}

/**
 * A schema that names its dialect. MCP tool schemas without `$schema` are 2020-12 by the protocol's
 * default, and tools/list leaves the string out for that reason; a JSON Schema consumer outside MCP
 * has no such default and reads a document without `$schema` as whatever its validator assumes.
 */
function withDialect(schema: Record<string, unknown>): Record<string, unknown> {
  return typeof schema.$schema === "string" ? schema : { $schema: DRAFT_2020_12, ...schema };
}

export function toJsonSchema(tools: readonly ToolDescriptor[]): { tools: Record<string, unknown>[] } {
  return {
    tools: tools.map((t) => ({
      name: t.name,
      inputSchema: withDialect(t.inputSchema),
      ...(t.outputSchema !== undefined ? { outputSchema: withDialect(t.outputSchema) } : {}),
    })),
  };
}

export function toMcp(tools: readonly ToolDescriptor[]): { tools: Record<string, unknown>[] } {
  return {
    tools: tools.map((t) => ({
      name: t.name,
      ...(t.title !== undefined ? { title: t.title } : {}),
      description: t.description,
      inputSchema: t.inputSchema,
      ...(t.outputSchema !== undefined ? { outputSchema: t.outputSchema } : {}),
      ...(t.annotations !== undefined ? { annotations: t.annotations } : {}),
    })),
  };
}

export interface OpenAIExport {
  tools: {
    type: "function";
    function: { name: string; description: string; parameters: Record<string, unknown>; strict: boolean };
  }[];
  /** With `strict`: each tool's verdict; tools that fail are emitted with strict: false. */
  verdicts: StrictVerdict[] | null;
}

/** OpenAI tools; with `strict`, each tool is checked and only those that pass get strict: true. */
export function toOpenAI(tools: readonly ToolDescriptor[], options: { strict?: boolean } = {}): OpenAIExport {
  const verdicts = options.strict ? tools.map(checkOpenAIStrict) : null;
  return {
    tools: tools.map((t, i) => ({
      type: "function" as const,
      function: {
        name: t.name,
        description: t.description,
        parameters: bareSchema(t.inputSchema),
        strict: verdicts ? verdicts[i]!.ok : false,
      },
    })),
    verdicts,
  };
}

export function toAnthropic(
  tools: readonly ToolDescriptor[],
): { name: string; description: string; input_schema: Record<string, unknown> }[] {
  return tools.map((t) => ({ name: t.name, description: t.description, input_schema: bareSchema(t.inputSchema) }));
}

export function toVercelAI(
  tools: readonly ToolDescriptor[],
): Record<string, { description: string; inputSchema: Record<string, unknown> }> {
  const out: Record<string, { description: string; inputSchema: Record<string, unknown> }> = {};
  for (const t of tools) out[t.name] = { description: t.description, inputSchema: bareSchema(t.inputSchema) };
  return out;
}
