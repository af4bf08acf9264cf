/**
 * A code a tool names itself: the reason of a `NoEffectError` and the `code` of a `CheckIssue`.
 * Tool-defined on purpose — the built-in tools, a proxied upstream and a user's `defineTool` each
 * name their own (`not_found`, `version_mismatch`, …) — so it is an open string, kept apart from
 * toolgate's closed codes: it never becomes an observation's `error.code` (a `NoEffectError` is
 * `precondition_failed`, a failed check `check_failed`); it travels beside it, as
 * `error.detail.reason` or an issue's `code`.
 */
export type ToolDefinedCode = string;

/**
 * Errors split by audience, each with a string code: `NoEffectError` is thrown by a tool to say the call
 * failed *before any effect* (a refused precondition), the one kind of failure that releases an
 * idempotency key instead of leaving it IN_DOUBT (docs/idempotency.md).
 */
export class NoEffectError extends Error {
  readonly code: ToolDefinedCode;
  constructor(message: string, code: ToolDefinedCode = "precondition_failed") {
    super(message);
    this.name = "NoEffectError";
    this.code = code;
  }
}

/**
 * Every code a `ToolgateError` may carry: a closed list, so a new code is added here on purpose
 * (and a mistyped one does not compile). Callers and the CLI's `[code]` suffix rely on them.
 */
export type ToolgateErrorCode =
  // Input and configuration: bad arguments to a library function, a flag, an option, a catalog.
  | "invalid_input"
  | "invalid_option"
  | "invalid_config"
  | "bad_flag"
  | "bad_address"
  | "auth_required"
  | "invalid_catalog"
  | "lint_input"
  | "catalog_invalid"
  | "catalog_empty"
  | "catalog_not_found"
  | "catalog_load_failed"
  | "schema_invalid"
  | "tool_invalid"
  | "tool_lint"
  // Toolgate's own state: where it lives, the store that keeps it.
  | "unsafe_state_path"
  | "state_dir_unusable"
  | "key_file_in_workspace"
  | "bad_store_url"
  | "bad_store_option"
  | "store_driver_missing"
  // A framework adapter's framework (an optional peer dependency) is not installed.
  | "framework_missing"
  | "store_missing"
  | "store_required"
  | "store_unavailable"
  | "settle_contention"
  | "invalid_idempotency_key"
  // Settling a record by hand (`SettleRecordError`).
  | "record_not_found"
  | "record_in_flight"
  | "record_completed"
  | "record_changed"
  | "result_not_json"
  | "invalid_outcome"
  // Approvals of A3 calls.
  | "approval_not_found"
  | "approval_decided"
  | "approval_exists"
  | "approval_expired"
  // Capabilities: keys, grants, objects, and the denials `attenuate` throws (`DenyCode`).
  | "no_keys"
  | "bad_keys"
  | "invalid_grant"
  | "invalid_duration"
  | "invalid_object"
  | "attenuation_widens"
  | "malformed"
  | "unknown_kid"
  | "bad_signature"
  | "expired"
  | "revoked"
  | "right_missing"
  | "object_outside"
  | "cost_over"
  | "arg_out_of_bounds"
  | "budget_exhausted"
  // An upstream MCP server behind the proxy.
  | "upstream_unavailable"
  | "upstream_paging";

/** An operator-facing error with a stable string code: bad configuration, bad CLI input, a store that is down. */
export class ToolgateError extends Error {
  readonly code: ToolgateErrorCode;
  constructor(code: ToolgateErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "ToolgateError";
    this.code = code;
  }
}
