/**
 * The local half of the capability check (docs/authority.md): the operation is
 * among the rights, the target lies within the objects, the cost satisfies the predicate, and
 * the capability has not expired. Signature, revocation and budget, which need the key or the
 * store, are in authority.ts. Every reason is safe to show a model: it names what was asked and
 * what the grant allows, never a key.
 */
import type { GrantRequest } from "../core/tool.js";
import type { EffectiveGrant } from "./grant.js";
import { parseObject, withinAny, type CapObject } from "./objects.js";
import { memoize } from "../core/lru.js";
import { argViolation } from "./predicates.js";

/**
 * What `authorize` checks: the tool's `GrantRequest` (op, target, cost — what its `grant` returns,
 * or the runtime's default) plus who asks and with what, which a capability may also bound.
 */
export interface AuthorizationRequest extends GrantRequest {
  /** Tool name; when a block names `tool:` objects, the tool must be one of them. */
  tool?: string;
  /** The call's arguments, for argument bounds. */
  args?: unknown;
}

export type DenyCode =
  | "malformed"
  | "bad_signature"
  | "unknown_kid"
  | "right_missing"
  | "object_outside"
  | "cost_over"
  | "budget_exhausted"
  | "arg_out_of_bounds"
  | "expired"
  | "revoked";

export type Decision =
  | {
      allowed: true;
      grant_id: string;
      chain_ids: string[];
      /** A one-way fingerprint of this exact chain (never its tag): what an approval is bound to. */
      chain_fingerprint: string;
      /**
       * One-way and the same for every token attenuated from the issued grant this chain descends from
       * (`holderKey`): what a client-supplied idempotency key is scoped by, so holders of other grants never
       * share its records.
       */
      holder: string;
      remaining_budget?: number;
    }
  | { allowed: false; code: DenyCode; reason: string; grant_id?: string };

export type Denial = Extract<Decision, { allowed: false }>;

export function deny(code: DenyCode, reason: string, grant_id?: string): Denial {
  return grant_id === undefined ? { allowed: false, code, reason } : { allowed: false, code, reason, grant_id };
}

const list = (objs: readonly CapObject[]) => objs.map((o) => o.text).join(", ") || "nothing";

/** Expiry with skew: the grant is good while now ≤ exp + skew. */
export function checkExpiry(g: EffectiveGrant, now: number, skew_ms: number): Denial | null {
  if (now <= g.exp + skew_ms) return null;
  return deny(
    "expired",
    `the capability expired at ${new Date(g.exp).toISOString()} (now ${new Date(now).toISOString()}); ask for a new grant`,
    g.id,
  );
}

/** Rights, objects (target and tool), per-call cost and argument bounds, in that order. */
export function checkRequest(g: EffectiveGrant, req: AuthorizationRequest): Denial | null {
  const op = req.op;
  if (typeof op !== "string" || !g.rights.includes(op)) {
    return deny(
      "right_missing",
      `the call needs the right ${JSON.stringify(op)}; the capability allows ${g.rights.join(", ") || "no rights"}`,
      g.id,
    );
  }
  let target: CapObject;
  try {
    target = parseTarget(req.target);
  } catch (err) {
    return deny("object_outside", `the call's target is not a valid object: ${(err as Error).message}`, g.id);
  }
  for (const set of g.object_sets) {
    if (!withinAny(target, set)) {
      return deny(
        "object_outside",
        `the target ${target.text} is outside the capability's objects: ${list(g.objects)}`,
        g.id,
      );
    }
  }
  if (g.tools !== null && typeof req.tool !== "string") {
    return deny(
      "object_outside",
      `the capability is limited to the tools ${g.tools.join(", ") || "none"}, and the request names no tool; pass the calling tool's name as tool (e.g. tool: ${JSON.stringify(g.tools[0] ?? "file_view")})`,
      g.id,
    );
  }
  if (g.tools !== null && !g.tools.includes(req.tool as string)) {
    return deny(
      "object_outside",
      `the tool ${JSON.stringify(req.tool ?? null)} is not one the capability names: ${g.tools.join(", ") || "none"}`,
      g.id,
    );
  }
  const cost = req.cost ?? 1;
  if (typeof cost !== "number" || !Number.isFinite(cost) || cost < 0) {
    return deny("cost_over", `the call's cost must be a finite number ≥ 0; received ${JSON.stringify(cost)}`, g.id);
  }
  if (g.pred.max_cost !== null && cost > g.pred.max_cost) {
    return deny("cost_over", `the call costs ${cost}; the capability allows at most ${g.pred.max_cost} per call`, g.id);
  }
  const arg = argViolation(g.pred, req.args);
  if (arg !== null) return deny("arg_out_of_bounds", arg, g.id);
  return null;
}

/** `parseObject` for request targets, memoised: the same targets recur call after call. */
const parseTarget = memoize(1024, parseObject);
