/**
 * The effective grant of a chain: the intersection of every block (docs/authority.md, "Attenuation":
 * a child holds no more than its parent). Computed from all blocks, so a hand-made
 * block that states something wider than its parent narrows nothing away and widens nothing.
 */
import type { ParsedBlock } from "./block.js";
import { intersectObjects, type CapObject } from "./objects.js";
import { conjoin, describeBounds, emptyPredicate, type EffectivePredicate } from "./predicates.js";

export interface EffectiveGrant {
  /** Id of the last block: this token's grant id. */
  id: string;
  /** Every block id, root first; revoking any of them revokes this token. */
  chain_ids: string[];
  kid: string;
  /** R: rights every block allows. */
  rights: string[];
  /** O: the exact intersection of every block's objects (for display and attenuation). */
  objects: CapObject[];
  /** Each block's own objects, root first; a target must lie within every one. */
  object_sets: CapObject[][];
  /**
   * Tools the calling tool must be among: the intersection over every block that names `tool:`
   * objects; null when no block does. (A `tool:` object is also an ordinary target.)
   */
  tools: string[] | null;
  /** P: the conjunction of every block's predicate. */
  pred: EffectivePredicate;
  /** E: the earliest expiry, epoch ms. */
  exp: number;
}

/** Folds the blocks of a chain into its effective grant. Block 0 must be first. */
export function effectiveGrant(blocks: readonly ParsedBlock[]): EffectiveGrant {
  const root = blocks[0]!.block;
  let rights = new Set(root.rights);
  let objects = blocks[0]!.objects!;
  const object_sets: CapObject[][] = [];
  const pred = emptyPredicate();
  let exp = root.exp!;
  let tools: string[] | null = null;
  for (const [index, { block, objects: objs }] of blocks.entries()) {
    if (block.rights) rights = new Set(block.rights.filter((r) => rights.has(r)));
    if (objs) {
      object_sets.push(objs);
      objects = intersectObjects(objects, objs);
      const named = objs.filter((o) => o.kind === "tool").map((o) => o.value);
      if (named.length > 0) tools = tools === null ? named : tools.filter((t) => named.includes(t));
    }
    conjoin(pred, block.pred, block.id, index);
    if (block.exp !== undefined) exp = Math.min(exp, block.exp);
  }
  return {
    id: blocks[blocks.length - 1]!.block.id,
    // Frozen: parsed tokens are cached and shared, and decisions hand this array out as is.
    chain_ids: Object.freeze(blocks.map((b) => b.block.id)) as string[],
    kid: root.kid!,
    rights: [...rights].sort(),
    objects,
    object_sets,
    tools,
    pred,
    exp,
  };
}

/** Plain JSON view of an effective grant, for `inspect` and the CLI. */
export interface GrantView {
  id: string;
  chain_ids: string[];
  kid: string;
  rights: string[];
  objects: string[];
  /** null: any tool. */
  tools: string[] | null;
  max_cost: number | null;
  budgets: Array<{ id: string; limit: number }>;
  args: Array<{ arg: string; max?: number; min?: number; oneOf?: Array<string | number | boolean | null> }>;
  expires_at: number;
  expires_at_iso: string;
}

export function viewGrant(g: EffectiveGrant): GrantView {
  return {
    id: g.id,
    chain_ids: [...g.chain_ids],
    kid: g.kid,
    rights: [...g.rights],
    objects: g.objects.map((o) => o.text),
    tools: g.tools === null ? null : [...g.tools],
    max_cost: g.pred.max_cost,
    budgets: g.pred.budgets.map((b) => ({ id: b.id, limit: b.limit })),
    args: [...g.pred.args].map(([arg, b]) => ({ arg, ...b })),
    expires_at: g.exp,
    expires_at_iso: new Date(g.exp).toISOString(),
  };
}

/** One line per component, for reasons and the CLI: `rights read,write; objects path:/ws; …`. */
export function summariseGrant(g: EffectiveGrant): string {
  const parts = [
    `rights ${g.rights.join(",") || "(none)"}`,
    `objects ${g.objects.map((o) => o.text).join(",") || "(none)"}`,
  ];
  if (g.tools !== null) parts.push(`tools ${g.tools.join(",") || "(none)"}`);
  if (g.pred.max_cost !== null) parts.push(`max_cost ${g.pred.max_cost}`);
  for (const b of g.pred.budgets) parts.push(`budget ${b.limit} (${b.id})`);
  for (const [arg, b] of g.pred.args) parts.push(describeBounds(arg, b));
  parts.push(`expires ${new Date(g.exp).toISOString()}`);
  return parts.join("; ");
}
