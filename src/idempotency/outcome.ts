/**
 * What `runOnce` returns: one variant per way a call can leave the state machine, so the
 * runtime can turn each into an observation without parsing messages.
 */
import type { NoEffectError } from "../core/errors.js";
import type { JsonValue } from "../core/json.js";
import type { ProbeOutcome } from "../core/tool.js";
import type { IdempotencyRecord } from "./store.js";

/** This call ran the effect and recorded its result (COMPLETED). */
export interface RunOnceExecuted {
  status: "executed";
  result: JsonValue;
  record: IdempotencyRecord;
  /** Set when a probe first found an earlier IN_DOUBT attempt had not applied, so this call ran it. */
  after_probe?: "not_applied";
}

/** A repeat of a COMPLETED call: the stored result, not executed again. */
export interface RunOnceReplay {
  status: "replay";
  result: JsonValue;
  record: IdempotencyRecord;
  /** `stored`: the record was already COMPLETED; `probe`: a probe just found the IN_DOUBT effect applied. */
  settled_by: "stored" | "probe";
}

/** Another attempt holds a live lease: refused, never run in parallel. */
export interface RunOnceInFlight {
  status: "in_flight";
  /** Milliseconds until the lease passes; after it, a repeat finds the record IN_DOUBT. */
  retry_after_ms: number;
  record: IdempotencyRecord;
}

/**
 * Why a call ended IN_DOUBT:
 * - `execute_failed`: the tool threw (an exception does not prove no effect happened);
 * - `result_not_json`: the tool ran but its result cannot be stored;
 * - `lease_expired`: an earlier executor's lease passed without completion;
 * - `lease_lost`: this executor finished but its record had been taken from it (fenced out);
 * - `unsettled`: the record was already IN_DOUBT and no probe was given;
 * - `probe_unknown` / `probe_failed`: the probe could not tell, or threw;
 * - `probe_busy`: another party is settling the record right now.
 */
export type InDoubtCause =
  | "execute_failed"
  | "result_not_json"
  | "lease_expired"
  | "lease_lost"
  | "unsettled"
  | "probe_unknown"
  | "probe_failed"
  | "probe_busy";

/** The effect is unknown: repeats are refused until a probe or an operator settles the record. */
export interface RunOnceInDoubt {
  status: "in_doubt";
  cause: InDoubtCause;
  /** One line for the model or operator, ending with how to settle. */
  reason: string;
  /** The record as this call last saw it; null when it could not be read back. */
  record: IdempotencyRecord | null;
  /** The probe's answer, when a probe ran. */
  probe?: ProbeOutcome;
  /** What the tool (or probe) threw, for `execute_failed` / `probe_failed`. */
  error?: unknown;
  /** The result this executor produced, for `lease_lost` (the effect happened, the record was not ours). */
  result?: JsonValue;
}

/** The key is already used with other arguments (IETF Idempotency-Key draft: 422). */
export interface RunOnceKeyReused {
  status: "key_reused";
  expected_fingerprint: string;
  received_fingerprint: string;
  record: IdempotencyRecord;
}

/** The tool threw a NoEffectError: nothing happened, the key is released, a retry runs again. */
export interface RunOnceReleased {
  status: "released_no_effect";
  error: NoEffectError;
}

export type RunOnceOutcome =
  RunOnceExecuted | RunOnceReplay | RunOnceInFlight | RunOnceInDoubt | RunOnceKeyReused | RunOnceReleased;

/** How an IN_DOUBT record gets settled (a probe, or the operator's `toolgate records settle`), appended to IN_DOUBT
 * reasons. */
export const inDoubtHint = (key: string): string =>
  `settle it with a probe or by hand: toolgate records settle ${key} --outcome applied|not_applied`;
