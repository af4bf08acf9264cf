/**
 * One block of a capability chain and its strict validation. Block 0 is issued by the runtime
 * and states every component of C = (R, O, P, E) plus the key id; each later block may state
 * any component again, only to narrow it (docs/authority.md, "Attenuation").
 *
 * Validation is closed: an unknown field in a block or predicate makes the token malformed,
 * because a caveat this runtime does not understand cannot be enforced and must not be ignored.
 */
import { ToolgateError } from "../core/errors.js";
import { parseObject, type CapObject } from "./objects.js";
import type { ArgBound, Predicate, Primitive } from "./predicates.js";
import { isPlainObject } from "../core/json.js";

export const TOKEN_VERSION = 1;

export interface Block {
  /** Token format version; block 0 only. */
  v?: number;
  /** Grant id: what `revoke` takes. Unique per block. */
  id: string;
  /** Key id of the root key; block 0 only. */
  kid?: string;
  rights?: string[];
  /** Normalised `kind:value` texts. */
  objects?: string[];
  pred?: Predicate;
  /** Absolute expiry, epoch milliseconds. */
  exp?: number;
}

/** A block with its objects parsed once. */
export interface ParsedBlock {
  block: Block;
  objects: CapObject[] | null;
}

/** A token or grant that does not parse; `code` is `malformed` so `authorize` can report it as such. */
export class MalformedError extends ToolgateError {
  constructor(message: string) {
    super("malformed", message);
    this.name = "MalformedError";
  }
}

const RIGHT = /^[a-z][a-z0-9_-]{0,31}$/;
const ID = /^[A-Za-z0-9_-]{1,64}$/;
const BLOCK_KEYS = new Set(["v", "id", "kid", "rights", "objects", "pred", "exp"]);
const PRED_KEYS = new Set(["max_cost", "budget", "args"]);

const isPrimitive = (v: unknown): v is Primitive => v === null || ["string", "number", "boolean"].includes(typeof v);

function bad(where: string, expected: string, received: unknown): never {
  const shown = received === undefined ? "nothing" : JSON.stringify(received);
  throw new MalformedError(
    `${where} must be ${expected}; received ${shown && shown.length > 80 ? shown.slice(0, 77) + "..." : shown}`,
  );
}

function amount(where: string, v: unknown): number {
  if (typeof v !== "number" || !Number.isFinite(v) || v < 0) bad(where, "a finite number ≥ 0", v);
  return v;
}

/** Validates rights: lower-case words such as read, write, execute, connect. */
export function checkRights(where: string, v: unknown): string[] {
  if (!Array.isArray(v) || v.length === 0) bad(where, 'a non-empty list of rights, e.g. ["read","write"]', v);
  for (const r of v)
    if (typeof r !== "string" || !RIGHT.test(r))
      bad(`${where} entry`, "a lower-case right such as read, write, execute or connect", r);
  return [...new Set(v as string[])].sort();
}

/** Validates and normalises objects (see objects.ts); duplicates collapse. */
export function checkObjects(where: string, v: unknown): CapObject[] {
  if (!Array.isArray(v) || v.length === 0) bad(where, 'a non-empty list of objects, e.g. ["path:/ws"]', v);
  const seen = new Map<string, CapObject>();
  for (const o of v) {
    if (typeof o !== "string") bad(`${where} entry`, "a string kind:value", o);
    try {
      const obj = parseObject(o);
      seen.set(obj.text, obj);
    } catch (err) {
      throw new MalformedError(`${where}: ${(err as Error).message}`);
    }
  }
  return [...seen.values()].sort((a, b) => (a.text < b.text ? -1 : a.text > b.text ? 1 : 0));
}

