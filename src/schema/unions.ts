/**
 * Union failures name the branch the call meant instead of listing every branch's errors
 * (docs/schemas.md, "Tagged unions": without a discriminator the
 * validator cannot say which branch the call meant). Ajv reports every branch; this keeps:
 * the errors of the branch the discriminator selects, or one issue about the discriminator,
 * or for `T | null` the errors of T, or for an untagged union the closest branch.
 */
import type { ErrorObject } from "ajv";
import type { ObservationIssue } from "../core/observation.js";
import type { JsonValue } from "../core/json.js";
import { discriminatorOf } from "./lint/rules/unions.js";
import { escapeToken } from "../core/pointer.js";
import { isPlainObject } from "../core/json.js";
import { literalOf, typesOf } from "./lint/util.js";
import { localRefPath, lookup } from "./lint/walk.js";
import { fieldLabel, typePhrase } from "./labels.js";
import { showTyped, showValue } from "./received.js";

/** An issue made here, kept with the location of the union it replaced so an outer union can claim it. */
export interface Synthetic {
  issue: ObservationIssue;
  schemaPath: string;
  instancePath: string;
}
export type Item = ErrorObject | Synthetic;

const isUnionError = (e: Item): e is ErrorObject =>
  !("issue" in e) &&
  (e.keyword === "anyOf" ||
    (e.keyword === "oneOf" && !Array.isArray((e.params as { passingSchemas?: unknown }).passingSchemas)));

function resolver(root: unknown) {
  return (schema: unknown): { schema: unknown; pointer: string } | undefined => {
    let cur = schema;
    let at = "";
    for (let hop = 0; hop < 16 && isPlainObject(cur) && typeof cur.$ref === "string"; hop++) {
      const path = localRefPath(cur.$ref);
      const hit = path === undefined ? undefined : lookup(root, path);
      if (!hit?.found) return undefined;
      cur = hit.value;
      at = path!;
    }
    return { schema: cur, pointer: at };
  };
}

/** Schema-path prefixes under which branch i's errors appear (its own path, and where its `$ref`s lead). */
function branchPrefixes(union: ErrorObject, i: number, root: unknown): string[] {
  const prefixes = [`${union.schemaPath}/${i}/`];
  let cur: unknown = Array.isArray(union.schema) ? union.schema[i] : undefined;
  for (let hop = 0; hop < 16 && isPlainObject(cur) && typeof cur.$ref === "string"; hop++) {
    const path = localRefPath(cur.$ref);
    const hit = path === undefined ? undefined : lookup(root, path);
    if (!hit?.found) break;
    prefixes.push(`#${path}/`);
    cur = hit.value;
  }
  return prefixes;
}

const within = (path: string, base: string) => path === base || path.startsWith(base + "/");
const isNullOnly = (s: unknown) => isPlainObject(s) && (s.type === "null" || s.const === null);

/**
 * What a union's issues need from its schema alone (resolved branches, where their errors
 * appear, the discriminator, the type list), computed on its first failure and kept per
 * input schema and union location: a failing call then pays only for its own data.
 */
interface UnionPlan {
  schema: unknown[];
  branches: unknown[];
  prefixes: string[][];
  nullOnly: boolean[];
  /** The one branch that is not `null`-only, for `T | null`; -1 otherwise. */
  soleNonNull: number;
  /** Computed on first use (only records meet the discriminator check). */
  tag?: { name: string; keys: string[]; literals: unknown[]; list: string; segment: string } | null;
  /** `typePhrase` of every branch type, or null when the branches name none. */
  types?: string | null;
}

const plans = new WeakMap<object, Map<string, UnionPlan>>();

function planOf(
  u: ErrorObject & { schema: unknown[] },
  root: unknown,
  resolve: ReturnType<typeof resolver>,
): UnionPlan {
  const byPath = isPlainObject(root) ? (plans.get(root) ?? new Map<string, UnionPlan>()) : undefined;
  const known = byPath?.get(u.schemaPath);
  if (known && known.schema === u.schema) return known;
  const branches = u.schema.map((b) => resolve(b)?.schema ?? b);
  const nullOnly = branches.map(isNullOnly);
  const nonNull = nullOnly.flatMap((n, i) => (n ? [] : [i]));
  const plan: UnionPlan = {
    schema: u.schema,
    branches,
    prefixes: branches.map((_, i) => branchPrefixes(u, i, root)),
    nullOnly,
    soleNonNull: nonNull.length === 1 ? nonNull[0]! : -1,
  };
  if (byPath && isPlainObject(root)) {
    byPath.set(u.schemaPath, plan);
    plans.set(root, byPath);
  }
  return plan;
}

