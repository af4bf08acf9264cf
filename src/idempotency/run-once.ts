/**
 * `runOnce`: runs one call at most once per idempotency key. The key's endpoint record has four
 * states (ARCHITECTURE.md, "idempotency/"), and each is one branch of this module:
 *
 *   unseen ──claim──► IN_FLIGHT ──returns──► COMPLETED (repeats replay the result until the TTL)
 *                        │ throws NoEffectError ──► released (the next call runs)
 *                        │ throws / result not JSON / lease passes ──► IN_DOUBT
 *   IN_DOUBT ──probe──► applied → COMPLETED · not_applied → released, this call runs · unknown → stays
 *
 * `runOnce` claims the key. A won claim is the unseen branch, `run`; a lost one goes to `repeat`,
 * a switch on the state the record reads as now (`record.ts` `effectiveState`, the one test of a
 * passed lease): COMPLETED replays, IN_FLIGHT is refused, IN_DOUBT goes to `reconcile` when the
 * tool has a probe. Every transition after the claim is fenced by the owner token
 * (`transitions.ts`); a branch that finds the record moved under it asks `runOnce` to claim again.
 */
import { validateClientKey } from "../canonical/key.js";
import { NoEffectError, ToolgateError } from "../core/errors.js";
import type { JsonValue } from "../core/json.js";
import type { ProbeOutcome } from "../core/tool.js";
import { inDoubtHint, type RunOnceOutcome } from "./outcome.js";
import { DEFAULT_TTL_MS, effectiveState, newOwnerToken, retryAfterMs } from "./record.js";
import { assertStore, type IdempotencyRecord, type Store } from "./store.js";
import { RecordTransitions, storableResult } from "./transitions.js";

