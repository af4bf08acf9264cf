import type { AuthorityLevel, CallAsk, CallLog, ProgressUpdate, ToolSpec } from "../core/tool.js";
import type { ApprovalRecord, ApprovalState } from "../idempotency/store.js";
import type { Observation } from "../core/observation.js";
import type { JsonValue } from "../core/json.js";
import type { CapabilityHolder } from "../capability/authority.js";
import type { TraceContext, TraceContextInput } from "./trace-context.js";

/**
 * What a model proposes, plus the ids that identify the logical call (docs/idempotency.md:
 * the key identifies the call, not the attempt).
 */
export interface Proposal {
  trajectory_id: string;
  /** Turn number within the trajectory, ≥ 0. */
  turn: number;
  /** The model's or client's id for this call within the turn. */
  call_id: string;
  /**
   * True when the client gave no call id and `call_id` names only this attempt (an adapter
   * assigned it). An A3 proposal then is the logical call of the approval live for the same tool,
   * arguments, capability and trajectory (docs/authority.md): it shares a pending approval, runs
   * under one given meanwhile, or gets the stored result of the run.
   */
  call_id_assigned?: boolean;
  tool: string;
  arguments: unknown;
  /** Serialised capability token (`tg1.…`); required when the gateway has keys. */
  capability?: string;
  /**
   * A client-supplied idempotency key; replaces the derived one (fingerprint stored). It is valid for
   * this tool and this holder only: the record is keyed by a hash of the key, the tool and the issued
   * grant the capability descends from (or `CallOptions.principal` without capabilities).
   */
  idempotency_key?: string;
  /** Re-proposal of an A3 call that a person approved. */
  approval_id?: string;
}

/**
 * Who decides an approval: `approver` is the principal the channel authenticated (the OS user
 * for the CLI, the session's credential or peer for elicitation); `channel` defaults to `cli`
 * (the CLI, or the embedder's own code); `label` is a name the decider gives itself, recorded as
 * unverified. Recorded as `channel:approver [unverified name "label"]`.
 */
export interface ApprovalDecider {
  approver: string;
  channel?: "cli" | "elicitation";
  label?: string;
}

/** What `gateway.approvals` offers (A3 calls; persisted in the store's approvals). */
export interface ApprovalsApi {
  list(query?: { state?: ApprovalState; limit?: number }): Promise<ApprovalRecord[]>;
  approve(id: string, input: ApprovalDecider & { note?: string }): Promise<ApprovalRecord>;
  deny(id: string, input: Partial<ApprovalDecider> & { reason: string }): Promise<ApprovalRecord>;
}

/** How a caller takes part in one call. */
export interface CallOptions {
  /** Aborts the handler (it sees `ctx.signal` fire): an A2/A3 call that had started ends IN_DOUBT. */
  signal?: AbortSignal;
  /**
   * Fires when the caller has given up on the answer (its request was cancelled, its connection
   * closed); its reason, when a string, says how and is written to the audit. It interrupts
   * nothing that runs, but an A3 call that has not run yet is then not run on its approval: the
   * approval stays approved, and the same call proposed again runs once.
   */
  abandoned?: AbortSignal;
  /**
   * Who calls, as the caller's transport authenticated it (a session's credential digest, a peer, a
   * user id): scopes a client-supplied idempotency key when the gateway requires no capability, so two
   * callers never share one key space. With capabilities the issued grant scopes it and this is unused.
   */
  principal?: string;
  /**
   * Receives the progress a long call reports (bash_execute: time and bytes of output so far,
   * grep_search: files and matches so far), at most a few times a second and never after the
   * call has answered. It is called synchronously and not awaited; what it throws or rejects
   * with is ignored, so a slow or failing receiver never holds the call.
   */
  progress?: (update: ProgressUpdate) => void;
  /**
   * Receives the log messages a call passes on while it runs (a proxied upstream's), at `level`
   * and above, never after the call has answered; like `progress`, not awaited and its failures ignored.
   */
  log?: CallLog;
  /** Asks the caller's side a question while the call runs (see `ToolContext.ask`); absent: it cannot be asked. */
  ask?: CallAsk;
  /**
   * The caller's W3C trace context (`traceparent`, `tracestate`), as it arrived — from HTTP
   * headers, an MCP request's `_meta`, the embedder's tracer. Checked against the W3C syntax and
   * written to the audit record (`trace`); a malformed value is left out and `trace_ignored`
   * says why. It never changes how the call runs.
   */
  trace?: TraceContextInput;
}

/** The runtime boundary. Knows nothing of MCP: transports adapt it. */
export interface Gateway {
  /** The catalog, by name, in registration order. */
  readonly tools: ReadonlyMap<string, ToolSpec>;
  /** Every call needs a capability (the gateway has keys or an authority); false: every call is allowed. */
  readonly requiresCapability: boolean;
  /** Runs one proposal through resolve → validate → grant → settle → execute → shape → audit. Never throws for a bad
   * call: refusals are observations. */
  call(proposal: Proposal, options?: CallOptions): Promise<Observation>;
  /**
   * Who holds `capability` when it verifies now (the issued grant it descends from); null when it
   * does not, or when the gateway requires no capability. For a transport that shares a bound
   * among callers; it decides nothing about calls.
   */
  holder(capability: string): Promise<CapabilityHolder | null>;
  /**
   * The names of the tools the holder of `capability` is shown (`runtime/visible.ts`); null when
   * the gateway requires no capability (every tool is shown). Listing only: calls are granted on
   * their own.
   */
  visible(capability: string): Promise<ReadonlySet<string> | null>;
  readonly approvals: ApprovalsApi;
  /**
   * Writes one line to the audit trail for a read answered beside the pipeline (`ReadAudit`: what
   * a proxy passes through from an upstream), to the sink calls use, when it takes such lines
   * (`AuditSink.writeRead`). Never throws: a line the sink refuses is reported on stderr. A gateway
   * from `createGateway` has it; a view wrapping one (a transport's) may leave it out.
   */
  recordRead?(read: ReadAudit): void;
  /**
   * Refuses new calls and waits for in-flight calls (up to `grace_ms`); calls still running then
   * are aborted through their AbortSignal and settle (A2/A3: IN_DOUBT, or COMPLETED if they
   * finished) and answer; then the audit sink is flushed and closed, then the store.
   */
  close(options?: { grace_ms?: number }): Promise<void>;
}

