/**
 * One tool's input schema as GBNF rules (for `toGbnf`, grammar.ts). Expressed exactly:
 * objects with fixed properties (required ones always, optional ones optionally, all of them
 * in the order `properties` declares them — JSON objects are unordered, a grammar is not),
 * strings (minLength/maxLength up to `max_repeat`, default 64, via repetition), enum, const, number,
 * integer (with its minimum/maximum, exclusive or not, as digit ranges — see integer.ts),
 * anchored patterns (see pattern.ts), formats uuid and date,
 * boolean, null, type arrays, anyOf, arrays (minItems/maxItems up to `max_repeat`),
 * nested objects, maps (additionalProperties as a schema) and local $ref to $defs/definitions
 * (recursion included). Not expressible, reported as a gap, and widened to the nearest expressible
 * form: patterns outside pattern.ts's subset, formats other than uuid and date, ranges of
 * non-integer numbers, multipleOf, length bounds beside a pattern, bounds above `max_repeat`, oneOf
 * exclusivity, allOf/not/if, uniqueItems, prefixItems, contains, min/maxProperties.
 * Additional properties of an object that declares properties are never admitted, even
 * when the schema leaves them open (the grammar is then stricter, and says so).
 */
import type { ToolDescriptor } from "../../schema/descriptor.js";
import { escapeToken } from "../../core/pointer.js";
import { isPlainObject } from "../../core/json.js";
import { integerRange } from "./integer.js";
import { literal, ruleSafe } from "./literal.js";
import { patternToGbnf } from "./pattern.js";

/** Formats written as patterns: uuid exactly; date down to month 01–12 and day 01–31. */
const FORMAT_PATTERNS: Record<string, string> = {
  uuid: "^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$",
  date: "^[0-9]{4}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])$",
};
const FORMAT_NOTES: Record<string, string> = {
  date: 'format "date" is written as YYYY-MM-DD with month 01–12 and day 01–31; days past a month\'s end (e.g. 2026-02-30) are admitted',
};

export interface GbnfGap {
  tool: string;
  /** JSON Pointer into the tool's input schema. */
  pointer: string;
  message: string;
}

const NOTE_ONLY = new Set([
  "description",
  "title",
  "default",
  "examples",
  "$schema",
  "$id",
  "$comment",
  "deprecated",
  "readOnly",
  "writeOnly",
  "$defs",
  "definitions",
]);

/** Builds one tool's rules: `expr` turns a schema node into an expression, adding named rules as it goes. */
export class ToolGrammar {
  readonly rules: [string, string][] = [];
  private readonly refs = new Map<string, string>();
  private readonly used = new Set<string>();
  constructor(
    private readonly tool: ToolDescriptor,
    private readonly prefix: string,
    private readonly gaps: GbnfGap[],
    taken: Set<string>,
    private readonly bound: number,
  ) {
    this.used = taken;
  }

  private gap(pointer: string, message: string): void {
    this.gaps.push({ tool: this.tool.name, pointer, message });
  }

  /** A fresh rule name under this tool's prefix. */
  name(hint: string): string {
    let n = `${this.prefix}-${ruleSafe(hint)}`;
    for (let i = 2; this.used.has(n); i++) n = `${this.prefix}-${ruleSafe(hint)}-${i}`;
    this.used.add(n);
    return n;
  }

  rule(name: string, body: string): string {
    this.rules.push([name, body]);
    return name;
  }

  /** The expression admitting the JSON values `schema` accepts (or the nearest expressible superset). */
  expr(schema: unknown, ptr: string, hint: string): string {
    if (schema === true || (isPlainObject(schema) && Object.keys(schema).every((k) => NOTE_ONLY.has(k))))
      return "value";
    if (schema === false) {
      this.gap(ptr, "the schema false admits nothing; the grammar admits any value here");
      return "value";
    }
    if (!isPlainObject(schema)) return "value";
    if (typeof schema.$ref === "string") return this.ref(schema.$ref, ptr);
    if ("const" in schema) return literal(JSON.stringify(schema.const));
    if (Array.isArray(schema.enum))
      return schema.enum.length === 0 ? "value" : `(${schema.enum.map((v) => literal(JSON.stringify(v))).join(" | ")})`;
    for (const key of ["allOf", "not", "if"] as const) {
      if (key in schema) this.gap(`${ptr}/${key}`, `${key} cannot be expressed; the grammar ignores it`);
    }
    const union = Array.isArray(schema.anyOf) ? "anyOf" : Array.isArray(schema.oneOf) ? "oneOf" : null;
    if (union) {
      if (union === "oneOf")
        this.gap(`${ptr}/oneOf`, "oneOf's exactly-one rule cannot be expressed; branches are alternatives as in anyOf");
      const { [union]: branches, ...rest } = schema;
      const alts = (branches as unknown[]).map((b, i) =>
        this.expr(isPlainObject(b) ? { ...rest, ...b } : b, `${ptr}/${union}/${i}`, `${hint}-${i}`),
      );
      return `(${alts.join(" | ")})`;
    }
    if (Array.isArray(schema.type)) {
      return `(${schema.type.map((t) => this.expr({ ...schema, type: t }, ptr, `${hint}-${String(t)}`)).join(" | ")})`;
    }
    const type: unknown =
      schema.type ?? (isPlainObject(schema.properties) ? "object" : schema.items !== undefined ? "array" : undefined);
    switch (type) {
      case "string":
        return this.string(schema, ptr);
      case "integer":
        return this.integer(schema, ptr);
      case "number":
        for (const k of ["minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf"]) {
          if (k in schema) this.gap(`${ptr}/${k}`, `${k} on a number cannot be expressed; any number is admitted`);
        }
        return "number";
      case "boolean":
      case "null":
        return type as string;
      case "array":
        return this.array(schema, ptr, hint);
      case "object":
        return this.object(schema, ptr, hint);
      default:
        if (type !== undefined) this.gap(`${ptr}/type`, `unknown type ${JSON.stringify(type)}; any value is admitted`);
        return "value";
    }
  }

