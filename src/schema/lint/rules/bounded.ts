/**
 * TG003 bounded — docs/schemas.md ("Bounded", and the unbounded-input shape): one call must
 * not carry an argument larger than the tool,
 * or the context that records it, can hold.
 */
import type { SchemaNode, SchemaRule } from "../finding.js";
import { isPinned, typesOf } from "../util.js";
import { isPlainObject } from "../../../core/json.js";
import { join } from "../../../core/pointer.js";

/** Formats whose values have a fixed maximum length. */
const BOUNDED_FORMATS = new Set(["date", "time", "date-time", "uuid", "ipv4", "ipv6", "duration", "byte-size"]);
/** A bound at or past ±(2^53 − 1) (zod's `z.int()` default) bounds nothing a model would send. */
const NO_REAL_BOUND = Number.MAX_SAFE_INTEGER;

const finite = (v: unknown): boolean => typeof v === "number" && Number.isFinite(v) && Math.abs(v) < NO_REAL_BOUND;

/** An anchored pattern with no unbounded quantifier (`*`, `+`, `{n,}`) bounds the string's length. */
export function patternBounds(pattern: unknown): boolean {
  if (typeof pattern !== "string" || pattern.length > 4096) return false;
  if (!pattern.startsWith("^") || !pattern.endsWith("$") || pattern.endsWith("\\$")) return false;
  const body = pattern.replace(/\\./g, "x").replace(/\[[^\]]*\]/g, "x");
  return !/[*+]|\{\d*,\}/.test(body);
}

function numberGap(s: Record<string, unknown>): string | null {
  const low = finite(s.minimum) || finite(s.exclusiveMinimum) || (s.exclusiveMinimum === true && finite(s.minimum));
  const high = finite(s.maximum) || finite(s.exclusiveMaximum) || (s.exclusiveMaximum === true && finite(s.maximum));
  if (low && high) return null;
  return !low && !high ? "minimum and maximum" : !low ? "minimum" : "maximum";
}

function label(node: SchemaNode): string {
  return node.name
    ? `property ${node.name}`
    : node.role === "items"
      ? "array item"
      : node.role === "root"
        ? "the input"
        : "this value";
}

export const bounded: SchemaRule = (node, ctx) => {
  const s = node.schema;
  if (isPinned(s) || node.role === "allOf") return;
  const what = label(node);
  for (const type of typesOf(s)) {
    if (type === "integer" || type === "number") {
      const gap = numberGap(s);
      if (gap)
        ctx.report({
          rule: "TG003",
          severity: "error",
          pointer: node.pointer,
          message: `${what} is ${type === "integer" ? "an" : "a"} ${type} with no ${gap}${hugeBound(s) ? " (a ±2^53 bound does not count)" : ""}`,
          fix: `add "${gap === "maximum" ? "maximum" : gap === "minimum" ? "minimum" : 'minimum" and "maximum'}" with the range the tool can actually handle`,
        });
    } else if (type === "string") {
      const ok =
        typeof s.maxLength === "number" ||
        (typeof s.format === "string" && BOUNDED_FORMATS.has(s.format)) ||
        patternBounds(s.pattern);
      if (!ok)
        ctx.report({
          rule: "TG003",
          severity: "error",
          pointer: node.pointer,
          message: `${what} is a string with no maxLength, enum, const, bounded format or anchored bounded pattern`,
          fix: 'add "maxLength" (e.g. 1024 for a path, 256 for a name), or an enum if the values are known',
        });
    } else if (type === "array") {
      const tupleClosed = Array.isArray(s.prefixItems) && s.items === false;
      const draft07Tuple = Array.isArray(s.items) && s.additionalItems === false;
      if (typeof s.maxItems !== "number" && !tupleClosed && !draft07Tuple) {
        ctx.report({
          rule: "TG003",
          severity: "error",
          pointer: node.pointer,
          message: `${what} is an array with no maxItems`,
          fix: 'add "maxItems" with the most items one call may carry',
        });
      }
    } else if (type === "object") {
      const extra = s.additionalProperties;
      const isMap = isPlainObject(extra) && Object.keys(extra).length > 0;
      if (isMap && typeof s.maxProperties !== "number") {
        ctx.report({
          rule: "TG003",
          severity: "error",
          pointer: join(node.pointer, "additionalProperties"),
          message: `${what} is a map (additionalProperties is a schema) with no maxProperties`,
          fix: 'add "maxProperties" with the most entries one call may carry',
        });
      }
    }
  }
};

function hugeBound(s: Record<string, unknown>): boolean {
  return [s.minimum, s.maximum, s.exclusiveMinimum, s.exclusiveMaximum].some(
    (v) => typeof v === "number" && Math.abs(v) >= NO_REAL_BOUND,
  );
}
