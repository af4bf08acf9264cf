/**
 * OpenAI strict mode's documented restrictions (OpenAI platform docs, Structured Outputs,
 * "Supported schemas"), checked per tool so `toolgate export --format openai --strict`
 * reports which tools cannot be strict and why instead of emitting them silently:
 *  - the root is an object, not anyOf;
 *  - every object sets additionalProperties: false and lists every property in required
 *    (an optional field is written as required with a null-able type, e.g. ["string", "null"]);
 *  - only the supported keywords: type, properties, required, additionalProperties, items,
 *    enum, const, anyOf, $ref, $defs/definitions, description, title; string pattern and
 *    format; number minimum, maximum, exclusiveMinimum, exclusiveMaximum, multipleOf; array
 *    minItems, maxItems. Everything else (allOf, not, if/then/else, dependentRequired,
 *    dependentSchemas, patternProperties, unevaluatedProperties, propertyNames, min/maxProperties,
 *    minLength/maxLength, uniqueItems, contains, prefixItems, default, oneOf, …) is reported;
 *    minLength/maxLength are reported because the documented string keywords are pattern and
 *    format only (the original list named them unsupported, and still does for fine-tuned models);
 *  - format only from date-time, time, date, duration, email, hostname, ipv4, ipv6, uuid;
 *  - at most 5,000 object properties in total, 10 levels of object nesting, 1,000 enum values.
 */
import type { ToolDescriptor } from "../schema/descriptor.js";
import { escapeToken } from "../core/pointer.js";
import { isPlainObject } from "../core/json.js";

const SUPPORTED = new Set([
  "type",
  "properties",
  "required",
  "additionalProperties",
  "items",
  "enum",
  "const",
  "anyOf",
  "$ref",
  "$defs",
  "definitions",
  "description",
  "title",
  "pattern",
  "format",
  "minimum",
  "maximum",
  "exclusiveMinimum",
  "exclusiveMaximum",
  "multipleOf",
  "minItems",
  "maxItems",
]);
const ROOT_ONLY = new Set(["$schema", "$id", "$comment"]);
const FORMATS = new Set(["date-time", "time", "date", "duration", "email", "hostname", "ipv4", "ipv6", "uuid"]);
const TYPES = new Set(["string", "number", "integer", "boolean", "object", "array", "null"]);
export const STRICT_LIMITS = { properties: 5000, depth: 10, enumValues: 1000 } as const;

export interface StrictProblem {
  /** JSON Pointer into the tool's input schema. */
  pointer: string;
  message: string;
}

export interface StrictVerdict {
  tool: string;
  ok: boolean;
  problems: StrictProblem[];
}

/** Checks one tool's input schema against OpenAI strict mode. */
export function checkOpenAIStrict(tool: Pick<ToolDescriptor, "name" | "inputSchema">): StrictVerdict {
  const problems: StrictProblem[] = [];
  const totals = { properties: 0, enumValues: 0 };
  const add = (pointer: string, message: string) => problems.push({ pointer, message });
  const root = tool.inputSchema;
  if (root.type !== "object")
    add(
      "",
      `the root must be {"type": "object"}; received type ${JSON.stringify(root.type) ?? "missing"}${root.anyOf ? " with anyOf at the root" : ""}`,
    );

  const walk = (schema: unknown, ptr: string, depth: number): void => {
    if (typeof schema === "boolean") {
      add(ptr, `boolean schema ${schema} is not supported; write an explicit schema`);
      return;
    }
    if (!isPlainObject(schema)) return;
    for (const key of Object.keys(schema)) {
      if (SUPPORTED.has(key) || (ptr === "" && ROOT_ONLY.has(key))) continue;
      add(
        `${ptr}/${escapeToken(key)}`,
        `keyword ${key} is not supported in strict mode${key === "oneOf" ? "; use anyOf" : key === "default" ? "; say the default in the description" : ""}`,
      );
    }
    const types = Array.isArray(schema.type) ? schema.type : schema.type === undefined ? [] : [schema.type];
    for (const t of types)
      if (typeof t !== "string" || !TYPES.has(t)) add(`${ptr}/type`, `type ${JSON.stringify(t)} is not supported`);
    if (typeof schema.format === "string" && !FORMATS.has(schema.format)) {
      add(`${ptr}/format`, `format "${schema.format}" is not supported; supported: ${[...FORMATS].join(", ")}`);
    }
    if (Array.isArray(schema.enum)) totals.enumValues += schema.enum.length;
    const isObjectSchema = types.includes("object") || isPlainObject(schema.properties);
    if (isObjectSchema) {
      if (depth > STRICT_LIMITS.depth)
        add(ptr, `objects nest ${depth} levels deep; strict mode allows ${STRICT_LIMITS.depth}`);
      if (schema.additionalProperties !== false) {
        add(
          `${ptr}/additionalProperties`,
          `additionalProperties must be false; received ${JSON.stringify(schema.additionalProperties) ?? "nothing"}`,
        );
      }
      const props = isPlainObject(schema.properties) ? Object.keys(schema.properties) : [];
      totals.properties += props.length;
      const required = new Set(Array.isArray(schema.required) ? schema.required : []);
      const optional = props.filter((p) => !required.has(p));
      if (optional.length > 0) {
        add(
          `${ptr}/required`,
          `every property must be in required; missing ${optional.join(", ")} — make each required with a null-able type (e.g. ["string", "null"])`,
        );
      }
      for (const p of props)
        walk((schema.properties as Record<string, unknown>)[p], `${ptr}/properties/${escapeToken(p)}`, depth + 1);
    }
    if (schema.items !== undefined) {
      if (Array.isArray(schema.items)) add(`${ptr}/items`, "tuple-form items (an array) is not supported");
      else walk(schema.items, `${ptr}/items`, depth);
    }
    if (Array.isArray(schema.anyOf)) schema.anyOf.forEach((s, i) => walk(s, `${ptr}/anyOf/${i}`, depth));
    for (const defs of ["$defs", "definitions"] as const) {
      if (isPlainObject(schema[defs]))
        for (const [k, s] of Object.entries(schema[defs])) walk(s, `${ptr}/${defs}/${escapeToken(k)}`, depth);
    }
    if (typeof schema.$ref === "string" && !schema.$ref.startsWith("#"))
      add(`${ptr}/$ref`, `only local $ref ("#/$defs/…") is supported; received ${schema.$ref}`);
  };
  walk(root, "", 1);
  if (totals.properties > STRICT_LIMITS.properties)
    add("", `${totals.properties} object properties in total; strict mode allows ${STRICT_LIMITS.properties}`);
  if (totals.enumValues > STRICT_LIMITS.enumValues)
    add("", `${totals.enumValues} enum values in total; strict mode allows ${STRICT_LIMITS.enumValues}`);
  return { tool: tool.name, ok: problems.length === 0, problems };
}