  /** Integer ranges are exact (canonical decimal forms only: no `1.0`, no leading zeros). */
  private integer(schema: Record<string, unknown>, ptr: string): string {
    if ("multipleOf" in schema) this.gap(`${ptr}/multipleOf`, "multipleOf cannot be expressed; ignored");
    const num = (k: string) =>
      typeof schema[k] === "number" && Number.isFinite(schema[k]) ? (schema[k] as number) : undefined;
    const lows = [
      num("minimum") !== undefined ? Math.ceil(num("minimum")!) : -Infinity,
      num("exclusiveMinimum") !== undefined ? Math.floor(num("exclusiveMinimum")!) + 1 : -Infinity,
    ];
    const highs = [
      num("maximum") !== undefined ? Math.floor(num("maximum")!) : Infinity,
      num("exclusiveMaximum") !== undefined ? Math.ceil(num("exclusiveMaximum")!) - 1 : Infinity,
    ];
    const lo = Math.max(...lows);
    const hi = Math.min(...highs);
    if (lo === -Infinity && hi === Infinity) return "integer";
    if ((Number.isFinite(lo) && !Number.isSafeInteger(lo)) || (Number.isFinite(hi) && !Number.isSafeInteger(hi))) {
      this.gap(ptr, `integer bounds beyond ±2^53 cannot be expressed; any integer is admitted`);
      return "integer";
    }
    const range = integerRange(lo, hi);
    if (range === null) {
      this.gap(ptr, `the integer range [${lo}, ${hi}] is empty; any integer is admitted`);
      return "integer";
    }
    return range;
  }

  private ref(ref: string, ptr: string): string {
    const known = this.refs.get(ref);
    if (known) return known;
    const m = /^#\/(\$defs|definitions)\/(.+)$/.exec(ref);
    const defs = m ? this.tool.inputSchema[m[1]!] : undefined;
    const key = m ? m[2]!.replace(/~1/g, "/").replace(/~0/g, "~") : "";
    if (!m || !isPlainObject(defs) || !(key in defs)) {
      this.gap(`${ptr}/$ref`, `$ref ${ref} is not a local #/$defs/… reference that resolves; any value is admitted`);
      return "value";
    }
    const name = this.name(`def-${key}`);
    this.refs.set(ref, name); // set before expanding, so a recursive reference finds it
    this.rule(name, this.expr(defs[key], `/${m[1]}/${escapeToken(key)}`, `def-${key}`));
    return name;
  }

  private string(schema: Record<string, unknown>, ptr: string): string {
    // A pattern (or a format written as one) replaces the length bounds: a grammar cannot intersect the two.
    const pattern =
      typeof schema.pattern === "string"
        ? schema.pattern
        : typeof schema.format === "string"
          ? FORMAT_PATTERNS[schema.format]
          : undefined;
    if (typeof schema.format === "string") {
      if (FORMAT_PATTERNS[schema.format] === undefined)
        this.gap(
          `${ptr}/format`,
          `format ${JSON.stringify(schema.format)} cannot be expressed; any string is admitted`,
        );
      else if (typeof schema.pattern === "string")
        this.gap(`${ptr}/format`, `format ${JSON.stringify(schema.format)} is not enforced together with a pattern`);
      else if (FORMAT_NOTES[schema.format]) this.gap(`${ptr}/format`, FORMAT_NOTES[schema.format]!);
    }
    if (pattern !== undefined) {
      const r = patternToGbnf(pattern);
      if ("expr" in r) {
        for (const k of ["minLength", "maxLength"])
          if (k in schema) this.gap(`${ptr}/${k}`, `${k} is not enforced together with a pattern`);
        return `"\\"" ${r.expr} "\\""`;
      }
      if (typeof schema.pattern === "string")
        this.gap(
          `${ptr}/pattern`,
          `pattern ${JSON.stringify(pattern)} cannot be expressed (${r.reason}); any string is admitted`,
        );
    }
    const min = typeof schema.minLength === "number" ? schema.minLength : 0;
    const max = typeof schema.maxLength === "number" ? schema.maxLength : undefined;
    if (min > this.bound) this.gap(`${ptr}/minLength`, `minLength ${min} is above ${this.bound}; not enforced`);
    if (max !== undefined && max > this.bound)
      this.gap(`${ptr}/maxLength`, `maxLength ${max} is above ${this.bound}; not enforced`);
    const lo = min > this.bound ? 0 : min;
    const hi = max !== undefined && max <= this.bound ? max : undefined;
    if (lo === 0 && hi === undefined) return "string";
    return `"\\"" char{${lo},${hi ?? ""}} "\\""`;
  }