export interface RunOnceOptions {
  /**
   * How long the claim holds, ms: longer than the worst-case execution plus the caller's timeout
   * and clock skew. Past it, the record reads IN_DOUBT and is never free to run again.
   */
  lease_ms: number;
  /** Tells whether the effect of an IN_DOUBT call happened, by reading the environment (the tool's `probe`). */
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
export interface RunOnceClaim {
  key: string;
  owner: string;
  lease_until: number;
}

/** The options after defaults, with the key's fenced transitions: what every branch reads. */
interface Attempt {
  records: RecordTransitions;
  key: string;
  owner: string;
  lease_ms: number;
  ttl_ms: number | null;
  fingerprint: string | null;
  tool: string | null;
  now: () => number;
  probe: RunOnceOptions["probe"];
}

type Execute = (claim: RunOnceClaim) => unknown;

/**
 * What a branch answers instead of an outcome when this call must claim the key again: the
 * record moved under it (`CLAIM_AGAIN`), or a probe found the effect not applied and the key is
 * free on this call's behalf (`RUN_AFTER_PROBE`: the call then runs, and probes no more).
 */
const CLAIM_AGAIN = Symbol("claim again");
const RUN_AFTER_PROBE = Symbol("run after probe");
type Step = RunOnceOutcome | typeof CLAIM_AGAIN | typeof RUN_AFTER_PROBE;

/** Claims tried before giving up on a key that keeps vanishing and reappearing under us. */
const MAX_CLAIMS = 4;

/**
 * Executes `execute` at most once for `key` over `store` and says what happened. Store
 * failures throw `StoreUnavailableError`; everything else is a `RunOnceOutcome`.
 */
export async function runOnce(
  store: Store,
  key: string,
  execute: Execute,
  options: RunOnceOptions,
): Promise<RunOnceOutcome> {
  const a = attempt(store, key, options);
  let probed = false;
  for (let claims = 0; claims < MAX_CLAIMS; claims++) {
    const now = a.now();
    const claim = await a.records.claim({
      owner: a.owner,
      lease_until: now + a.lease_ms,
      fingerprint: a.fingerprint,
      tool: a.tool,
      now,
    });
    const step = claim.claimed ? await run(a, execute, claim.record) : await repeat(a, claim.record, probed);
    if (step === RUN_AFTER_PROBE) probed = true;
    else if (step !== CLAIM_AGAIN)
      return probed && step.status === "executed" ? { ...step, after_probe: "not_applied" } : step;
  }
  throw new ToolgateError(
    "settle_contention",
    `runOnce: key ${a.key} changed state ${MAX_CLAIMS} times while this call tried to claim it; retry the call`,
  );
}

function attempt(store: Store, key: string, options: RunOnceOptions): Attempt {
  // Derived keys always pass; a client-supplied key that slipped past the gateway is refused here, before any store
  // call.
  assertStore(store, "runOnce: store");
  validateClientKey(key, "key");
  if (typeof options !== "object" || options === null) {
    throw new ToolgateError(
      "invalid_option",
      `runOnce: options must be an object with lease_ms; received ${options === null ? "null" : typeof options}; e.g. runOnce(store, key, run, { lease_ms: 30000 })`,
    );
  }
  if (!Number.isFinite(options.lease_ms) || options.lease_ms <= 0) {
    throw new ToolgateError(
      "invalid_option",
      `runOnce: lease_ms must be a positive number of milliseconds; received ${String(options.lease_ms)}; e.g. 30000`,
    );
  }
  const ttl = options.ttl_ms === undefined ? DEFAULT_TTL_MS : options.ttl_ms;
  if (ttl !== null && (!Number.isFinite(ttl) || ttl <= 0)) {
    throw new ToolgateError(
      "invalid_option",
      `runOnce: ttl_ms must be a positive number of milliseconds or null (keep forever); received ${String(ttl)}`,
    );
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

/** Unseen, now claimed (IN_FLIGHT): run the effect, then record COMPLETED, released or IN_DOUBT. */
async function run(a: Attempt, execute: Execute, claimed: IdempotencyRecord): Promise<RunOnceOutcome> {
  const { records, owner } = a;
  let value: unknown;
  try {
    value = await execute({ key: a.key, owner, lease_until: claimed.lease_until });
  } catch (error) {
    if (error instanceof NoEffectError) {
      // The tool declares the failure happened before any effect: the one case that frees the key.
      if (await records.release(owner, "IN_FLIGHT", "not_started")) return { status: "released_no_effect", error };
      return lost(a, undefined, error);
    }
    const reason = `the tool threw before confirming its effect: ${(error as Error)?.message ?? String(error)}`;
    const record = await records.markInDoubt(claimed, reason, a.now());
    if (!record) return lost(a, undefined, error);
    return {
      status: "in_doubt",
      cause: "execute_failed",
      reason: `${reason}; the effect may have happened, so the key stays claimed; ${inDoubtHint(a.key)}`,
      record,
      error,
    };
  }
  const stored = storableResult(value);
  if (!stored.ok) {
    const reason = `the tool ran but its result is not JSON (${stored.reason}), so it cannot be stored for repeats`;
    const record = await records.markInDoubt(claimed, reason, a.now(), "happened");
    if (!record) return lost(a, undefined);
    return {
      status: "in_doubt",
      cause: "result_not_json",
      reason: `${reason}; the effect happened; return JSON data from the tool, then ${inDoubtHint(a.key)}`,
      record,
    };
  }
  const now = a.now();
  const record = await records.complete(claimed, stored.result, a.ttl_ms === null ? null : now + a.ttl_ms, now);
  if (!record) return lost(a, stored.result);
  return { status: "executed", result: stored.result, record };
}

/** The executor's fence no longer holds: its lease passed and another party moved the record. */
async function lost(a: Attempt, result: JsonValue | undefined, error?: unknown): Promise<RunOnceOutcome> {
  const record = await a.records.get(a.now(), "happened");
  return {
    status: "in_doubt",
    cause: "lease_lost",
    reason: `this attempt finished after its lease; the record was moved to ${record?.state ?? "nothing (released)"} by another party and was not overwritten; ${inDoubtHint(a.key)}`,
    record,
    ...(result !== undefined ? { result } : {}),
    ...(error !== undefined ? { error } : {}),
  };
}

/** The claim found `record`: the branch of the state it reads as now. `probed`: a probe already freed the key once for
 * this call. */
async function repeat(a: Attempt, record: IdempotencyRecord, probed: boolean): Promise<Step> {
  if (a.fingerprint !== null && record.fingerprint !== null && record.fingerprint !== a.fingerprint) {
    return {
      status: "key_reused",
      expected_fingerprint: record.fingerprint,
      received_fingerprint: a.fingerprint,
      record,
    };
  }
  const now = a.now();
  switch (effectiveState(record, now)) {
    case "COMPLETED":
      return replay(record, "stored");
    case "IN_FLIGHT":
      return inFlight(record, now);
    case "IN_DOUBT": {
      if (record.state === "IN_DOUBT") return inDoubt(a, record, "unsettled", probed);
      // Stored IN_FLIGHT whose lease passed: record it IN_DOUBT, fenced by the dead executor's owner token.
      const doubted = await a.records.expireLease(record, now);
      // Fence failed: the executor completed, or someone else moved the record first. Look again.
      return doubted ? inDoubt(a, doubted, "lease_expired", probed) : CLAIM_AGAIN;
    }
  }
}

function inDoubt(
  a: Attempt,
  record: IdempotencyRecord,
  cause: "lease_expired" | "unsettled",
  probed: boolean,
): Step | Promise<Step> {
  // One probe per call: after a probe released the key and another caller claimed it, this call reports rather than
  // probing again.
  if (a.probe && !probed) return reconcile(a, a.probe, record);
  const why = record.error ?? "the effect of an earlier attempt is unknown";
  return {
    status: "in_doubt",
    cause,
    reason: `the call is IN_DOUBT: ${why}; repeats are refused so the effect cannot happen twice; ${inDoubtHint(a.key)}`,
    record,
  };
}

/**
 * IN_DOUBT with a probe: the tool reads the environment and the record becomes COMPLETED or is
 * released. The prober first takes the record over (a fenced owner change), so two probers or a
 * late executor can never both settle it.
 */
async function reconcile(
  a: Attempt,
  probe: NonNullable<RunOnceOptions["probe"]>,
  record: IdempotencyRecord,
): Promise<Step> {
  const { records, owner } = a;
  const mine = await records.takeOver(record, owner, a.now());
  if (!mine) return moved(a);

  let outcome: ProbeOutcome;
  try {
    outcome = await probe();
  } catch (error) {
    const reason = `the probe threw: ${(error as Error)?.message ?? String(error)}; the record stays IN_DOUBT; ${inDoubtHint(a.key)}`;
    return { status: "in_doubt", cause: "probe_failed", reason, record: mine, error };
  }

  switch (outcome?.outcome) {
    case "applied": {
      const stored = storableResult(outcome.result);
      if (!stored.ok) {
        const reason = `the probe found the effect applied but its result is not JSON (${stored.reason}); the record stays IN_DOUBT; ${inDoubtHint(a.key)}`;
        return { status: "in_doubt", cause: "probe_failed", reason, record: mine, probe: outcome };
      }
      const now = a.now();
      const done = await records.complete(mine, stored.result, a.ttl_ms === null ? null : now + a.ttl_ms, now);
      return done ? replay(done, "probe") : moved(a);
    }
    case "not_applied":
      // Nothing happened: free the key, then this very call claims and runs it.
      return (await records.release(owner, "IN_DOUBT", "unknown")) ? RUN_AFTER_PROBE : moved(a);
    case "unknown": {
      const detail = outcome.detail ? ` (${outcome.detail})` : "";
      const reason = `the probe could not tell whether the effect happened${detail}; the record stays IN_DOUBT; ${inDoubtHint(a.key)}`;
      return { status: "in_doubt", cause: "probe_unknown", reason, record: mine, probe: outcome };
    }
    default: {
      const got = JSON.stringify((outcome as { outcome?: unknown } | undefined)?.outcome) ?? "nothing";
      const reason = `the probe returned outcome ${got}; expected "applied" (with result), "not_applied" or "unknown"; the record stays IN_DOUBT`;
      return { status: "in_doubt", cause: "probe_failed", reason, record: mine };
    }
  }
}

/**
 * Someone else moved the record while we probed: answer from what it is now. Released (another
 * probe found the effect not applied) → this call claims and runs; COMPLETED → replay;
 * IN_FLIGHT → refused like any repeat; IN_DOUBT → another party is settling it.
 */
async function moved(a: Attempt): Promise<Step> {
  const now = a.now();
  const current = await a.records.get(now, "unknown");
  if (current === null) return RUN_AFTER_PROBE;
  switch (effectiveState(current, now)) {
    case "COMPLETED":
      return replay(current, "stored");
    case "IN_FLIGHT":
      return inFlight(current, now);
    case "IN_DOUBT":
      return {
        status: "in_doubt",
        cause: "probe_busy",
        reason: `another party is settling this IN_DOUBT call (the record changed owner while this call probed); retry shortly`,
        record: current,
      };
  }
}

const replay = (record: IdempotencyRecord, settled_by: "stored" | "probe"): RunOnceOutcome => ({
  status: "replay",
  result: record.result,
  record,
  settled_by,
});

/** Another attempt holds a live lease: refused, never run in parallel. */
const inFlight = (record: IdempotencyRecord, now: number): RunOnceOutcome => ({
  status: "in_flight",
  retry_after_ms: retryAfterMs(record, now),
  record,
});
