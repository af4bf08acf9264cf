/**
 * Ajv errors → structured issues `{path, code, message, expected, received, example}`
 * (issues are data; one renderer, issue-text.ts, makes the text). Built only on failure, so the
 * valid path never pays for it. Unions are reduced to the branch the call meant (see unions.ts);
 * what to send is worded by issue-expected.ts, the allowed names and values by issue-choices.ts.
 */
import type { ErrorObject } from "ajv";
import type { ObservationIssue } from "../core/observation.js";
import type { JsonValue } from "../core/json.js";
import { memoize } from "../core/lru.js";
import { FORMAT_HINTS } from "./formats.js";
import { enumOf, NO_VALUES, propertiesOf } from "./issue-choices.js";
import { describeValue, exampleForPattern, exampleOf, requiredExample } from "./issue-expected.js";
import { codePoints, showTyped, showValue } from "./received.js";
import { reduceUnions } from "./unions.js";
import { fieldLabel, typePhrase } from "./labels.js";
import { isPlainObject } from "../core/json.js";
import { join } from "../core/pointer.js";

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
