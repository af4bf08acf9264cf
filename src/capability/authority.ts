/**
 * The capability authority: the runtime's one object for C = (R, O, P, E) (docs/authority.md,
 * Capabilities). It issues with a root key only it holds, verifies every block of a chain,
 * checks expiry, revocation, rights, objects, cost and argument bounds on every call, and spends
 * budgets atomically in the store.
 *
 * Order of checks: malformed → unknown_kid → bad_signature → expired → revoked → right_missing →
 * object_outside → cost_over → arg_out_of_bounds → budget_exhausted. The budget is spent last,
 * only when every other check passed, and atomically (`store.budgets.spend`). A call the runtime
 * later refuses for another reason (approval, idempotency, a failed execution) keeps its spend:
 * the budget bounds what was granted, not what succeeded.
 *
 * A chain charges every budget in it, leaf first: a child exhausting its own budget stops before
 * touching its parent's, so retries by one delegate cannot drain a budget its siblings share. If
 * a parent budget refuses after a child's was charged, the child's charge stands (a conservative
 * over-count; no budget is ever exceeded). A budget is spent under a key derived one-way from
 * the chain's tag at the block that states it (`budgetKey`, chain.ts), so a hand-made block
 * that copies another grant's block id names a budget of its own, never that grant's.
 */
import { assertStore, type Store } from "../idempotency/store.js";
import { ToolgateError } from "../core/errors.js";
import type { CallerCapability } from "../core/tool.js";
import { LruCache } from "../core/lru.js";
import { checkExpiry, checkRequest, deny, type AuthorizationRequest, type Decision, type Denial } from "./authorize.js";
import { attenuate as attenuateOffline } from "./attenuate.js";
import { TOKEN_VERSION, MalformedError, type Block } from "./block.js";
import { budgetKey, chainFingerprint, chainTag, holderKey, verifiedTags } from "./chain.js";
import { viewGrant, type GrantView } from "./grant.js";
import { blockFromInput, type GrantInput, type NarrowerInput } from "./input.js";
import type { KeyRing } from "./keys.js";
import { blockBytes, encodeToken, parseToken, TOKEN_PREFIX, type ParsedToken } from "./token.js";
import { revokeGrant } from "./revoke.js";

export interface CapabilityAuthorityOptions {
  keys: KeyRing;
  /** Revocations and budgets. Without it revocation is not checked and a grant with a budget is refused with
   * `store_required`. */
  store?: Store;
  /** Epoch ms; default Date.now. */
  now?: () => number;
  /** Tolerance past expiry for clock differences between replicas, ms. Default 0: a grant never outlives its stated
   * expiry. */
  skew_ms?: number;
}

/** What `inspect` returns: the blocks, the effective grant, and whether it verifies now. */
export interface Inspection {
  status: "valid" | Denial["code"];
  reason: string | null;
  blocks: Block[];
  grant: GrantView | null;
  /**
   * For a token whose chain verifies: each budget of the chain (leaf first), the block that
   * states it, the store key it is spent under (one-way, see `budgetKey`) and how much is spent
   * (null without a store). Empty when the chain does not verify.
   */
  budgets: Array<{ block_id: string; limit: number; key: string; spent: number | null }>;
}

/** Who holds a capability that verifies: the grant the operator issued, whatever was attenuated from it. */
export interface CapabilityHolder {
  /** One-way and the same for every token attenuated from that grant (`holderKey`). */
  key: string;
  /** The issued grant's id (the chain's first block). */
  grant: string;
}

export interface CapabilityAuthority {
  /** Signs a new grant with the current kid (or `grant.kid`); returns the token. */
  issue(grant: GrantInput & { kid?: string }): string;
  /** Verifies `token`, then appends a narrowing block (see `attenuate`). */
  attenuate(token: string, narrower: NarrowerInput): string;
  /** The capability check on every call. Never throws for a bad token or request; throws only when the store fails. */
  authorize(token: string, request: AuthorizationRequest): Promise<Decision>;
  inspect(token: string): Promise<Inspection>;
  /** Who holds `token` when it verifies now (chain, expiry, revocation); null otherwise. Never throws for a bad token;
   * throws only when the store fails. */
  holder(token: string): Promise<CapabilityHolder | null>;
  /** What `token` names when it verifies now (chain, expiry, revocation): its grant id and effective objects; null
   * otherwise. Never throws for a bad token; throws only when the store fails. */
  caller(token: string): Promise<CallerCapability | null>;
  /** Revokes a grant id (or a whole token's own id) and, through chain ids, every grant attenuated from it. */
  revoke(idOrToken: string, reason?: string): Promise<void>;
}

