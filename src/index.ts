/**
 * The public API of toolgate. Any new export added here becomes public API
 * (guarded by test/index.test.ts); never `export *` an internal module.
 */
export type {
  Effect,
  AuthorityLevel,
  JsonSchema,
  JsonValue,
  ToolAnnotations,
  ToolContext,
  GrantRequest,
  CheckIssue,
  ProbeOutcome,
  ToolResult,
  ToolSpec,
} from "./schema/types.js";
export { AUTHORITY, annotationsFor, toolResult, isToolResult } from "./schema/types.js";
export { NoEffectError, ToolgateError } from "./schema/errors.js";
export type * from "./idempotency/store.js";
export type { Proposal, Observation, ObservationIssue, ObservationErrorCode } from "./runtime/types.js";
// schema:
// canonical / idempotency:
// capability:
// runtime:
// observation:
// tools:
// mcp:
// economics:
