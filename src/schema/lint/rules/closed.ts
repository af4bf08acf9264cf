/**
 * TG001 closed and TG007 untyped bag — docs/schemas.md ("Closed": close the property set;
 * and the untyped-bag shape).
 */
import type { SchemaRule } from "../finding.js";
import { isObjectSchema, isUntyped } from "../util.js";
import { isPlainObject } from "../../../core/json.js";
import { join } from "../../../core/pointer.js";

const isEmptySchema = (s: unknown) => s === true || (isPlainObject(s) && Object.keys(s).length === 0);

/** TG001: every object shape with declared properties sets `additionalProperties: false` (or
 * `unevaluatedProperties: false`). */
export const closed: SchemaRule = (node, ctx) => {
  const s = node.schema;
  if (!isObjectSchema(s) || node.role === "allOf") return;
  const hasProps = isPlainObject(s.properties) || isPlainObject(s.patternProperties);
  if (!hasProps || s.additionalProperties === false || s.unevaluatedProperties === false) return;
  if (isEmptySchema(s.additionalProperties)) return; // an explicit open bag: TG007 says it
  const names = isPlainObject(s.properties) ? Object.keys(s.properties) : [];
  const typedExtra = isPlainObject(s.additionalProperties);
  ctx.report({
    rule: "TG001",
    severity: "error",
    pointer: typedExtra ? join(node.pointer, "additionalProperties") : node.pointer,
    message: typedExtra
      ? `object with properties (${listNames(names)}) also accepts any other key through a typed additionalProperties`
      : `object with properties (${listNames(names)}) does not set additionalProperties: false, so undeclared arguments pass through`,
    fix: Array.isArray(s.allOf)
      ? 'add "unevaluatedProperties": false (the object is composed with allOf)'
      : 'add "additionalProperties": false',
  });
};

/** TG007: an object with no declared properties, an explicitly open object, or a value with no type at all. */
export const untypedBag: SchemaRule = (node, ctx) => {
  const s = node.schema;
  if (node.boolean === false) return;
  const openMapValue = node.role === "map-value" && (node.boolean === true || Object.keys(s).length === 0); // the parent reports it
  if (
    (node.role === "property" || node.role === "items" || node.role === "map-value") &&
    !openMapValue &&
    isUntyped(node.boolean ? true : s)
  ) {
    ctx.report({
      rule: "TG007",
      severity: "error",
      pointer: node.pointer,
      message: `${node.name ? `property ${node.name}` : "this value"} has no type, so it accepts any JSON value`,
      fix: 'give it a type with bounds, e.g. {"type": "string", "maxLength": 256}, or an object with declared properties',
    });
    return;
  }
  if (!isObjectSchema(s) || node.role === "allOf") return;
  const hasProps = isPlainObject(s.properties) || isPlainObject(s.patternProperties);
  const extra = s.additionalProperties;
  if (isEmptySchema(extra)) {
    ctx.report({
      rule: "TG007",
      severity: "error",
      pointer: join(node.pointer, "additionalProperties"),
      message: "additionalProperties is open (true or {}), so the object accepts any extra key with any value",
      fix: 'set "additionalProperties": false and declare every accepted key in properties',
    });
  } else if (
    !hasProps &&
    !isPlainObject(extra) &&
    extra !== false &&
    s.unevaluatedProperties !== false &&
    !Array.isArray(s.allOf) &&
    !Array.isArray(s.anyOf) &&
    !Array.isArray(s.oneOf)
  ) {
    ctx.report({
      rule: "TG007",
      severity: "error",
      pointer: node.pointer,
      message: "object declares no properties, so the model can invent any keys and the validator has nothing to check",
      fix: 'declare each field under properties with "additionalProperties": false; a tool without arguments uses {"type": "object", "properties": {}, "additionalProperties": false}',
    });
  }
};

function listNames(names: string[]): string {
  if (names.length === 0) return "none";
  return names.length > 6 ? `${names.slice(0, 6).join(", ")}, … ${names.length - 6} more` : names.join(", ");
}
