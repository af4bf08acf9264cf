/** Operator-facing errors of the settlement layer (each with a string code). */
import { ToolgateError } from "../core/errors.js";

/**
 * A store operation failed (server down, connection lost, disk error). Raised by `runOnce` and
 * `resolveInDoubt` around every store call; when it escapes, nothing was marked COMPLETED.
 * `step` says which operation failed; `effect` whether the tool had already run.
 */
export class StoreUnavailableError extends ToolgateError {
  constructor(
    readonly store: string,
    readonly step: string,
    readonly effect: "not_started" | "happened" | "unknown",
    cause: unknown,
  ) {
    const why = cause instanceof Error ? cause.message : String(cause);
    const after =
      effect === "not_started"
        ? "the call did not run; retry when the store is back"
        : effect === "happened"
          ? "the call ran but its result was not recorded; the record stays IN_FLIGHT and reads IN_DOUBT after its lease — settle it with `toolgate records settle`"
          : "the effect is unknown; the record reads IN_DOUBT until settled";
    super("store_unavailable", `the ${store} store failed during ${step}: ${why}; ${after}`, { cause });
    this.name = "StoreUnavailableError";
  }
}

/** `resolveInDoubt` refused: no such record, still in flight, already completed, or changed under us. */
export class ResolveInDoubtError extends ToolgateError {
  constructor(
    code:
      | "record_not_found"
      | "record_in_flight"
      | "record_completed"
      | "record_changed"
      | "result_not_json"
      | "invalid_outcome",
    message: string,
  ) {
    super(code, message);
    this.name = "ResolveInDoubtError";
  }
}
