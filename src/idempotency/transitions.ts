/**
 * The named transitions of the endpoint record (docs/idempotency.md), each one
 * store call fenced by owner and state, each wrapped so a failing store surfaces as a
 * `StoreUnavailableError` that says which step failed and whether the effect had happened.
 */
import { canonicalize } from "../canonical/jcs.js";
import type { JsonValue } from "../core/json.js";
import { StoreUnavailableError } from "./errors.js";
import { applyPatch } from "./record.js";
import type { IdempotencyRecord, RecordPatch, RecordState, Store } from "./store.js";

type Effect = StoreUnavailableError["effect"];

export class RecordTransitions {
  constructor(
    readonly store: Store,
    readonly key: string,
  ) {}

  /** `op`'s answer; its throw or rejection as a `StoreUnavailableError` (a rejection, either way). */
  private call<T>(step: string, effect: Effect, op: () => Promise<T>): Promise<T> {
    const unavailable = (err: unknown): never => {
      throw new StoreUnavailableError(this.store.kind, step, effect, err);
    };
    try {
      return op().then(undefined, unavailable);
    } catch (err) {
      return Promise.reject(new StoreUnavailableError(this.store.kind, step, effect, err));
    }
  }

  /** unseen → IN_FLIGHT (set-if-absent); otherwise the existing record. */
  claim(input: { owner: string; lease_until: number; fingerprint: string | null; tool: string | null; now: number }) {
    return this.call("claim", "not_started", () => this.store.records.claim(this.key, input));
  }

  get(now: number, effect: Effect = "not_started"): Promise<IdempotencyRecord | null> {
    return this.call("read", effect, () => this.store.records.get(this.key, now));
  }

  /**
   * One fenced write from `record` (the record this party holds): the new record when the
   * fence held, built here from `record` and `patch` rather than read back; null when it did not.
   */
  private async fenced(
    step: string,
    effect: Effect,
    record: IdempotencyRecord,
    patch: RecordPatch,
  ): Promise<IdempotencyRecord | null> {
    const applied = await this.call(step, effect, () =>
      this.store.records.transition(this.key, record.owner, record.state, patch),
    );
    return applied ? applyPatch(record, patch) : null;
  }

  /** IN_FLIGHT (or a taken-over IN_DOUBT) → COMPLETED by the party that holds `record`. */
  complete(record: IdempotencyRecord, result: JsonValue, expires_at: number | null, now: number) {
    return this.fenced("complete", "happened", record, { state: "COMPLETED", result, error: null, expires_at, now });
  }

  /** → IN_DOUBT with the reason; IN_DOUBT never expires. */
  markInDoubt(record: IdempotencyRecord, error: string, now: number, effect: Effect = "unknown") {
    return this.fenced("mark in doubt", effect, record, { state: "IN_DOUBT", error, expires_at: null, now });
  }

  /**
   * IN_FLIGHT whose lease passed → IN_DOUBT, fenced by the dead executor's owner token: if that
   * executor completes after all, its own transition finds the state moved and fails.
   */
  expireLease(record: IdempotencyRecord, now: number) {
    const reason = `the lease ended at ${new Date(record.lease_until).toISOString()} without completion; the executor may have died partway through`;
    return this.markInDoubt(record, reason, now);
  }

  /**
   * IN_DOUBT → IN_DOUBT under a new owner: a prober or operator takes the record over so that
   * only one party settles it, and an executor that comes back late is fenced out.
   */
  takeOver(record: IdempotencyRecord, owner: string, now: number) {
    return this.fenced("take over", "unknown", record, { state: "IN_DOUBT", owner, now });
  }

  /** Deletes the record (no effect happened), fenced by owner and state. */
  release(owner: string, from: RecordState, effect: Effect) {
    return this.call("release", effect, () => this.store.records.release(this.key, owner, from));
  }
}

/** The stored form of a result, or why it cannot be stored. A result of `undefined` (a tool that returns nothing) is
 * stored as null. */
export function storableResult(value: unknown): { ok: true; result: JsonValue } | { ok: false; reason: string } {
  if (value === undefined) return { ok: true, result: null };
  try {
    canonicalize(value, "$.result");
    return { ok: true, result: value as JsonValue };
  } catch (err) {
    return { ok: false, reason: (err as Error).message };
  }
}
