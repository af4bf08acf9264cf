/**
 * `settle`: runs one call at most once per idempotency key (docs/idempotency.md),
 * with the fourth state, IN_DOUBT, that a naive record omits made explicit:
 *
 *   unseen ──claim──► IN_FLIGHT ──returns──► COMPLETED (repeats replay the result until the TTL)
 *                        │ throws NoEffectError ──► released (the next call runs)
 *                        │ throws / result not JSON / lease passes ──► IN_DOUBT
 *   IN_DOUBT ──probe──► applied → COMPLETED · not_applied → released, this call runs · unknown → stays
 *
 * Every transition after the claim is fenced by the owner token (`transitions.ts`).
 */
import { validateClientKey } from "../canonical/key.js";
import { NoEffectError, ToolgateError } from "../core/errors.js";
import type { JsonValue } from "../core/json.js";
import type { ProbeOutcome } from "../core/tool.js";
import { settleHint, type SettleOutcome } from "./outcome.js";
import { DEFAULT_TTL_MS, newOwnerToken } from "./record.js";
import { resolveRepeat } from "./repeat.js";
import { assertStore, type IdempotencyRecord, type Store } from "./store.js";
import { RecordTransitions, storableResult } from "./transitions.js";

export interface SettleOptions {
  /**
   * How long the claim holds, ms: longer than the worst-case execution plus the caller's timeout
   * and clock skew. Past it, the record reads IN_DOUBT and is never free to run again.
   */
  lease_ms: number;
  /** Settles an IN_DOUBT record by reading the environment (the tool's `probe`). */
  probe?: () => ProbeOutcome | Promise<ProbeOutcome>;
  /** SHA-256 of the canonical arguments (`fingerprint(args)`); a repeat with another one is refused. */
  fingerprint?: string | null;
  /** Tool name stored on the record, for listings. */
  tool?: string | null;
  /** Clock, epoch ms. Default `Date.now`. */
  now?: () => number;
  /** How long a COMPLETED record is kept, ms; null keeps it forever. Default 24 h. */
  ttl_ms?: number | null;
  /** Owner token of this attempt. Default: 128 random bits. */
  owner?: string;
}

/** What `execute` learns about its claim. */
export interface SettleClaim {
  key: string;
  owner: string;
  lease_until: number;
}

/** Options after defaults, shared by the modules of the state machine. */
export interface SettleContext {
  records: RecordTransitions;
  key: string;
  owner: string;
  lease_ms: number;
  ttl_ms: number | null;
  fingerprint: string | null;
  tool: string | null;
  now: () => number;
  probe: SettleOptions["probe"];
}

function context(store: Store, key: string, options: SettleOptions): SettleContext {
  // Derived keys always pass; a client-supplied key that slipped past the gateway is refused here, before any store call.
  assertStore(store, "settle: store");
  validateClientKey(key, "key");
  if (typeof options !== "object" || options === null) {
    throw new ToolgateError("invalid_option", `settle: options must be an object with lease_ms; received ${options === null ? "null" : typeof options}; e.g. settle(store, key, run, { lease_ms: 30000 })`);
  }
  if (!Number.isFinite(options.lease_ms) || options.lease_ms <= 0) {
    throw new ToolgateError("invalid_option", `settle: lease_ms must be a positive number of milliseconds; received ${String(options.lease_ms)}; e.g. 30000`);
  }
  const ttl = options.ttl_ms === undefined ? DEFAULT_TTL_MS : options.ttl_ms;
  if (ttl !== null && (!Number.isFinite(ttl) || ttl <= 0)) {
    throw new ToolgateError("invalid_option", `settle: ttl_ms must be a positive number of milliseconds or null (keep forever); received ${String(ttl)}`);
  }
  return {
    records: new RecordTransitions(store, key),
    key,
    owner: options.owner ?? newOwnerToken(),
    lease_ms: options.lease_ms,
    ttl_ms: ttl,
    fingerprint: options.fingerprint ?? null,
    tool: options.tool ?? null,
    now: options.now ?? Date.now,
    probe: options.probe,
  };
}

