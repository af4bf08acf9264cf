/**
 * TG005 tagged unions — docs/schemas.md ("Tagged unions", and the untagged-union
 * shape): without a discriminator the model mixes fields from
 * several branches and the validator cannot say which branch failed.
 */
import type { LintContext, SchemaRule } from "../finding.js";
import { isObjectSchema, literalOf, typesOf } from "../util.js";
import { isPlainObject } from "../../../core/json.js";
import { join } from "../../../core/pointer.js";

/** The property every object branch requires with a distinct literal, or undefined. */
export function discriminatorOf(
  branches: Record<string, unknown>[],
  resolve: LintContext["resolve"] = () => undefined,
): string | undefined {
  const first = branches[0];
  if (!first || !isPlainObject(first.properties)) return undefined;
  for (const name of Object.keys(first.properties)) {
    const seen = new Set<string>();
    const ok = branches.every((b) => {
      if (!isPlainObject(b.properties) || !Array.isArray(b.required) || !b.required.includes(name)) return false;
      const prop = b.properties[name];
      const lit = literalOf(resolve(prop, "")?.schema ?? prop);
      if (!lit) return false;
      const key = JSON.stringify(lit.value);
      if (seen.has(key)) return false;
      seen.add(key);
      return true;
    });
    if (ok) return name;
  }
  return undefined;
}

const isNullOnly = (s: Record<string, unknown>) =>
  s.type === "null" ||
  ("const" in s && s.const === null) ||
  (Array.isArray(s.enum) && s.enum.length === 1 && s.enum[0] === null);

export const unions: SchemaRule = (node, ctx) => {
  for (const key of ["anyOf", "oneOf"] as const) {
    const list = node.schema[key];
    if (!Array.isArray(list) || list.length < 2) continue;
    const pointer = join(node.pointer, key);
    const branches = list
      .map((b, i) => ctx.resolve(b, join(pointer, i))?.schema ?? b)
      .filter(isPlainObject)
      .filter((b) => !isNullOnly(b));
    if (branches.length < 2) continue; // T | null is a nullable value, not a union
    if (branches.every((b) => literalOf(b))) continue; // documented literals: an enum in another spelling
    const objects = branches.filter(isObjectSchema);
    if (objects.length === branches.length) {
      if (discriminatorOf(objects, ctx.resolve)) continue;
      ctx.report({
        rule: "TG005",
        severity: "error",
        pointer,
        message: `${key} of ${branches.length} object branches has no discriminator: no property is required in every branch with a distinct const`,
        fix: 'add a required property such as "kind" to every branch, each with its own const (e.g. "file", "dir")',
      });
    } else if (objects.length === 0) {
      const types = [...new Set(branches.flatMap(typesOf))];
      ctx.report({
        rule: "TG005",
        severity: "warning",
        pointer,
        message: `${key} of primitive branches (${types.join(", ") || "untyped"}) instead of one type`,
        fix: `use a type array, e.g. {"type": ${JSON.stringify(types.length ? types : ["string", "number"])}}, with the bounds of each type`,
      });
    } else {
      ctx.report({
        rule: "TG005",
        severity: "error",
        pointer,
        message: `${key} mixes ${objects.length} object and ${branches.length - objects.length} non-object branches, so neither the model nor the validator can tell which one a call fills`,
        fix: 'make every branch an object with a required "kind" const, or split the argument into separate fields',
      });
    }
  }
};
