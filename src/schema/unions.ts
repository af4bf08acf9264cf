/**
 * Union failures name the branch the call meant instead of listing every branch's errors
 * (seed 000, "Schema Rules for Tool Definitions", rule 5: an untagged union "leaves the
 * validator unable to report which branch failed"). Ajv reports every branch; this keeps:
 * the errors of the branch the discriminator selects, or one issue about the discriminator,
 * or for `T | null` the errors of T, or for an untagged union the closest branch.
 */
import type { ErrorObject } from "ajv";
import type { ObservationIssue } from "../runtime/types.js";
import type { JsonValue } from "./types.js";
import { discriminatorOf } from "./lint/rules/unions.js";
import { isRecord, literalOf, typesOf } from "./lint/util.js";
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

const isUnionError = (e: Item): e is ErrorObject => !("issue" in e) && (e.keyword === "anyOf" || (e.keyword === "oneOf" && !Array.isArray((e.params as { passingSchemas?: unknown }).passingSchemas)));

function resolver(root: unknown) {
  return (schema: unknown): { schema: unknown; pointer: string } | undefined => {
    let cur = schema;
    let at = "";
    for (let hop = 0; hop < 16 && isRecord(cur) && typeof cur.$ref === "string"; hop++) {
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
  for (let hop = 0; hop < 16 && isRecord(cur) && typeof cur.$ref === "string"; hop++) {
    const path = localRefPath(cur.$ref);
    const hit = path === undefined ? undefined : lookup(root, path);
    if (!hit?.found) break;
    prefixes.push(`#${path}/`);
    cur = hit.value;
  }
  return prefixes;
}

const within = (path: string, base: string) => path === base || path.startsWith(base + "/");
const isNullOnly = (s: unknown) => isRecord(s) && (s.type === "null" || s.const === null);

export function reduceUnions(errors: readonly ErrorObject[], root: unknown): readonly Item[] {
  if (!errors.some(isUnionError)) return errors;
  let items: Item[] = [...errors];
  const resolve = resolver(root);
  for (let k = 0; k < items.length; k++) {
    const u = items[k]!;
    if (!isUnionError(u) || !Array.isArray(u.schema)) continue;
    const branches = (u.schema as unknown[]).map((b) => resolve(b)?.schema ?? b);
    const prefixes = branches.map((_, i) => branchPrefixes(u, i, root));
    const members: { item: Item; branch: number }[] = [];
    const rest: Item[] = [];
    items.slice(0, k).forEach((item) => {
      const sp = item.schemaPath;
      const branch = within(item.instancePath, u.instancePath) ? prefixes.findIndex((ps) => ps.some((p) => sp.startsWith(p) || sp + "/" === p)) : -1;
      if (branch >= 0) members.push({ item, branch });
      else rest.push(item);
    });
    const chosen = choose(u, branches, members, resolve);
    items = [...rest, ...chosen, ...items.slice(k + 1)];
    k = rest.length + chosen.length - 1;
  }
  return items;
}

function choose(u: ErrorObject, branches: unknown[], members: { item: Item; branch: number }[], resolve: ReturnType<typeof resolver>): Item[] {
  const of = (i: number) => members.filter((m) => m.branch === i).map((m) => m.item);
  const data = u.data;
  const nonNull = branches.map((b, i) => (isNullOnly(b) ? -1 : i)).filter((i) => i >= 0);
  if (data !== null && nonNull.length === 1) return of(nonNull[0]!);
  const objects = branches.filter(isRecord);
  if (isRecord(data) && objects.length === branches.length) {
    const disc = discriminatorOf(objects, (s) => resolve(s));
    if (disc) {
      const literals = objects.map((b) => {
        const props = b.properties as Record<string, unknown>;
        return literalOf(resolve(props[disc])?.schema)?.value;
      });
      const idx = literals.findIndex((l) => JSON.stringify(l) === JSON.stringify(data[disc]));
      if (idx >= 0) return of(idx);
      const path = `${u.instancePath}/${disc.replace(/~/g, "~0").replace(/\//g, "~1")}`;
      const list = literals.map((l) => showValue(l)).join(", ");
      const missing = !(disc in data);
      return [synthetic(u, {
        path,
        code: missing ? "missing_field" : "invalid_union_tag",
        message: missing ? `${fieldLabel(path)} is required: it says which kind of ${fieldLabel(u.instancePath)} this is (one of ${list})` : `${fieldLabel(path)} must be one of ${list}`,
        expected: `one of ${list}`,
        ...(missing ? {} : { received: showValue(data[disc]) }),
        example: literals[0] as JsonValue,
      })];
    }
  }
  const rootTypeMiss = (i: number) => of(i).some((e) => !("issue" in e) && e.keyword === "type" && e.instancePath === u.instancePath);
  if (branches.every((_, i) => rootTypeMiss(i) || isNullOnly(branches[i]))) {
    const types = [...new Set(branches.flatMap((b) => (isRecord(b) ? typesOf(b) : [])))];
    if (types.length > 0) {
      const expected = typePhrase(types);
      return [synthetic(u, { path: u.instancePath, code: "invalid_type", message: `${fieldLabel(u.instancePath)} must be ${expected}`, expected, received: showTyped(data) })];
    }
  }
  // Untagged: the branch of the right type with the fewest errors is most likely the one meant.
  let best = -1;
  for (let i = 0; i < branches.length; i++) {
    if (rootTypeMiss(i) || isNullOnly(branches[i])) continue;
    if (best < 0 || of(i).length < of(best).length) best = i;
  }
  return best >= 0 && of(best).length > 0 ? of(best) : [u];
}

function synthetic(u: ErrorObject, issue: ObservationIssue): Synthetic {
  return { issue, schemaPath: u.schemaPath, instancePath: u.instancePath };
}