function checkArgBound(where: string, v: unknown): ArgBound {
  if (!isPlainObject(v) || typeof v.arg !== "string" || v.arg.length === 0)
    bad(where, 'an object {arg, max} | {arg, min} | {arg, oneOf}, e.g. {"arg":"amount","max":100}', v);
  const kinds = ["max", "min", "oneOf"].filter((k) => k in v);
  if (kinds.length !== 1 || Object.keys(v).length !== 2) bad(where, "exactly one of max, min or oneOf beside arg", v);
  if ("max" in v) return { arg: v.arg, max: finite(`${where}.max`, v.max) };
  if ("min" in v) return { arg: v.arg, min: finite(`${where}.min`, v.min) };
  const list = v.oneOf;
  if (!Array.isArray(list) || list.length === 0 || !list.every(isPrimitive))
    bad(`${where}.oneOf`, "a non-empty list of strings, numbers, booleans or null", list);
  return { arg: v.arg, oneOf: [...list] };
}

function finite(where: string, v: unknown): number {
  if (typeof v !== "number" || !Number.isFinite(v)) bad(where, "a finite number", v);
  return v;
}

/** Validates a predicate object; returns it without undefined members. */
export function checkPredicate(where: string, v: unknown): Predicate {
  if (!isPlainObject(v)) bad(where, "an object with max_cost, budget or args", v);
  for (const k of Object.keys(v))
    if (!PRED_KEYS.has(k))
      bad(`${where}.${k}`, "absent (unknown predicate kind: this runtime cannot enforce it)", v[k]);
  const out: Predicate = {};
  if (v.max_cost !== undefined) out.max_cost = amount(`${where}.max_cost`, v.max_cost);
  if (v.budget !== undefined) out.budget = amount(`${where}.budget`, v.budget);
  if (v.args !== undefined) {
    if (!Array.isArray(v.args) || v.args.length === 0)
      bad(`${where}.args`, "a non-empty list of argument bounds", v.args);
    out.args = v.args.map((b, i) => checkArgBound(`${where}.args[${i}]`, b));
  }
  return out;
}

/** Strictly validates a decoded block (block 0 needs v, kid, rights, objects and exp). */
export function checkBlock(v: unknown, index: number): ParsedBlock {
  const where = `block ${index}`;
  if (!isPlainObject(v)) bad(where, "a JSON object", v);
  for (const k of Object.keys(v))
    if (!BLOCK_KEYS.has(k)) bad(`${where}.${k}`, "absent (unknown caveat: this runtime cannot enforce it)", v[k]);
  if (typeof v.id !== "string" || !ID.test(v.id)) bad(`${where}.id`, "an id of letters, digits, _ and -", v.id);
  const block: Block = { id: v.id };
  if (index === 0) {
    if (v.v !== TOKEN_VERSION) bad(`${where}.v`, `${TOKEN_VERSION}`, v.v);
    if (typeof v.kid !== "string" || !ID.test(v.kid)) bad(`${where}.kid`, "a key id", v.kid);
    block.v = v.v;
    block.kid = v.kid;
    for (const k of ["rights", "objects", "exp"])
      if (v[k] === undefined) bad(`${where}.${k}`, "present in the first block", undefined);
  } else {
    if (v.v !== undefined) bad(`${where}.v`, "absent (only the first block carries the version)", v.v);
    if (v.kid !== undefined) bad(`${where}.kid`, "absent (only the first block names the key)", v.kid);
  }
  let objects: CapObject[] | null = null;
  if (v.rights !== undefined) block.rights = checkRights(`${where}.rights`, v.rights);
  if (v.objects !== undefined) {
    objects = checkObjects(`${where}.objects`, v.objects);
    block.objects = objects.map((o) => o.text);
  }
  if (v.pred !== undefined) block.pred = checkPredicate(`${where}.pred`, v.pred);
  if (v.exp !== undefined) {
    if (typeof v.exp !== "number" || !Number.isSafeInteger(v.exp) || v.exp <= 0)
      bad(`${where}.exp`, "epoch milliseconds (a positive integer)", v.exp);
    block.exp = v.exp;
  }
  return { block, objects };
}
