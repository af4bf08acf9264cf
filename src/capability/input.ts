/**
 * What callers pass to `issue` and `attenuate`, and its conversion into a block. Errors here
 * are operator/caller errors (`invalid_grant`), named by field with the fix.
 */
import { randomBytes } from "node:crypto";
import { ToolgateError } from "../core/errors.js";
import { checkObjects, checkPredicate, checkRights, MalformedError, type Block } from "./block.js";
import type { CapObject } from "./objects.js";
import type { ArgBound, Predicate } from "./predicates.js";

/** A grant to issue: C = (R, O, P, E). Give `expires_at` (epoch ms) or `ttl_ms` (from now). */
export interface GrantInput {
  rights: string[];
  objects: string[];
  /** P: per-call cost ceiling. */
  max_cost?: number;
  /** P: cumulative budget, spent atomically in the store. */
  budget?: number;
  /** P: argument bounds. */
  args?: ArgBound[];
  expires_at?: number;
  ttl_ms?: number;
}

/** A narrowing: any component of GrantInput; an absent one keeps the parent's. */
export type NarrowerInput = Partial<GrantInput>;

/** A fresh grant id: `cap_` and 16 URL-safe random characters (96 bits). */
export function newGrantId(): string {
  return "cap_" + randomBytes(12).toString("base64url");
}

function invalid(err: unknown): never {
  if (err instanceof MalformedError) throw new ToolgateError("invalid_grant", `invalid grant: ${err.message}`);
  throw err;
}

/** Converts an input into a block (id assigned) plus its parsed objects; `now` resolves `ttl_ms`. */
export function blockFromInput(
  input: NarrowerInput,
  now: number,
  root: boolean,
): { block: Block; objects: CapObject[] | null } {
  if (typeof input !== "object" || input === null)
    throw new ToolgateError(
      "invalid_grant",
      "invalid grant: expected an object with rights, objects, max_cost, budget, args, expires_at or ttl_ms",
    );
  const known = new Set(["rights", "objects", "max_cost", "budget", "args", "expires_at", "ttl_ms"]);
  for (const k of Object.keys(input)) {
    if (!known.has(k))
      throw new ToolgateError(
        "invalid_grant",
        `invalid grant: unknown field ${k}; expected rights, objects, max_cost, budget, args, expires_at or ttl_ms`,
      );
  }
  const block: Block = { id: newGrantId() };
  let objects: CapObject[] | null = null;
  try {
    if (input.rights !== undefined || root) block.rights = checkRights("rights", input.rights);
    if (input.objects !== undefined || root) {
      objects = checkObjects("objects", input.objects);
      block.objects = objects.map((o) => o.text);
    }
    const raw: Record<string, unknown> = {};
    for (const k of ["max_cost", "budget", "args"] as const) if (input[k] !== undefined) raw[k] = input[k];
    if (Object.keys(raw).length > 0) block.pred = checkPredicate("predicate", raw) as Predicate;
  } catch (err) {
    invalid(err);
  }
  const exp = expiry(input, now);
  if (exp !== undefined) block.exp = exp;
  else if (root)
    throw new ToolgateError(
      "invalid_grant",
      "invalid grant: a grant needs an expiry; give expires_at (epoch ms) or ttl_ms, e.g. ttl_ms: 3600000 for one hour",
    );
  return { block, objects };
}

function expiry(input: NarrowerInput, now: number): number | undefined {
  if (input.expires_at !== undefined && input.ttl_ms !== undefined) {
    throw new ToolgateError("invalid_grant", "invalid grant: give expires_at or ttl_ms, not both");
  }
  if (input.ttl_ms !== undefined) {
    if (typeof input.ttl_ms !== "number" || !Number.isSafeInteger(input.ttl_ms) || input.ttl_ms <= 0) {
      throw new ToolgateError(
        "invalid_grant",
        `invalid grant: ttl_ms must be a positive integer of milliseconds; received ${JSON.stringify(input.ttl_ms)}`,
      );
    }
    return now + input.ttl_ms;
  }
  if (input.expires_at !== undefined) {
    if (typeof input.expires_at !== "number" || !Number.isSafeInteger(input.expires_at) || input.expires_at <= 0) {
      throw new ToolgateError(
        "invalid_grant",
        `invalid grant: expires_at must be epoch milliseconds; received ${JSON.stringify(input.expires_at)}`,
      );
    }
    return input.expires_at;
  }
  return undefined;
}
