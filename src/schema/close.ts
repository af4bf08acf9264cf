/**
 * Closes the open object schemas of a foreign catalog (docs/schemas.md: a closed schema
 * is the first rule; `{"customer_id":"c_7","limit":500}` must come back as "unknown
 * field: limit", not reach the tool). JSON Schema leaves an object open when it says nothing
 * about `additionalProperties`, and most MCP servers say nothing, so a model's misspelt or
 * invented field would pass validation and reach the upstream, which usually ignores it in
 * silence. `toolgate proxy` validates against the closed copy instead, and `defineTool` publishes
 * zod's output through it (zod leaves a plain `z.object` open on input).
 *
 * An object is closed (`additionalProperties: false` added) only when closing cannot refuse a
 * call the upstream declared valid: it lists `properties`, says nothing of `additionalProperties`,
 * `unevaluatedProperties` or `patternProperties`, and is not combined at the same level with
 * `allOf`/`anyOf`/`oneOf`/`$ref`/`if` (their properties would count as unknown). Explicitly open
 * objects (`additionalProperties: true` or a schema) stay as declared. The input is not changed.
 */

import { escapeToken as escape } from "../core/pointer.js";
import { isPlainObject as isObject } from "../core/json.js";

type Json = Record<string, unknown>;

/** Keywords whose value is a map of subschemas. */
const SCHEMA_MAPS = ["properties", "$defs", "definitions", "dependentSchemas"];
/** Keywords whose value is one subschema. */
const SCHEMA_ONE = ["items", "additionalItems", "contains", "not", "then", "else", "propertyNames", "unevaluatedItems"];
/** Keywords whose value is a list of subschemas (branches are validated on their own, so each may be closed). */
const SCHEMA_LISTS = ["anyOf", "oneOf", "prefixItems"];
/** Keywords that make sibling properties visible to the object at the same level. */
const COMBINED = ["allOf", "anyOf", "oneOf", "$ref", "$dynamicRef", "if", "dependentSchemas"];
/** Recursion bound: deeper parts of a schema are left as declared. */
const MAX_DEPTH = 64;

export interface ClosedSchema {
  schema: Json;
  /** JSON Pointers of the objects that were closed. */
  closed: string[];
}

/** A copy of `schema` with its open object schemas closed, and where that happened. */
export function closeOpenObjects(schema: Json): ClosedSchema {
  const closed: string[] = [];
  return { schema: closeNode(schema, "", 0, closed, false) as Json, closed };
}

function closeNode(node: unknown, pointer: string, depth: number, closed: string[], underAllOf: boolean): unknown {
  if (!isObject(node) || depth > MAX_DEPTH) return node;
  const out: Json = { ...node };
  for (const key of SCHEMA_MAPS) {
    const map = node[key];
    if (!isObject(map)) continue;
    const copy: Json = {};
    for (const [name, sub] of Object.entries(map))
      copy[name] = closeNode(sub, `${pointer}/${key}/${escape(name)}`, depth + 1, closed, false);
    out[key] = copy;
  }
  for (const key of SCHEMA_ONE) {
    if (key in node) out[key] = closeNode(node[key], `${pointer}/${key}`, depth + 1, closed, false);
  }
  for (const key of SCHEMA_LISTS) {
    const list = node[key];
    if (Array.isArray(list))
      out[key] = list.map((sub, i) => closeNode(sub, `${pointer}/${key}/${i}`, depth + 1, closed, false));
  }
  // allOf branches see each other's properties: none of them may be closed on its own.
  if (Array.isArray(node.allOf))
    out.allOf = node.allOf.map((sub, i) => closeNode(sub, `${pointer}/allOf/${i}`, depth + 1, closed, true));
  if (!underAllOf && closable(node)) {
    out.additionalProperties = false;
    closed.push(pointer === "" ? "/" : pointer);
  }
  return out;
}

function closable(node: Json): boolean {
  if (!isObject(node.properties)) return false;
  if ("additionalProperties" in node || "unevaluatedProperties" in node || "patternProperties" in node) return false;
  if (COMBINED.some((k) => k in node)) return false;
  const type = node.type;
  return type === undefined || type === "object" || (Array.isArray(type) && type.includes("object"));
}
