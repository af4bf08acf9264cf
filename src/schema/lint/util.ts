/** Small helpers the rules share for reading foreign JSON Schema defensively. */
import { isPlainObject } from "../../core/json.js";

/** The JSON types a schema node admits by its `type` keyword (empty when it has none). */
export function typesOf(schema: Record<string, unknown>): string[] {
  const t = schema.type;
  if (typeof t === "string") return [t];
  if (Array.isArray(t)) return t.filter((x): x is string => typeof x === "string");
  return [];
}

/** An object shape: `type: "object"`, or no type but object keywords. */
export function isObjectSchema(schema: Record<string, unknown>): boolean {
  const types = typesOf(schema);
  if (types.length > 0) return types.includes("object");
  return isPlainObject(schema.properties) || isPlainObject(schema.patternProperties);
}

/** A schema that pins the value: `const`, or a non-empty `enum`. */
export function isPinned(schema: Record<string, unknown>): boolean {
  return "const" in schema || (Array.isArray(schema.enum) && schema.enum.length > 0);
}

/** The single literal a branch pins a property to, if any (`const` or one-value `enum`). */
export function literalOf(schema: unknown): { value: unknown } | undefined {
  if (!isPlainObject(schema)) return undefined;
  if ("const" in schema) return { value: schema.const };
  if (Array.isArray(schema.enum) && schema.enum.length === 1) return { value: schema.enum[0] };
  return undefined;
}

/** Keywords that say what a value is; a property schema with none of them accepts anything. */
const TYPING_KEYWORDS = [
  "type",
  "enum",
  "const",
  "$ref",
  "$dynamicRef",
  "$recursiveRef",
  "anyOf",
  "oneOf",
  "allOf",
  "not",
  "properties",
  "patternProperties",
  "additionalProperties",
  "items",
  "prefixItems",
];

export function isUntyped(schema: unknown): boolean {
  if (schema === true) return true;
  if (!isPlainObject(schema)) return false;
  return !TYPING_KEYWORDS.some((k) => k in schema);
}

/** Splits `maxWaitMs`, `timeout_ms`, `page-size` into lower-case words. */
export function words(name: string): string[] {
  return name
    .replace(/([a-z0-9])([A-Z])/g, "$1 $2")
    .replace(/([A-Z]+)([A-Z][a-z])/g, "$1 $2")
    .split(/[^A-Za-z0-9]+/)
    .filter(Boolean)
    .map((w) => w.toLowerCase());
}

export function descriptionOf(schema: unknown): string {
  return isPlainObject(schema) && typeof schema.description === "string" ? schema.description : "";
}