/** Outcome of one pipeline stage in the audit trail. */
export interface StageOutcome {
  outcome: string;
  ms: number;
}

/** One JSON line of the audit trail (`audit.jsonl` in the state folder), one per call. */
export interface AuditRecord {
  /** ISO-8601 timestamp when the call arrived. */
  ts: string;
  trajectory_id: string;
  turn: number;
  call_id: string;
  tool: string;
  authority: AuthorityLevel | null;
  /** "ok" or the observation's error code. */
  outcome: string;
  /** Stages that ran, in pipeline order; `approve` is the A3 approval gate. */
  stages: Partial<
    Record<"resolve" | "validate" | "grant" | "rate" | "approve" | "settle" | "execute" | "shape", StageOutcome>
  >;
  /** Issue codes when validation failed (e.g. ["additional_property"]). */
  validation_codes: string[];
  grant_code: string | null;
  /** Idempotency key (A2/A3) and the record state after the call. */
  key: string | null;
  record_state: string | null;
  replay: boolean;
  /**
   * The A3 approval the call ran under, was refused by or asked for: its id, the channel it was
   * decided through and who decided it (`channel:principal`, see `ApprovalDecider`); null otherwise.
   */
  approval?: { id: string; channel: string | null; approver: string | null } | null;
  /** o200k tokens of the arguments' JSON text (0 when `arguments_unrecorded`). */
  argument_tokens: number;
  /**
   * Present when the arguments could not be serialised for counting — nested deeper than
   * JSON.stringify goes, a cycle, a value JSON has no form for — and says why, in at most a few
   * hundred characters; the call was answered as any other.
   */
  arguments_unrecorded?: string;
  /** o200k tokens of the observation's text. */
  observation_tokens: number;
  /**
   * Present (true) when `argument_tokens` is an estimate: the text was too long (over 128 K
   * characters) or too costly (over 8 KB of text new to the piece cache) to count whole in one
   * bounded step; what was read is counted exactly and the rest estimated from samples spread
   * over it (`countTokensBounded`; within a few percent on ordinary text).
   */
  argument_tokens_estimated?: true;
  /** Present (true) when `observation_tokens` is an estimate, as for `argument_tokens_estimated`. */
  observation_tokens_estimated?: true;
  truncated: boolean;
  latency_ms: number;
  /** What the tool itself recorded while it ran (`ToolContext.note`), e.g. `egress`: the connections a command made. */
  notes?: Record<string, JsonValue>;
  /** The caller's trace context, checked (`CallOptions.trace`); absent when no valid traceparent came. */
  trace?: TraceContext;
  /** Why a trace value that came was left out, in whole or in part; absent when none was. */
  trace_ignored?: string;
}

/**
 * A read answered beside the pipeline — a resource, a prompt or a completion a proxy passes
 * through from an upstream, which no tool call covers — as the transport that answered reports it.
 * The runtime reads none of its words: `operation` and `target` are the protocol's own.
 */
export interface ReadAudit {
  /** What was asked, as the caller's protocol names it (an MCP method, e.g. `resources/read`). */
  operation: string;
  /** The name or URI it asked for; null when it named none. */
  target: string | null;
  /** Who was asked behind the gateway (an upstream's name); null when the request never reached one. */
  source: string | null;
  /** Who asked, as the transport authenticated it (a session's credential digest, a peer, `stdio client`). */
  principal: string;
  /** The issued grant the request's capability verified as; null when it carried none or none was needed. */
  grant: string | null;
  /**
   * `ok`; `refused`: answered by the gateway's side alone (nothing served by that name, no or a bad
   * capability, a malformed request); `error`: the source was asked and failed (its error, a time
   * limit, an answer too large to pass on).
   */
  outcome: "ok" | "refused" | "error";
  /** Why, when not `ok`: the message the caller got, cut to `READ_REASON_CHARS`. */
  reason?: string;
  /** Characters of the answer's JSON; 0 when there was none. */
  answer_chars: number;
  /** From the request's arrival to its answer, ms. */
  latency_ms: number;
  /** The caller's W3C trace context as it arrived; checked into the line as for a call (`CallOptions.trace`). */
  trace?: TraceContextInput;
}

/** Characters of a read's `reason` kept in its audit line. */
export const READ_REASON_CHARS = 500;

/** The audit line of a `ReadAudit`: told from a call's line by `kind`, which a call's has not. */
export interface ReadAuditRecord extends Omit<ReadAudit, "trace"> {
  /** ISO-8601 timestamp when the request arrived. */
  ts: string;
  kind: "read";
  /** The caller's trace context, checked; absent when no valid traceparent came. */
  trace?: TraceContext;
  /** Why a trace value that came was left out, in whole or in part; absent when none was. */
  trace_ignored?: string;
}
