/**
 * What every call answers: the observation a model reads, and the structured issues and error
 * codes inside it. The runtime builds it, the schema renderer and the observation renderer fill
 * it, and every transport passes it on.
 */
import type { JsonValue } from "./json.js";
import type { AuthorityLevel } from "./tool.js";
import type { ContentPart } from "./content.js";

/**
 * Stable codes of refusals and failures; what the model sees in `error.code`. Closed: a tool's
 * own code (`ToolDefinedCode`) goes beside it, in `error.detail.reason` or an issue's `code`.
 */
export type ObservationErrorCode =
  | "unknown_tool"
  | "invalid_arguments"
  | "check_failed"
  | "denied"
  | "approval_required"
  | "approval_denied"
  | "approval_invalid"
  /** The caller gave up on an A3 call before it could run on its approval. */
  | "abandoned"
  /** The caller cancelled the call; the message says whether it had started and what that left. */
  | "cancelled"
  | "in_flight"
  | "in_doubt"
  | "key_reused"
  | "precondition_failed"
  | "timeout"
  | "tool_failed"
  | "store_unavailable"
  /** A rate limit's window is full: `detail.retry_after_ms` says when to try again. */
  | "rate_limited"
  /** The call envelope itself (trajectory_id, turn, call_id, …) was malformed. */
  | "invalid_proposal"
  /** A bug inside toolgate; the message says nothing was executed when that is known. */
  | "internal_error";

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
 * One shape for every tool (docs/observations.md). `text` is what the model reads;
 * the structured fields are for clients and tests.
 */
export interface Observation {
  ok: boolean;
  tool: string;
  call_id: string;
  authority?: AuthorityLevel;
  /**
   * The tool's structured output, redacted but NOT cut: only `text` is bounded by the budget.
   * A transport that shows structured output to a model should drop it or cut it when the gateway
   * cut the text (`truncated.omitted_tokens` > 0); the MCP server cuts it to the text's size.
   */
  output?: JsonValue;
  error?: {
    code: ObservationErrorCode;
    message: string;
    issues?: ObservationIssue[];
    /** Grant denial component, e.g. `expired`; approval id for `approval_required`; retry hint. */
    detail?: Record<string, JsonValue>;
  };
  /**
   * Set when the result is incomplete: the gateway cut the rendering to the budget
   * (`omitted_tokens` > 0) or the tool cut its own result (`by_tool`); how to get the rest.
   */
  truncated?: {
    /**
     * Tokens the gateway cut from the rendering; 0 when only the tool cut. For a text too long
     * to encode whole, an estimate from its ends (the marker in `text` then says "about").
     */
    omitted_tokens: number;
    /** What the tool itself left out (ToolResult `truncated`), e.g. `{ omitted: 24751, unit: "bytes" }`. */
    by_tool?: { omitted: number; unit: string };
    hint: string;
    /** The call that returns the cut part (the gateway's `read_more`), when the gateway keeps it. */
    continuation?: { tool: string; arguments: Record<string, JsonValue> };
  };
  next?: { arguments: Record<string, JsonValue>; hint: string };
  /** This answer is the stored result of an earlier execution (idempotency replay). */
  replay?: boolean;
  /** Post-state after a write (id, version, …). */
  state?: Record<string, JsonValue>;
  /**
   * Images, sounds and resource links the tool returned beside its text, checked and bounded
   * (`observation/content.ts`); `text` names each one, and says which were left out.
   */
  content?: ContentPart[];
  /** The rendering for the model: bounded, tool output fenced as untrusted data. */
  text: string;
}
