/**
 * A tool descriptor in any of the forms found in the wild, read in one place: a toolgate
 * ToolSpec (`inputSchema` + `effect`), an MCP tool (`inputSchema` + `annotations`), the
 * bare `parameters` form of many published listings, Anthropic's (`input_schema`) and OpenAI's
 * (`{type: "function", function: {name, description, parameters}}`).
 *
 * Two types, as found and as checked. `readDescriptor` never throws: it returns what it found,
 * field by field, as an `UncheckedDescriptor`, so the linter can report what is wrong with it.
 * `toToolDescriptor` is the same reading followed by a check (a name, an input schema object):
 * the `ToolDescriptor` it returns is what export and cost work on.
 */
import { ToolgateError } from "../core/errors.js";
import type { ToolAnnotations } from "../core/tool.js";
import { isPlainObject } from "../core/json.js";

/** A tool descriptor in any accepted form, as found and not checked: the lint rules read it and must not trust it. */
export interface UncheckedDescriptor {
  /** The tool's name, or `#N` (its position) when it has none. */
  name: string;
  /** The `name` as written (may be missing or not a string). */
  rawName: unknown;
  description: unknown;
  /** The input schema as found (may be anything: rules must not trust it). */
  schema: unknown;
  /** Where the input schema sits in the descriptor, e.g. `/inputSchema` or `/parameters`; null when absent. */
  schemaPointer: string | null;
  /** toolgate's `effect`, as written (validated by TG006). */
  effect: unknown;
  annotations: ToolAnnotations | undefined;
  /** The object that holds the tool's own fields: the descriptor, or its `function` in OpenAI's form. */
  body: Record<string, unknown>;
  /** The descriptor itself. */
  raw: unknown;
}

/** A tool descriptor that passed `toToolDescriptor`'s check: a name, a description and an input schema object. */
export interface ToolDescriptor {
  name: string;
  description: string;
  inputSchema: Record<string, unknown>;
  title?: string;
  outputSchema?: Record<string, unknown>;
  annotations?: ToolAnnotations;
}

const SCHEMA_KEYS = ["inputSchema", "parameters", "input_schema"] as const;

/** Reads one descriptor of any accepted form; `index` names a tool without a name (`#3`). */
export function readDescriptor(raw: unknown, index = 0): UncheckedDescriptor {
  let body: Record<string, unknown> = isPlainObject(raw) ? raw : {};
  let base = "";
  if (isPlainObject(body.function) && body.type === "function") {
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
    annotations: isPlainObject(body.annotations) ? (body.annotations as ToolAnnotations) : undefined,
    body,
    raw,
  };
}

/**
 * Reads one tool of any accepted form and checks it has a name and an input schema object;
 * `where` names it in errors (e.g. `tools[3]`).
 */
export function toToolDescriptor(value: unknown, where = "tool", index = 0): ToolDescriptor {
  if (!isPlainObject(value))
    throw new ToolgateError(
      "invalid_catalog",
      `${where} must be a tool object; received ${JSON.stringify(value)?.slice(0, 60) ?? String(value)}`,
    );
  const d = readDescriptor(value, index);
  if (typeof d.rawName !== "string" || d.rawName === "") {
    throw new ToolgateError(
      "invalid_catalog",
      `${where}.name must be a non-empty string; received ${JSON.stringify(d.rawName) ?? "nothing"}. Every tool needs a name.`,
    );
  }
  if (!isPlainObject(d.schema)) {
    throw new ToolgateError(
      "invalid_catalog",
      `${where} (${d.name}) has no input schema object; expected inputSchema, input_schema or parameters to be a JSON Schema object; received ${JSON.stringify(d.schema) ?? "nothing"}`,
    );
  }
  const out: ToolDescriptor = {
    name: d.name,
    description: typeof d.description === "string" ? d.description : "",
    inputSchema: d.schema,
  };
  if (typeof d.body.title === "string") out.title = d.body.title;
  if (isPlainObject(d.body.outputSchema)) out.outputSchema = d.body.outputSchema;
  if (d.annotations) out.annotations = d.annotations;
  return out;
}

/** Reads and checks a list of tools, naming each by its index in errors. */
export function toToolDescriptors(values: readonly unknown[]): ToolDescriptor[] {
  return values.map((v, i) => toToolDescriptor(v, `tools[${i}]`, i));
}