  private array(schema: Record<string, unknown>, ptr: string, hint: string): string {
    for (const k of ["uniqueItems", "prefixItems", "contains", "minContains", "maxContains", "unevaluatedItems"]) {
      if (k in schema && schema[k] !== false) this.gap(`${ptr}/${k}`, `${k} cannot be expressed; ignored`);
    }
    if (Array.isArray(schema.items))
      this.gap(`${ptr}/items`, "tuple-form items cannot be expressed; any items are admitted");
    const item =
      isPlainObject(schema.items) || typeof schema.items === "boolean"
        ? this.expr(schema.items, `${ptr}/items`, `${hint}-item`)
        : "value";
    let min = typeof schema.minItems === "number" ? schema.minItems : 0;
    let max = typeof schema.maxItems === "number" ? schema.maxItems : undefined;
    if (min > this.bound) {
      this.gap(`${ptr}/minItems`, `minItems ${min} is above ${this.bound}; not enforced`);
      min = 0;
    }
    if (max !== undefined && max > this.bound) {
      this.gap(`${ptr}/maxItems`, `maxItems ${max} is above ${this.bound}; not enforced`);
      max = undefined;
    }
    if (max === 0) return `"[" ws "]"`;
    const more =
      max === undefined
        ? `( ws "," ws ${item} )${min > 1 ? `{${min - 1},}` : "*"}`
        : `( ws "," ws ${item} ){${Math.max(min - 1, 0)},${max - 1}}`;
    return min === 0 ? `"[" ws ( ${item} ${more} )? ws "]"` : `"[" ws ${item} ${more} ws "]"`;
  }

  private object(schema: Record<string, unknown>, ptr: string, hint: string): string {
    for (const k of [
      "minProperties",
      "maxProperties",
      "propertyNames",
      "patternProperties",
      "dependentRequired",
      "dependentSchemas",
    ]) {
      if (k in schema) this.gap(`${ptr}/${k}`, `${k} cannot be expressed; ignored`);
    }
    const props = isPlainObject(schema.properties) ? schema.properties : {};
    const required = new Set(Array.isArray(schema.required) ? (schema.required as string[]) : []);
    const keys = [...Object.keys(props), ...[...required].filter((r) => !(r in props))];
    if (keys.length === 0) {
      // A map: any keys, values of the additionalProperties schema.
      if (schema.additionalProperties === false) return `"{" ws "}"`;
      const v = isPlainObject(schema.additionalProperties)
        ? this.expr(schema.additionalProperties, `${ptr}/additionalProperties`, `${hint}-value`)
        : "value";
      return v === "value" ? "object" : `"{" ws ( string ws ":" ws ${v} ( ws "," ws string ws ":" ws ${v} )* )? ws "}"`;
    }
    if (schema.additionalProperties !== false) {
      this.gap(
        `${ptr}/additionalProperties`,
        "the object is open, but the grammar admits only its declared properties",
      );
    }
    const members = keys.map(
      (k) =>
        `${literal(JSON.stringify(k))} ws ":" ws ${this.expr(props[k], `${ptr}/properties/${escapeToken(k)}`, `${hint}-${k}`)}`,
    );
    const optional = keys.map((k) => !required.has(k));
    if (!optional.some(Boolean)) return `"{" ws ${members.join(` ws "," ws `)} ws "}"`;
    // start_i: members i.. with none written yet; after_i: members i.., each after a comma.
    const base = this.name(hint);
    const after = keys.map((_, i) => `${base}-a${i}`);
    const start = keys.map((_, i) => `${base}-s${i}`);
    const tail = (i: number) => (i + 1 < keys.length ? ` ${after[i + 1]}` : "");
    for (let i = keys.length - 1; i >= 0; i--) {
      const afterBody = optional[i] ? `( ws "," ws ${members[i]} )?${tail(i)}` : `ws "," ws ${members[i]}${tail(i)}`;
      this.rule(after[i]!, afterBody.trim());
      const rest = i + 1 < keys.length ? start[i + 1]! : "";
      const startBody = !optional[i]
        ? `${members[i]}${tail(i)}`
        : rest
          ? `${members[i]}${tail(i)} | ${rest}`
          : `( ${members[i]}${tail(i)} )?`;
      this.rule(start[i]!, startBody.trim());
    }
    return `"{" ws ${start[0]} ws "}"`;
  }
}
