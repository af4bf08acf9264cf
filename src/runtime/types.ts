import type { AuthorityLevel, JsonValue } from "../schema/types.js";

/**
 * What a model proposes, plus the ids that identify the logical call (seed 000,
 * "Deriving the key": the key identifies the call, not the attempt).
 */
export interface Proposal {
  trajectory_id: string;
  /** Turn number within the trajectory, ≥ 0. */
  turn: number;
  /** The model's or client's id for this call within the turn. */
  call_id: string;
  tool: string;
  arguments: unknown;
  /** Serialised capability token (`tg1.…`); required when the gateway has keys. */
  capability?: string;
  /** A client-supplied idempotency key; replaces the derived one (fingerprint stored). */
  idempotency_key?: string;
  /** Re-proposal of an A3 call that a person approved. */
  approval_id?: string;
}

/** Stable codes of refusals and failures; what the model sees in `error.code`. */
export type ObservationErrorCode =
  | "unknown_tool"
  | "invalid_arguments"
  | "check_failed"
  | "denied"
  | "approval_required"
  | "approval_denied"
  | "approval_invalid"
  | "in_flight"
  | "in_doubt"
  | "key_reused"
  | "precondition_failed"
  | "timeout"
  | "tool_failed"
  | "store_unavailable";

export interface ObservationIssue {
  /** JSON Pointer into the arguments. */
  path: string;
  code: string;
  message: string;
  expected?: string;
  received?: string;
  example?: JsonValue;
}

/**
 * One shape for every tool (seed 003, "The contract"). `text` is what the model reads;
 * the structured fields are for clients and tests.
 */
export interface Observation {
  ok: boolean;
  tool: string;
  call_id: string;
  authority?: AuthorityLevel;
  output?: JsonValue;
  error?: {
    code: ObservationErrorCode | string;
    message: string;
    issues?: ObservationIssue[];
    /** Grant denial component, e.g. `expired`; approval id for `approval_required`; retry hint. */
    detail?: Record<string, JsonValue>;
  };
  /** Set when the rendering was cut to the budget: how much, and how to get the rest. */
  truncated?: { omitted_tokens: number; hint: string };
  next?: { arguments: Record<string, JsonValue>; hint: string };
  /** This answer is the stored result of an earlier execution (idempotency replay). */
  replay?: boolean;
  /** Post-state after a write (id, version, …). */
  state?: Record<string, JsonValue>;
  /** The rendering for the model: bounded, tool output fenced as untrusted data. */
  text: string;
}