function tagOf(plan: UnionPlan, resolve: ReturnType<typeof resolver>): UnionPlan["tag"] {
  if (plan.tag !== undefined) return plan.tag;
  const objects = plan.branches.filter(isPlainObject);
  const disc = objects.length === plan.branches.length ? discriminatorOf(objects, (s) => resolve(s)) : undefined;
  if (!disc) return (plan.tag = null);
  const literals = objects.map((b) => {
    const props = b.properties as Record<string, unknown>;
    return literalOf(resolve(props[disc])?.schema)?.value;
  });
  const list = literals.map((l) => showValue(l)).join(", ");
  return (plan.tag = {
    name: disc,
    keys: literals.map((l) => JSON.stringify(l)),
    literals,
    list,
    segment: escapeToken(disc),
  });
}

function typesOfPlan(plan: UnionPlan): string | null {
  if (plan.types !== undefined) return plan.types;
  const types = [...new Set(plan.branches.flatMap((b) => (isPlainObject(b) ? typesOf(b) : [])))];
  return (plan.types = types.length > 0 ? typePhrase(types) : null);
}

/** The branch whose prefixes contain `schemaPath` (or name it exactly: `prefix` is `schemaPath` + "/"), or -1. */
function branchOf(prefixes: string[][], schemaPath: string): number {
  for (let i = 0; i < prefixes.length; i++) {
    for (const p of prefixes[i]!) {
      if (
        schemaPath.startsWith(p) ||
        (p.length === schemaPath.length + 1 && p.endsWith("/") && p.startsWith(schemaPath))
      )
        return i;
    }
  }
  return -1;
}

export function reduceUnions(errors: readonly ErrorObject[], root: unknown): readonly Item[] {
  if (!errors.some(isUnionError)) return errors;
  let items: Item[] = [...errors];
  const resolve = resolver(root);
  for (let k = 0; k < items.length; k++) {
    const u = items[k]!;
    if (!isUnionError(u) || !Array.isArray(u.schema)) continue;
    const plan = planOf(u as ErrorObject & { schema: unknown[] }, root, resolve);
    const groups: Item[][] = plan.branches.map(() => []);
    const rest: Item[] = [];
    for (let j = 0; j < k; j++) {
      const item = items[j]!;
      const branch = within(item.instancePath, u.instancePath) ? branchOf(plan.prefixes, item.schemaPath) : -1;
      if (branch >= 0) groups[branch]!.push(item);
      else rest.push(item);
    }
    const chosen = choose(u, plan, groups, resolve);
    items = [...rest, ...chosen, ...items.slice(k + 1)];
    k = rest.length + chosen.length - 1;
  }
  return items;
}

function choose(u: ErrorObject, plan: UnionPlan, groups: Item[][], resolve: ReturnType<typeof resolver>): Item[] {
  const data = u.data;
  if (data !== null && plan.soleNonNull >= 0) return groups[plan.soleNonNull]!;
  if (isPlainObject(data)) {
    const tag = tagOf(plan, resolve);
    if (tag) {
      const idx = tag.keys.indexOf(JSON.stringify(data[tag.name]));
      if (idx >= 0) return groups[idx]!;
      const path = `${u.instancePath}/${tag.segment}`;
      const list = tag.list;
      const missing = !(tag.name in data);
      return [
        synthetic(u, {
          path,
          code: missing ? "missing_field" : "invalid_union_tag",
          message: missing
            ? `${fieldLabel(path)} is required: it says which kind of ${fieldLabel(u.instancePath)} this is (one of ${list})`
            : `${fieldLabel(path)} must be one of ${list}`,
          expected: `one of ${list}`,
          ...(missing ? {} : { received: showValue(data[tag.name]) }),
          example: tag.literals[0] as JsonValue,
        }),
      ];
    }
  }
  const rootTypeMiss = (i: number) =>
    groups[i]!.some((e) => !("issue" in e) && e.keyword === "type" && e.instancePath === u.instancePath);
  const skipped = plan.branches.map((_, i) => rootTypeMiss(i) || plan.nullOnly[i]!);
  if (skipped.every(Boolean)) {
    const expected = typesOfPlan(plan);
    if (expected !== null) {
      return [
        synthetic(u, {
          path: u.instancePath,
          code: "invalid_type",
          message: `${fieldLabel(u.instancePath)} must be ${expected}`,
          expected,
          received: showTyped(data),
        }),
      ];
    }
  }
  // Untagged: the branch of the right type with the fewest errors is most likely the one meant.
  let best = -1;
  for (let i = 0; i < plan.branches.length; i++) {
    if (skipped[i]) continue;
    if (best < 0 || groups[i]!.length < groups[best]!.length) best = i;
  }
  return best >= 0 && groups[best]!.length > 0 ? groups[best]! : [u];
}

function synthetic(u: ErrorObject, issue: ObservationIssue): Synthetic {
  return { issue, schemaPath: u.schemaPath, instancePath: u.instancePath };
}
