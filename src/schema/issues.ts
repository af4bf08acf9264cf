/**
 * Ajv errors → structured issues `{path, code, message, expected, received, example}`
 * (issues are data; one renderer, render.ts, makes the text). Built only on failure, so the
 * valid path never pays for it. Unions are reduced to the branch the call meant (see unions.ts).
 */
import type { ErrorObject } from "ajv";
import type { ObservationIssue } from "../core/observation.js";
import type { JsonValue } from "../core/json.js";
import { suggester } from "../core/closest.js";
import { LruCache, memoize } from "../core/lru.js";
import { FORMAT_HINTS } from "./formats.js";
import { exampleForPattern as generateExample } from "./pattern-example.js";
import { codePoints, showTyped, showValue } from "./received.js";
import { reduceUnions } from "./unions.js";
import { fieldLabel, typePhrase } from "./labels.js";
import { isPlainObject } from "../core/json.js";
import { join } from "../core/pointer.js";

const listValues = (values: unknown[]) =>
  (values.length > 20
    ? [...values.slice(0, 20).map(showValue), `… ${values.length - 20} more`]
    : values.map(showValue)
  ).join(", ");

function exampleOf(schema: unknown): JsonValue | undefined {
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
function exampleForPattern(pattern: string): string | undefined {
  let example = patternExamples.get(pattern);
  if (example === undefined) {
    example = generateExample(pattern) ?? null;
    patternExamples.set(pattern, example);
  }
  return example ?? undefined;
}

/** A value's type and bounds as a phrase: `an integer from 1 to 500`, `a string of 1 to 8192 characters`. */
function describeValue(schema: Record<string, unknown>, depth = 0): string | undefined {
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
function requiredExample(schema: Record<string, unknown>): JsonValue | undefined {
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

/**
 * Per schema location, what its issues always say: the allowed names (or values) and the
 * "did you mean" answers. Keyed by the schema object Ajv hands back with each error, which is
 * the compiled schema itself, so repeated failures at one location reuse the work.
 */
interface Choices {
  list: string;
  suggest: (name: string) => string | undefined;
}
const propertyChoices = new WeakMap<object, Choices>();
const enumChoices = new WeakMap<object, Choices>();
const NO_CHOICES: Choices = { list: "none", suggest: () => undefined };
const NO_VALUES: Choices = { list: "", suggest: () => undefined };

function propertiesOf(properties: unknown): Choices {
  if (!isPlainObject(properties)) return NO_CHOICES;
  let choices = propertyChoices.get(properties);
  if (!choices) {
    const allowed = Object.keys(properties);
    const list =
      allowed.length === 0
        ? "none"
        : allowed.length > 30
          ? `${allowed.slice(0, 30).join(", ")}, …`
          : allowed.join(", ");
    choices = { list, suggest: suggester(allowed) };
    propertyChoices.set(properties, choices);
  }
  return choices;
}

function enumOf(allowed: unknown[]): Choices {
  let choices = enumChoices.get(allowed);
  if (!choices) {
    choices = {
      list: listValues(allowed),
      suggest: suggester(allowed.filter((v): v is string => typeof v === "string")),
    };
    enumChoices.set(allowed, choices);
  }
  return choices;
}

/** Field labels of recent instance paths: the same few paths fail again and again. Bounded. */
const label = memoize(1024, fieldLabel);

const plural = (n: number, unit: string) => `${n} ${unit}${n === 1 ? "" : "s"}`;

/** True for a string whose text is a JSON object (arguments double-encoded, as OpenAI's function.arguments arrive). */
function holdsJsonObject(data: unknown): boolean {
  if (typeof data !== "string" || !data.trimStart().startsWith("{")) return false;
  try {
    return isPlainObject(JSON.parse(data));
  } catch {
    return false;
  }
}

/** Sets `example` when there is one (cheaper than spreading a conditional object in). */
function withExample(issue: ObservationIssue, example: JsonValue | undefined): ObservationIssue {
  if (example !== undefined) issue.example = example;
  return issue;
}

/** Converts one Ajv error into an issue. `root` is the tool's input schema (for names and examples). */
export function toIssue(e: ErrorObject): ObservationIssue {
  const path = e.instancePath;
  const field = label(path);
  const p = e.params as Record<string, unknown>;
  const parent = isPlainObject(e.parentSchema) ? e.parentSchema : {};
  switch (e.keyword) {
    case "additionalProperties":
    case "unevaluatedProperties": {
      const name = String(p.additionalProperty ?? p.unevaluatedProperty);
      const { list, suggest } = propertiesOf(parent.properties);
      const guess = suggest(name);
      const where = path === "" ? "" : ` in ${field}`;
      return withExample(
        {
          path: join(path, name),
          code: "unknown_field",
          message: `unknown field${where}: ${name}; allowed: ${list}`,
          expected: `one of ${list}`,
        },
        guess || undefined,
      );
    }
    case "required": {
      const name = String(p.missingProperty);
      const prop = isPlainObject(parent.properties) ? parent.properties[name] : undefined;
      // Say what to send, like every other issue: the type with its bounds, and an example.
      const expected = isPlainObject(prop) ? describeValue(prop) : undefined;
      const example = isPlainObject(prop) ? requiredExample(prop) : undefined;
      const at = join(path, name);
      const issue: ObservationIssue = {
        path: at,
        code: "missing_field",
        message: `${label(at)} is required${expected ? `: ${expected}` : ""}`,
      };
      if (expected) issue.expected = expected;
      return withExample(issue, example);
    }
    case "type": {
      const expected = typePhrase(p.type);
      const issue: ObservationIssue = {
        path,
        code: "invalid_type",
        message: `${field} must be ${expected}`,
        expected,
        received: showTyped(e.data),
      };
      if (p.type === "object" && holdsJsonObject(e.data)) {
        issue.message +=
          ", and this string holds one as JSON text: send the parsed object, not the string (e.g. JSON.parse an OpenAI tool call's function.arguments first)";
      }
      return issue;
    }
    case "enum": {
      const { list, suggest } = Array.isArray(p.allowedValues) ? enumOf(p.allowedValues) : NO_VALUES;
      const guess = typeof e.data === "string" ? suggest(e.data) : undefined;
      return withExample(
        {
          path,
          code: "invalid_enum",
          message: `${field} must be one of ${list}`,
          expected: `one of ${list}`,
          received: showValue(e.data),
        },
        guess || undefined,
      );
    }
    case "const":
      return {
        path,
        code: "invalid_const",
        message: `${field} must be ${showValue(p.allowedValue)}`,
        expected: showValue(p.allowedValue),
        received: showValue(e.data),
        example: p.allowedValue as JsonValue,
      };
    case "format": {
      const hint = FORMAT_HINTS[String(p.format)];
      const expected = hint?.expected ?? `a ${String(p.format)} value`;
      return withExample(
        {
          path,
          code: "invalid_format",
          message: `${field} must be ${expected}`,
          expected,
          received: showValue(e.data),
        },
        hint?.example,
      );
    }
    case "pattern": {
      // An empty default says nothing about the pattern: generate one from it (or give none).
      const own = exampleOf(parent);
      const example = own !== undefined && own !== "" ? own : exampleForPattern(String(p.pattern));
      return withExample(
        {
          path,
          code: "invalid_pattern",
          message: `${field} must match the pattern ${showValue(p.pattern)}`,
          expected: `a string matching ${String(p.pattern)}`,
          received: showValue(e.data),
        },
        example,
      );
    }
    case "maxLength":
    case "minLength": {
      const n = Number(p.limit);
      const expected = `${e.keyword === "maxLength" ? "at most" : "at least"} ${n} character${n === 1 ? "" : "s"}`;
      return {
        path,
        code: e.keyword === "maxLength" ? "too_long" : "too_short",
        message: `${field} must be ${expected}`,
        expected,
        received: typeof e.data === "string" ? plural(codePoints(e.data), "character") : "? characters",
      };
    }
    case "maximum":
    case "minimum":
    case "exclusiveMaximum":
    case "exclusiveMinimum": {
      const words = {
        maximum: "at most",
        minimum: "at least",
        exclusiveMaximum: "less than",
        exclusiveMinimum: "greater than",
      }[e.keyword];
      const expected = `${words} ${String(p.limit)}`;
      // The bound itself is an example only when it is allowed (not for exclusive bounds).
      const example = e.keyword.startsWith("exclusive") ? undefined : (p.limit as JsonValue);
      return withExample(
        {
          path,
          code: e.keyword.toLowerCase().includes("max") ? "too_big" : "too_small",
          message: `${field} must be ${expected}`,
          expected,
          received: showValue(e.data),
        },
        example,
      );
    }
    case "multipleOf":
      return {
        path,
        code: "not_multiple",
        message: `${field} must be a multiple of ${String(p.multipleOf)}`,
        expected: `a multiple of ${String(p.multipleOf)}`,
        received: showValue(e.data),
      };
    case "maxItems":
    case "minItems":
    case "maxProperties":
    case "minProperties": {
      const unit = e.keyword.endsWith("Items") ? "item" : "field";
      const n = Number(p.limit);
      const expected = `${e.keyword.startsWith("max") ? "at most" : "at least"} ${n} ${unit}${n === 1 ? "" : "s"}`;
      const count = Array.isArray(e.data) ? e.data.length : isPlainObject(e.data) ? Object.keys(e.data).length : 0;
      return {
        path,
        code: e.keyword.startsWith("max") ? "too_many" : "too_few",
        message: `${field} must have ${expected}`,
        expected,
        received: plural(count, unit),
      };
    }
    case "uniqueItems":
      return {
        path,
        code: "duplicate_items",
        message: `${field} must not repeat items; items ${Math.min(Number(p.i), Number(p.j))} and ${Math.max(Number(p.i), Number(p.j))} are equal`,
        expected: "unique items",
      };
    case "dependentRequired":
    case "dependencies":
      return {
        path: join(path, String(p.missingProperty)),
        code: "missing_field",
        message: `${fieldLabel(join(path, String(p.missingProperty)))} is required when ${fieldLabel(join(path, String(p.property)))} is given`,
      };
    case "oneOf":
      return {
        path,
        code: "ambiguous_union",
        message: `${field} matches more than one alternative (${Array.isArray(p.passingSchemas) ? p.passingSchemas.join(" and ") : "several"}); it must match exactly one`,
        received: showValue(e.data),
      };
    default:
      return {
        path,
        code: e.keyword,
        message: `${field} ${e.message ?? `fails ${e.keyword}`}`,
        received: showValue(e.data),
      };
  }
}

const keyOf = (i: ObservationIssue) => `${i.path}\0${i.message}`;

/** All issues of one failed validation, unions reduced, duplicates dropped. */
export function issuesFrom(errors: readonly ErrorObject[], root: unknown): ObservationIssue[] {
  const out: ObservationIssue[] = [];
  // Duplicates (same path and message): a scan of the few issues so far is cheaper than hashing
  // fresh key strings; a Set once there are many.
  let keys: Set<string> | undefined;
  const items = reduceUnions(errors, root);
  // A value of the wrong type also fails its enum/format/…: the type error alone says what to fix.
  // zod publishes a date as format + a long pattern; the format says the same thing readably.
  let typeMiss: Set<string> | undefined;
  let formatMiss: Set<string> | undefined;
  for (const i of items) {
    if ("issue" in i) continue;
    if (i.keyword === "type") (typeMiss ??= new Set()).add(i.instancePath);
    else if (i.keyword === "format") (formatMiss ??= new Set()).add(i.instancePath);
  }
  for (const item of items) {
    if (
      !("issue" in item) &&
      item.keyword !== "type" &&
      typeMiss?.has(item.instancePath) &&
      item.keyword !== "required" &&
      item.keyword !== "additionalProperties"
    )
      continue;
    if (!("issue" in item) && item.keyword === "pattern" && formatMiss?.has(item.instancePath)) continue;
    const issue = "issue" in item ? item.issue : toIssue(item);
    if (out.length > 16) {
      keys ??= new Set(out.map(keyOf));
      const key = keyOf(issue);
      if (keys.has(key)) continue;
      keys.add(key);
    } else if (out.some((o) => o.path === issue.path && o.message === issue.message)) continue;
    out.push(issue);
  }
  return out;
}
