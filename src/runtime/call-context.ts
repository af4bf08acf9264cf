/**
 * A call's `ToolContext` as the gateway hands it to the tool. A class with `signal` a getter on its prototype, not an
 * object literal with `get signal()`: V8 builds a literal with an accessor in dictionary mode, a property table and an
 * accessor pair of its own for every call (about 500 bytes more than this, per call), and part of each one outlives
 * the next young-generation collection. The signal stays lazy: the call's `AbortController` is made only when the
 * tool reads it (`CallAbort.signal`).
 */
import type { JsonValue } from "../core/json.js";
import type { CallAsk, CallerCapability, CallLog, GrantRequest, ProgressUpdate, ToolContext } from "../core/tool.js";
import type { TraceContext } from "../core/trace.js";
import type { CallAbort } from "./execute.js";

/** The ids of the call, as the proposal gave them. */
export interface CallIds {
  trajectory_id: string;
  turn: number;
  call_id: string;
}

export class CallContext implements ToolContext {
  readonly #abort: CallAbort;
  trajectory_id: string;
  turn: number;
  call_id: string;
  now: () => number;
  budget_tokens: number;
  caller: () => Promise<CallerCapability | null>;
  note: (name: string, value: JsonValue) => void;
  // Set only when a call has them (an own property then, as before): declared, not initialised.
  declare trace?: TraceContext;
  declare progress?: (update: ProgressUpdate) => void;
  declare log?: CallLog;
  declare ask?: CallAsk;
  declare authorizeAlso?: (request: GrantRequest) => Promise<string | null>;
  declare idempotency_key?: string;

  constructor(
    abort: CallAbort,
    ids: CallIds,
    now: () => number,
    budget_tokens: number,
    caller: () => Promise<CallerCapability | null>,
    note: (name: string, value: JsonValue) => void,
  ) {
    this.#abort = abort;
    this.trajectory_id = ids.trajectory_id;
    this.turn = ids.turn;
    this.call_id = ids.call_id;
    this.now = now;
    this.budget_tokens = budget_tokens;
    this.caller = caller;
    this.note = note;
  }

  /** The signal handed to the tool (`CallAbort.signal`), made on first read. */
  get signal(): AbortSignal {
    return this.#abort.signal;
  }
}
