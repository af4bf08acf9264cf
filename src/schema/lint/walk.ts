/**
 * Walks every schema node of a tool's input schema without recursion (an explicit stack), so a
 * 10,000-deep schema cannot overflow the call stack; each node is visited once by its pointer,
 * so recursive `$ref`s terminate. Local `$ref`s (`#`, `#/$defs/…`, `#/definitions/…`) are
 * followed; the rest are reported as TG000.
 */
import type { LintContext, NodeRole, SchemaNode } from "./finding.js";
import { isPlainObject } from "../../core/json.js";
import { join } from "../../core/pointer.js";

/** Below this depth the linter stops and says so (TG000): no tool schema needs more. */
export const MAX_DEPTH = 64;
/** Upper bound on nodes per tool, so a huge schema cannot hang the linter. */
export const MAX_NODES = 50_000;

/** Subschema keywords that describe the value's shape and are walked with shape rules. */
const MAPS: [string, NodeRole][] = [
  ["properties", "property"],
  ["$defs", "def"],
  ["definitions", "def"],
  ["patternProperties", "map-value"],
];
const LISTS: [string, NodeRole][] = [
  ["anyOf", "branch"],
  ["oneOf", "branch"],
  ["allOf", "allOf"],
  ["prefixItems", "items"],
];
const SINGLES: [string, NodeRole][] = [
  ["items", "items"],
  ["additionalItems", "items"],
  ["additionalProperties", "map-value"],
  ["unevaluatedProperties", "map-value"],
];

/** Decodes a local `$ref` into a pointer relative to the schema root; undefined when not local. */
export function localRefPath(ref: string): string | undefined {
  if (ref === "#") return "";
  if (!ref.startsWith("#/")) return undefined;
  let path: string;
  try {
    path = decodeURIComponent(ref.slice(1));
  } catch {
    path = ref.slice(1);
  }
  return path;
}

/** Looks a root-relative pointer up inside `root`. */
export function lookup(root: unknown, path: string): { found: true; value: unknown } | { found: false } {
  if (path === "") return { found: true, value: root };
  let cur: unknown = root;
  for (const raw of path.slice(1).split("/")) {
    const token = raw.replace(/~1/g, "/").replace(/~0/g, "~");
    if (Array.isArray(cur) && /^\d+$/.test(token) && Number(token) < cur.length) cur = cur[Number(token)];
    else if (isPlainObject(cur) && Object.prototype.hasOwnProperty.call(cur, token)) cur = cur[token];
    else return { found: false };
  }
  return { found: true, value: cur };
}

/** A node waiting on the stack: where it sits, and its schema not yet checked to be one. */
type Frame = Omit<SchemaNode, "schema" | "boolean"> & { schema: unknown };

/** Calls `visit` for every object-shaped schema node, in document order. */
export function walkSchema(
  root: unknown,
  rootPointer: string,
  ctx: LintContext,
  visit: (node: SchemaNode) => void,
): void {
  const seen = new Set<string>();
  const stack: Frame[] = [{ schema: root, pointer: rootPointer, role: "root", depth: 0 }];
  let depthReported = false;
  while (stack.length > 0) {
    const frame = stack.pop()!;
    if (seen.has(frame.pointer)) continue;
    seen.add(frame.pointer);
    if (seen.size > MAX_NODES) {
      ctx.report({
        rule: "TG000",
        severity: "error",
        pointer: rootPointer,
        message: `the schema has more than ${MAX_NODES} subschemas; linting stopped there`,
        fix: "split the tool or simplify its schema: a model cannot fill a schema this large reliably",
      });
      return;
    }
    const { schema } = frame;
    if (typeof schema === "boolean") {
      visit({
        schema: {},
        boolean: schema,
        pointer: frame.pointer,
        role: frame.role,
        name: frame.name,
        depth: frame.depth,
      });
      continue;
    }
    if (!isPlainObject(schema)) {
      ctx.report({
        rule: "TG000",
        severity: "error",
        pointer: frame.pointer,
        message: `a schema must be an object or a boolean; found ${Array.isArray(schema) ? "an array" : schema === null ? "null" : typeof schema}`,
        fix: 'replace it with a JSON Schema object such as {"type": "string", "maxLength": 256}',
      });
      continue;
    }
    if (frame.depth >= MAX_DEPTH) {
      if (!depthReported)
        ctx.report({
          rule: "TG000",
          severity: "error",
          pointer: frame.pointer,
          message: `the schema is nested deeper than ${MAX_DEPTH} levels; nothing below this point was linted`,
          fix: "flatten the schema or use a $ref to a named $defs entry",
        });
      depthReported = true;
      continue;
    }
    visit({ schema, pointer: frame.pointer, role: frame.role, name: frame.name, depth: frame.depth });
    const children: Frame[] = [];
    const depth = frame.depth + 1;
    if (typeof schema.$ref === "string") {
      const target = ctx.resolve(schema, frame.pointer);
      if (target) children.push({ schema: target.schema, pointer: target.pointer, role: "def", depth });
    }
    for (const [key, role] of MAPS) {
      const map = schema[key];
      if (!isPlainObject(map)) continue;
      for (const name of Object.keys(map))
        children.push({
          schema: map[name],
          pointer: join(frame.pointer, key, name),
          role,
          name: role === "property" ? name : undefined,
          depth,
        });
    }
    for (const [key, role] of LISTS) {
      const list = schema[key];
      if (Array.isArray(list))
        list.forEach((s, i) => children.push({ schema: s, pointer: join(frame.pointer, key, i), role, depth }));
    }
    for (const [key, role] of SINGLES) {
      const sub = schema[key];
      if (Array.isArray(sub))
        sub.forEach((s, i) => children.push({ schema: s, pointer: join(frame.pointer, key, i), role, depth }));
      else if (isPlainObject(sub) || (typeof sub === "boolean" && key === "items"))
        children.push({ schema: sub, pointer: join(frame.pointer, key), role, depth });
    }
    // Reverse so the stack pops children in document order.
    for (let i = children.length - 1; i >= 0; i--) stack.push(children[i]!);
  }
}
