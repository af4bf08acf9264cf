/**
 * What an issue says to send (issues.ts): a value's type and bounds as a phrase (`expected`) and
 * an example, the schema's own or one derived from a pattern or a number's bounds.
 */
import type { JsonValue } from "../core/json.js";
import { isPlainObject } from "../core/json.js";
import { LruCache } from "../core/lru.js";
import { FORMAT_HINTS } from "./formats.js";
import { listValues } from "./issue-choices.js";
import { typePhrase } from "./labels.js";
import { exampleForPattern as generateExample } from "./pattern-example.js";
import { showValue } from "./received.js";

/** The schema's own example: its first `examples` entry, else its default, const, first enum value or format's example. */
export function exampleOf(schema: unknown): JsonValue | undefined {
  if (!isPlainObject(schema)) return undefined;
  if (Array.isArray(schema.examples) && schema.examples.length > 0) return schema.examples[0] as JsonValue;
  if ("default" in schema) return schema.default as JsonValue;
  if ("const" in schema) return schema.const as JsonValue;
  if (Array.isArray(schema.enum) && schema.enum.length > 0) return schema.enum[0] as JsonValue;
  if (typeof schema.format === "string") return FORMAT_HINTS[schema.format]?.example;
  return undefined;
}

/**
 * Pattern examples already generated, per pattern text: generating one parses the pattern and
 * compiles it to check the result (~14 µs), and a failing call meets the same few patterns
 * again and again. Bounded.
 */
const patternExamples = new LruCache<string, string | null>(1024);
export function exampleForPattern(pattern: string): string | undefined {
  let example = patternExamples.get(pattern);
  if (example === undefined) {
    example = generateExample(pattern) ?? null;
    patternExamples.set(pattern, example);
  }
  return example ?? undefined;
}

/** A value's type and bounds as a phrase: `an integer from 1 to 500`, `a string of 1 to 8192 characters`. */
export function describeValue(schema: Record<string, unknown>, depth = 0): string | undefined {
  if (Array.isArray(schema.enum) && schema.enum.length > 0) return `one of ${listValues(schema.enum)}`;
  if ("const" in schema) return `exactly ${showValue(schema.const)}`;
  if (schema.type === undefined) {
    // A union (nullable, anyOf, oneOf): each branch's phrase, once each; two levels at most.
    const branches = Array.isArray(schema.anyOf)
      ? schema.anyOf
      : Array.isArray(schema.oneOf)
        ? schema.oneOf
        : undefined;
    if (!branches || branches.length === 0 || depth > 1) return undefined;
    const each = branches.map((b) => (isPlainObject(b) ? describeValue(b, depth + 1) : undefined));
    return each.every((d) => d !== undefined) ? [...new Set(each)].join(" or ") : undefined;
  }
  const parts = [typePhrase(schema.type)];
  const [min, max] = [schema.minimum, schema.maximum].map((v) => (typeof v === "number" ? v : undefined));
  if (min !== undefined && max !== undefined) parts.push(`from ${min} to ${max}`);
  else if (min !== undefined) parts.push(`of at least ${min}`);
  else if (max !== undefined) parts.push(`of at most ${max}`);
  if (typeof schema.exclusiveMinimum === "number") parts.push(`greater than ${schema.exclusiveMinimum}`);
  if (typeof schema.exclusiveMaximum === "number") parts.push(`less than ${schema.exclusiveMaximum}`);
  const [minL, maxL] = [schema.minLength, schema.maxLength].map((v) => (typeof v === "number" ? v : undefined));
  if (minL !== undefined && maxL !== undefined) parts.push(`of ${minL} to ${maxL} characters`);
  else if (maxL !== undefined) parts.push(`of at most ${maxL} characters`);
  else if (minL !== undefined && minL > 0) parts.push(`of at least ${minL} character${minL === 1 ? "" : "s"}`);
  if (typeof schema.pattern === "string") parts.push(`matching ${schema.pattern}`);
  return parts.join(" ");
}

/**
 * The widest range whose middle is a value a call would pick: a `limit` of 1 to 500 is a size
 * chosen by the tool's author, so its example is a middling 200, not the useless 1; an `offset` of
 * 1 to 100,000,000 is a guard, and its lower bound is the example (the start).
 */
const CHOSEN_RANGE = 10_000;

/**
 * The schema's own example (or default), else one derived from it: a pattern's, or for a number a
 * value from its bounds — the middle of a range no wider than CHOSEN_RANGE rounded down to one
 * significant digit, else the lower bound.
 */
export function requiredExample(schema: Record<string, unknown>): JsonValue | undefined {
  const own = exampleOf(schema);
  if (own !== undefined && own !== "") return own;
  if (typeof schema.pattern === "string") return exampleForPattern(schema.pattern);
  if (schema.type === "integer" || schema.type === "number") {
    const lo =
      typeof schema.minimum === "number"
        ? schema.minimum
        : typeof schema.exclusiveMinimum === "number"
          ? Math.floor(schema.exclusiveMinimum) + 1
          : undefined;
    const hi =
      typeof schema.maximum === "number"
        ? schema.maximum
        : typeof schema.exclusiveMaximum === "number"
          ? Math.ceil(schema.exclusiveMaximum) - 1
          : undefined;
    const allowed = (v: number) =>
      (lo === undefined || v >= lo) &&
      (hi === undefined || v <= hi) &&
      (typeof schema.multipleOf !== "number" || v % schema.multipleOf === 0);
    if (typeof schema.default === "number" && allowed(schema.default)) return schema.default;
    if (lo !== undefined && hi !== undefined && hi - lo <= CHOSEN_RANGE) {
      const middle = roundDown(lo + (hi - lo) / 2);
      if (middle > lo && allowed(middle)) return middle;
    }
    const pick = lo ?? Math.min(0, hi ?? 0);
    // Only an example that satisfies both bounds (and a multipleOf) is given.
    return allowed(pick) ? pick : undefined;
  }
  return undefined;
}

/** `v` rounded down to one significant digit (250.5 → 200, 5.5 → 5); below 1, down to a whole number. */
function roundDown(v: number): number {
  if (v < 1) return Math.floor(v);
  const unit = 10 ** Math.floor(Math.log10(v));
  return Math.floor(v / unit) * unit;
}