/**
 * Executes `execute` at most once for `key` over `store` and says what happened. Store
 * failures throw `StoreUnavailableError`; everything else is a `SettleOutcome`.
 */
export async function settle(store: Store, key: string, execute: (claim: SettleClaim) => unknown, options: SettleOptions): Promise<SettleOutcome> {
  return attempt(context(store, key, options), execute, { probed: false, claims: 0 });
}

/** Where an attempt stands: whether a probe already released the key once, and how many claims were tried. */
export interface AttemptState {
  probed: boolean;
  claims: number;
}

/** Claims tried before giving up on a key that keeps vanishing and reappearing under us. */
const MAX_CLAIMS = 4;

/** Claims and runs, or hands the existing record to `resolveRepeat`. */
export async function attempt(ctx: SettleContext, execute: (claim: SettleClaim) => unknown, state: AttemptState): Promise<SettleOutcome> {
  if (state.claims >= MAX_CLAIMS) {
    throw new ToolgateError("settle_contention", `settle: key ${ctx.key} changed state ${MAX_CLAIMS} times while this call tried to claim it; retry the call`);
  }
  const now = ctx.now();
  const lease_until = now + ctx.lease_ms;
  const claim = await ctx.records.claim({ owner: ctx.owner, lease_until, fingerprint: ctx.fingerprint, tool: ctx.tool, now });
  if (!claim.claimed) {
    return resolveRepeat(ctx, claim.record, state.probed, (probed) => attempt(ctx, execute, { probed: state.probed || probed, claims: state.claims + 1 }));
  }
  const outcome = await run(ctx, execute, claim.record);
  return state.probed && outcome.status === "executed" ? { ...outcome, after_probe: "not_applied" } : outcome;
}

async function run(ctx: SettleContext, execute: (claim: SettleClaim) => unknown, claimed: IdempotencyRecord): Promise<SettleOutcome> {
  const { records, owner } = ctx;
  let value: unknown;
  try {
    value = await execute({ key: ctx.key, owner, lease_until: claimed.lease_until });
  } catch (error) {
    if (error instanceof NoEffectError) {
      // The tool declares the failure happened before any effect: the one case that frees the key.
      if (await records.release(owner, "IN_FLIGHT", "not_started")) return { status: "released_no_effect", error };
      return lost(ctx, undefined, error);
    }
    const reason = `the tool threw before confirming its effect: ${(error as Error)?.message ?? String(error)}`;
    const record = await records.markInDoubt(claimed, reason, ctx.now());
    if (!record) return lost(ctx, undefined, error);
    return { status: "in_doubt", cause: "execute_failed", reason: `${reason}; the effect may have happened, so the key stays claimed; ${settleHint(ctx.key)}`, record, error };
  }
  const stored = storableResult(value);
  if (!stored.ok) {
    const reason = `the tool ran but its result is not JSON (${stored.reason}), so it cannot be stored for repeats`;
    const record = await records.markInDoubt(claimed, reason, ctx.now(), "happened");
    if (!record) return lost(ctx, undefined);
    return { status: "in_doubt", cause: "result_not_json", reason: `${reason}; the effect happened; return JSON data from the tool, then ${settleHint(ctx.key)}`, record };
  }
  const now = ctx.now();
  const record = await records.complete(claimed, stored.result, ctx.ttl_ms === null ? null : now + ctx.ttl_ms, now);
  if (!record) return lost(ctx, stored.result);
  return { status: "executed", result: stored.result, record };
}

/** The executor's fence no longer holds: its lease passed and another party moved the record. */
async function lost(ctx: SettleContext, result: JsonValue | undefined, error?: unknown): Promise<SettleOutcome> {
  const record = await ctx.records.get(ctx.now(), "happened");
  return {
    status: "in_doubt",
    cause: "lease_lost",
    reason: `this attempt finished after its lease; the record was moved to ${record?.state ?? "nothing (released)"} by another party and was not overwritten; ${settleHint(ctx.key)}`,
    record,
    ...(result !== undefined ? { result } : {}),
    ...(error !== undefined ? { error } : {}),
  };
}