/** A token whose chain verified, with its tags (kept in memory only, never stored or shown). */
/** Block ids whose spend under the old keying is remembered. */
const LEGACY_MEMO = 4096;

type Verified = { ok: true; token: ParsedToken; tags: Buffer[] } | { ok: false; denial: Denial };

export function createCapabilityAuthority(options: CapabilityAuthorityOptions): CapabilityAuthority {
  const { keys, store } = options;
  if (store !== undefined) assertStore(store, "store");
  const now = options.now ?? Date.now;
  const skew_ms = options.skew_ms ?? 0;

  function verify(text: string): Verified {
    let token: ParsedToken;
    try {
      token = parseToken(text);
    } catch (err) {
      if (err instanceof MalformedError)
        return { ok: false, denial: deny("malformed", `the capability token does not parse: ${err.message}`) };
      throw err;
    }
    const kid = token.grant.kid;
    const key = keys.key(kid);
    if (!key) {
      return {
        ok: false,
        denial: deny(
          "unknown_kid",
          `the capability is signed with key id ${JSON.stringify(kid)}, which this runtime does not hold (rotated out?); ask for a new grant`,
        ),
      };
    }
    const tags = verifiedTags(key, token.bytes, token.tag);
    if (!tags) {
      return {
        ok: false,
        denial: deny(
          "bad_signature",
          "the capability's signature does not verify: it was altered or not issued by this runtime; present the token exactly as issued",
        ),
      };
    }
    return { ok: true, token, tags };
  }

  async function revokedDenial(token: ParsedToken, at: number): Promise<Denial | null> {
    if (!store) return null;
    const g = token.grant;
    const hit = await store.revocations.firstRevoked(g.chain_ids, at);
    if (hit === null) return null;
    const whose = hit === g.id ? "it" : `the grant it was delegated from (${hit})`;
    return deny("revoked", `the capability ${g.id} is revoked: ${whose} was revoked; ask for a new grant`, g.id);
  }

  /** Allows the call: synchronously when the chain has no budget, else after spending every budget. */
  function allow(v: Extract<Verified, { ok: true }>, cost: number): Decision | Promise<Decision> {
    const g = v.token.grant;
    // The fingerprint is a hash only an A3 approval needs: computed on first read.
    let fingerprint: string | undefined;
    let holder: string | undefined;
    const allowed = {
      allowed: true as const,
      grant_id: g.id,
      chain_ids: [...g.chain_ids],
      get chain_fingerprint() {
        return (fingerprint ??= chainFingerprint(v.tags));
      },
      // Read only for a call that brings its own idempotency key.
      get holder() {
        return (holder ??= holderKey(v.tags[0]!));
      },
    };
    return g.pred.budgets.length === 0 ? allowed : spendBudgets(v, cost, allowed);
  }

  async function spendBudgets(
    v: Extract<Verified, { ok: true }>,
    cost: number,
    allowed: Extract<Decision, { allowed: true }>,
  ): Promise<Decision> {
    const g = v.token.grant;
    if (!store)
      throw new ToolgateError(
        "store_required",
        `capability ${g.id} is bounded by a budget, which needs a store; create the authority with a store`,
      );
    let remaining = Infinity;
    for (const b of g.pred.budgets) {
      // Keyed by the chain's tag at the stating block, not its id: a holder chooses ids freely.
      // What earlier versions spent under the block id still counts against the limit.
      const limit = Math.max(0, b.limit - (await legacySpent(store, b.id)));
      const r = await store.budgets.spend(budgetKey(v.tags[b.block]!), cost, limit);
      if (!r.ok) {
        return deny(
          "budget_exhausted",
          `the call costs ${cost}; the capability's budget has ${r.remaining} of ${b.limit} left`,
          g.id,
        );
      }
      remaining = Math.min(remaining, r.remaining);
    }
    return { ...allowed, remaining_budget: remaining };
  }

  /**
   * Spend recorded under a budget block's id by versions that keyed budgets so. Nothing writes
   * there any more, so it is read once per block id and remembered (a bounded memo). A holder
   * who names a block after another grant's block id reads that grant's old spend: it only
   * lowers the holder's own budget.
   */
  const legacy = new LruCache<string, number>(LEGACY_MEMO);
  async function legacySpent(s: Store, blockId: string): Promise<number> {
    const known = legacy.get(blockId);
    if (known !== undefined) return known;
    const spent = await s.budgets.spent(blockId);
    legacy.set(blockId, spent);
    return spent;
  }

  return {
    issue(grant) {
      const at = now();
      const { kid: chosen, ...rest } = grant;
      const kid = chosen ?? keys.current;
      const key = keys.key(kid);
      if (!key)
        throw new ToolgateError(
          "unknown_kid",
          `cannot issue with kid ${JSON.stringify(kid)}: not in the key ring (kids: ${keys.kids.join(", ")})`,
        );
      const { block } = blockFromInput(rest, at, true);
      if (block.exp! <= at)
        throw new ToolgateError(
          "invalid_grant",
          `invalid grant: expires_at ${new Date(block.exp!).toISOString()} is not in the future`,
        );
      const root: Block = { ...block, v: TOKEN_VERSION, kid };
      const bytes = blockBytes(root);
      return encodeToken([bytes], chainTag(key, [bytes]));
    },

    attenuate(token, narrower) {
      const v = verify(token);
      if (!v.ok) throw new ToolgateError(v.denial.code, `cannot attenuate: ${v.denial.reason}`);
      return attenuateOffline(token, narrower, { now });
    },

    authorize(token, request) {
      const v = verify(token);
      if (!v.ok) return Promise.resolve(v.denial);
      const at = now();
      const expired = checkExpiry(v.token.grant, at, skew_ms);
      if (expired) return Promise.resolve(expired);
      // Without a store there is nothing to wait for: stay synchronous until the result.
      if (!store) return Promise.resolve(checkRequest(v.token.grant, request) ?? allow(v, request.cost ?? 1));
      return (async () =>
        (await revokedDenial(v.token, at)) ?? checkRequest(v.token.grant, request) ?? allow(v, request.cost ?? 1))();
    },

    async inspect(token) {
      let parsed: ParsedToken;
      try {
        parsed = parseToken(token);
      } catch (err) {
        if (err instanceof MalformedError)
          return { status: "malformed", reason: err.message, blocks: [], grant: null, budgets: [] };
        throw err;
      }
      const v = verify(token);
      const budgets = v.ok
        ? await Promise.all(
            parsed.grant.pred.budgets.map(async (b) => {
              const key = budgetKey(v.tags[b.block]!);
              return {
                block_id: b.id,
                limit: b.limit,
                key,
                spent: store ? (await store.budgets.spent(key)) + (await legacySpent(store, b.id)) : null,
              };
            }),
          )
        : [];
      const base = { blocks: parsed.blocks.map((b) => b.block), grant: viewGrant(parsed.grant), budgets };
      const at = now();
      const problem = v.ok ? (checkExpiry(parsed.grant, at, skew_ms) ?? (await revokedDenial(parsed, at))) : v.denial;
      return problem
        ? { status: problem.code, reason: problem.reason, ...base }
        : { status: "valid", reason: null, ...base };
    },

    async holder(token) {
      const v = verify(token);
      if (!v.ok) return null;
      const at = now();
      if (checkExpiry(v.token.grant, at, skew_ms) || (await revokedDenial(v.token, at))) return null;
      return { key: holderKey(v.tags[0]!), grant: v.token.grant.chain_ids[0]! };
    },

    async caller(token) {
      const v = verify(token);
      if (!v.ok) return null;
      const at = now();
      if (checkExpiry(v.token.grant, at, skew_ms) || (await revokedDenial(v.token, at))) return null;
      return { grant_id: v.token.grant.id, objects: v.token.grant.objects.map((o) => o.text) };
    },

    async revoke(idOrToken, reason) {
      if (!store)
        throw new ToolgateError(
          "store_required",
          "revocation needs a store; create the authority with a store (the same URL as idempotency)",
        );
      let until: number | null = null;
      let id = idOrToken;
      if (idOrToken.startsWith(TOKEN_PREFIX)) {
        const g = parseToken(idOrToken).grant;
        id = g.id;
        until = g.exp + skew_ms;
      }
      await revokeGrant(store, id, { reason: reason ?? null, until, now: now() });
    },
  };
}
