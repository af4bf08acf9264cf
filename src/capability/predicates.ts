/**
 * The predicate P of a capability (docs/authority.md: a predicate that bounds
 * arguments and cost). Kept small and decidable so that implication — P_c ⇒ P_p
 * for attenuation — is checkable exactly:
 *
 * - `max_cost`: per-call ceiling; a call costing more is refused (`cost_over`).
 * - `budget`: cumulative ceiling, spent atomically in `store.budgets` under a key derived from
 *   the chain's tag at the block that states it (`budgetKey` in chain.ts), never from its id.
 * - `args`: bounds on call arguments — `{arg, max}`, `{arg, min}`, `{arg, oneOf}`. `arg` is a
 *   top-level argument name or a JSON Pointer (`/filters/limit`). A bounded argument that the
 *   call does not supply is refused: a grant fails closed.
 */
import { isPlainObject } from "../core/json.js";
export type Primitive = string | number | boolean | null;

export type ArgBound =
  { arg: string; max: number } | { arg: string; min: number } | { arg: string; oneOf: Primitive[] };

export interface Predicate {
  max_cost?: number;
  budget?: number;
  args?: ArgBound[];
}

/** The conjunction of every block's predicate, per argument and kind. */
export interface EffectivePredicate {
  max_cost: number | null;
  /**
   * Every budget in the chain, innermost (leaf) first: each call is charged to all of them.
   * `id` names the block for people; `block` is its index, whose tag keys the spend.
   */
  budgets: Array<{ id: string; limit: number; block: number }>;
  args: Map<string, { max?: number; min?: number; oneOf?: Primitive[] }>;
}

export function emptyPredicate(): EffectivePredicate {
  return { max_cost: null, budgets: [], args: new Map() };
}

/** Conjoins one block's predicate into `into` (mutates and returns it). */
export function conjoin(
  into: EffectivePredicate,
  p: Predicate | undefined,
  blockId: string,
  blockIndex: number,
): EffectivePredicate {
  if (!p) return into;
  if (p.max_cost !== undefined)
    into.max_cost = into.max_cost === null ? p.max_cost : Math.min(into.max_cost, p.max_cost);
  if (p.budget !== undefined) into.budgets.unshift({ id: blockId, limit: p.budget, block: blockIndex });
  for (const b of p.args ?? []) {
    const cur = into.args.get(b.arg) ?? {};
    if ("max" in b) cur.max = cur.max === undefined ? b.max : Math.min(cur.max, b.max);
    else if ("min" in b) cur.min = cur.min === undefined ? b.min : Math.max(cur.min, b.min);
    else cur.oneOf = cur.oneOf === undefined ? [...b.oneOf] : cur.oneOf.filter((v) => b.oneOf.includes(v));
    into.args.set(b.arg, cur);
  }
  return into;
}

/**
 * Where `child` (one block's predicate) states a bound wider than the parent's effective one,
 * the component name and a sentence saying so; null when the child implies the parent (P_c ⇒ P_p).
 */
export function widening(child: Predicate, parent: EffectivePredicate): { component: string; message: string } | null {
  if (child.max_cost !== undefined && parent.max_cost !== null && child.max_cost > parent.max_cost) {
    return { component: "max_cost", message: `max_cost ${child.max_cost} is above the parent's ${parent.max_cost}` };
  }
  if (child.budget !== undefined) {
    const least = Math.min(...parent.budgets.map((b) => b.limit));
    if (parent.budgets.length > 0 && child.budget > least) {
      return { component: "budget", message: `budget ${child.budget} is above the parent's ${least}` };
    }
  }
  for (const b of child.args ?? []) {
    const p = parent.args.get(b.arg);
    if (!p) continue;
    if ("max" in b && p.max !== undefined && b.max > p.max) {
      return { component: "args", message: `bound ${b.arg} ≤ ${b.max} is wider than the parent's ${b.arg} ≤ ${p.max}` };
    }
    if ("min" in b && p.min !== undefined && b.min < p.min) {
      return { component: "args", message: `bound ${b.arg} ≥ ${b.min} is wider than the parent's ${b.arg} ≥ ${p.min}` };
    }
    if ("oneOf" in b) {
      // A listed value the parent's bounds exclude is stated wider, even though the intersection would drop it.
      const extra = b.oneOf.filter((v) => !(p.oneOf === undefined || p.oneOf.includes(v)) || !inRange(v, p));
      if (extra.length > 0) {
        return {
          component: "args",
          message: `bound ${b.arg} oneOf ${JSON.stringify(b.oneOf)} adds ${JSON.stringify(extra)}, outside the parent's ${describeBounds(b.arg, p)}`,
        };
      }
    }
  }
  return null;
}

function inRange(v: Primitive, p: { max?: number; min?: number }): boolean {
  if (p.max === undefined && p.min === undefined) return true;
  return typeof v === "number" && (p.max === undefined || v <= p.max) && (p.min === undefined || v >= p.min);
}

/** Reads `arg` (a name or a JSON Pointer) from the call's arguments; undefined when absent. */
export function readArg(args: unknown, arg: string): unknown {
  if (!arg.startsWith("/")) return isPlainObject(args) && Object.hasOwn(args, arg) ? args[arg] : undefined;
  let cur: unknown = args;
  for (const raw of arg.slice(1).split("/")) {
    const key = raw.replace(/~1/g, "/").replace(/~0/g, "~");
    if (Array.isArray(cur) && /^(0|[1-9]\d*)$/.test(key)) cur = cur[Number(key)];
    else if (isPlainObject(cur) && Object.hasOwn(cur, key)) cur = cur[key];
    else return undefined;
  }
  return cur;
}

/** The first argument bound the call breaks, as a sentence safe to show a model; null when all hold. */
export function argViolation(pred: EffectivePredicate, args: unknown): string | null {
  for (const [arg, b] of pred.args) {
    const v = readArg(args, arg);
    if (v === undefined)
      return `the grant bounds argument ${arg} (${describeBounds(arg, b)}) but the call does not supply it`;
    if (b.oneOf !== undefined && !b.oneOf.includes(v as Primitive)) {
      return `argument ${arg} = ${JSON.stringify(v)} is not allowed; the grant allows ${describeBounds(arg, b)}`;
    }
    if (b.max !== undefined || b.min !== undefined) {
      if (typeof v !== "number" || !Number.isFinite(v))
        return `argument ${arg} = ${JSON.stringify(v)} is not a number; the grant allows ${describeBounds(arg, b)}`;
      if ((b.max !== undefined && v > b.max) || (b.min !== undefined && v < b.min)) {
        return `argument ${arg} = ${v} is out of bounds; the grant allows ${describeBounds(arg, b)}`;
      }
    }
  }
  return null;
}

/** `amount ≥ 1, amount ≤ 100`, `currency one of ["usd","eur"]`. */
export function describeBounds(arg: string, b: { max?: number; min?: number; oneOf?: Primitive[] }): string {
  const parts: string[] = [];
  if (b.min !== undefined) parts.push(`${arg} ≥ ${b.min}`);
  if (b.max !== undefined) parts.push(`${arg} ≤ ${b.max}`);
  if (b.oneOf !== undefined) parts.push(`${arg} one of ${JSON.stringify(b.oneOf)}`);
  return parts.join(", ");
}
