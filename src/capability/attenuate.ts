/**
 * Offline attenuation (docs/authority.md, "Attenuation"): a holder appends a block
 * that narrows the grant, without the root key — the new tag is HMAC(previous tag, block).
 * The rule is enforced here as a refusal, C_c ⪯ C_p ⇔ R_c ⊆ R_p ∧ O_c ⊑ O_p ∧
 * P_c ⇒ P_p ∧ E_c ≤ E_p, and verification enforces it anyway by intersecting every block.
 *
 * The holder cannot verify the parent (it has no key), so attenuation checks the parent's
 * claims as written; a forged parent yields a child that fails verification all the same.
 */
import { ToolgateError } from "../core/errors.js";
import { nextTag } from "./chain.js";
import { blockFromInput, type NarrowerInput } from "./input.js";
import { withinAny, type CapObject } from "./objects.js";
import { widening } from "./predicates.js";
import { blockBytes, encodeToken, parseToken } from "./token.js";

/** Which component of C = (R, O, P, E) an attenuation tried to widen. */
export type Component = "rights" | "objects" | "max_cost" | "budget" | "args" | "expiry";

/** Refusal of a block that is not narrower in every component; `component` names the first offender. */
export class AttenuationError extends ToolgateError {
  constructor(
    readonly component: Component,
    message: string,
  ) {
    super("attenuation_widens", `attenuation may only narrow a capability: ${message}`);
    this.name = "AttenuationError";
  }
}

/**
 * Object containment for attenuation. A `tool:` object in a child also restricts which tool may
 * call; naming one where the parent block names no tool narrows (restricts the tool), so it is
 * checked only against the parent's own `tool:` objects.
 */
function withinSet(o: CapObject, set: readonly CapObject[]): boolean {
  if (o.kind === "tool" && !set.some((x) => x.kind === "tool")) return true;
  return withinAny(o, set);
}

/**
 * Returns a child token that holds no more than `token`. Throws AttenuationError naming the
 * component when `narrower` is wider in any of them, ToolgateError `invalid_grant` for a
 * malformed narrowing and MalformedError for a token that does not parse. No key is needed.
 */
export function attenuate(token: string, narrower: NarrowerInput, options: { now?: () => number } = {}): string {
  const parent = parseToken(token);
  const g = parent.grant;
  const now = (options.now ?? Date.now)();
  const { block, objects } = blockFromInput(narrower, now, false);

  if (block.rights) {
    const extra = block.rights.filter((r) => !g.rights.includes(r));
    if (extra.length > 0)
      throw new AttenuationError(
        "rights",
        `rights ${extra.join(",")} are not held by the parent (it holds ${g.rights.join(",") || "none"})`,
      );
  }
  for (const o of objects ?? []) {
    if (!g.object_sets.every((set) => withinSet(o, set))) {
      throw new AttenuationError(
        "objects",
        `object ${o.text} is not within the parent's objects (${g.objects.map((x) => x.text).join(",") || "none"})`,
      );
    }
  }
  const wider = block.pred ? widening(block.pred, g.pred) : null;
  if (wider) throw new AttenuationError(wider.component as Component, wider.message);
  if (g.exp <= now) {
    throw new AttenuationError(
      "expiry",
      `the parent expired at ${new Date(g.exp).toISOString()}; a child of an expired grant is never valid`,
    );
  }
  if (block.exp !== undefined && block.exp > g.exp) {
    throw new AttenuationError(
      "expiry",
      `expiry ${new Date(block.exp).toISOString()} is after the parent's ${new Date(g.exp).toISOString()}`,
    );
  }

  const bytes = blockBytes(block);
  return encodeToken([...parent.bytes, bytes], nextTag(parent.tag, bytes));
}
