/**
 * The root of the public API, `toolgate`: what it takes to build a gateway (docs/api.md,
 * section `toolgate`). Every other public name is in one of the subpath entries in
 * `src/entries/` (`toolgate/stores`, `toolgate/mcp`, …). Each entry is an explicit list: a name
 * added here is public API and must be documented in docs/api.md, which
 * test/api-docs.test.ts checks; never `export *` an internal module.
 */
// The tool contract and the errors a caller catches:
export { defineTool } from "./schema/define.js";
export type { ToolDefinition } from "./schema/define.js";
export { AUTHORITY, toolResult } from "./core/tool.js";
export type {
  Effect,
  AuthorityLevel,
  ToolContext,
  CallerCapability,
  GrantRequest,
  CheckIssue,
  ProbeOutcome,
  ToolResult,
  ToolSpec,
  ProgressUpdate,
  CallLog,
  CallAsk,
  InputRequest,
  LogEntry,
  LogLevel,
} from "./core/tool.js";
export type { ContentPart, LinkContent, MediaContent } from "./core/content.js";
export type { JsonSchema, JsonValue } from "./core/json.js";
export { NoEffectError, ToolgateError } from "./core/errors.js";
export { CanonicalJsonError } from "./canonical/jcs.js";
export { IdempotencyKeyError } from "./canonical/key.js";
export { StoreUnavailableError } from "./idempotency/errors.js";
export { AttenuationError } from "./capability/attenuate.js";
export { MalformedError } from "./capability/block.js";
// Schemas: validation and lint.
export { createValidator } from "./schema/validate.js";
export type { Validator, ValidationResult } from "./schema/validate.js";
export { renderIssues } from "./schema/issue-text.js";
export { lintTool, lintCatalog } from "./schema/lint/index.js";
export type { LintFinding, Severity } from "./schema/lint/finding.js";
// Idempotency: keys, settlement, the store.
export { canonicalize } from "./canonical/jcs.js";
export { deriveIdempotencyKey, fingerprint } from "./canonical/key.js";
export type { KeyInput, KeyOptions } from "./canonical/key.js";
export { runOnce } from "./idempotency/run-once.js";
export type { RunOnceOptions, RunOnceClaim } from "./idempotency/run-once.js";
export type {
  RunOnceOutcome,
  RunOnceExecuted,
  RunOnceReplay,
  RunOnceInFlight,
  RunOnceInDoubt,
  RunOnceKeyReused,
  RunOnceReleased,
  InDoubtCause,
} from "./idempotency/outcome.js";
export { openStore } from "./idempotency/open.js";
export type { OpenStoreOptions } from "./idempotency/open.js";
export type { Store } from "./idempotency/store.js";
export { defaultStateDir, defaultKeyFile } from "./state/location.js";
// Capabilities:
export { createCapabilityAuthority } from "./capability/authority.js";
export type { CapabilityAuthority, CapabilityAuthorityOptions, Inspection } from "./capability/authority.js";
export { attenuate } from "./capability/attenuate.js";
export type { Component as AttenuationComponent } from "./capability/attenuate.js";
export { loadKeys } from "./capability/keys.js";
export type { AuthorizationRequest, Decision as CapabilityDecision, DenyCode } from "./capability/authorize.js";
export type { GrantInput, NarrowerInput } from "./capability/input.js";
export type { ArgBound, Predicate as CapabilityPredicate } from "./capability/predicates.js";
export type { Block as CapabilityBlock } from "./capability/block.js";
// The gateway:
export { createGateway } from "./runtime/gateway.js";
export type { GatewayOptions } from "./runtime/gateway.js";
export type { Gateway, ApprovalsApi, AuditRecord, StageOutcome, Proposal, CallOptions } from "./runtime/types.js";
export { createTaskRunner, mayRunAsTask } from "./runtime/tasks.js";
export type { TaskRunner, TaskRunnerOptions, StartTask } from "./runtime/tasks.js";
export type { Budgets } from "./runtime/config.js";
export type { Observation, ObservationIssue, ObservationErrorCode } from "./core/observation.js";
// The coding catalog and its envelope:
export { createCodingCatalog } from "./tools/catalog.js";
export type { CodingCatalogOptions } from "./tools/catalog.js";
export type { EgressConfig, EgressLimits, EgressSecret } from "./tools/sandbox/egress/policy.js";
export { HIDDEN_DEFAULT, PROTECTED_DEFAULT } from "./tools/workspace.js";
export { createBubblewrap } from "./tools/sandbox/bubblewrap.js";
export type { BubblewrapOptions } from "./tools/sandbox/bubblewrap.js";
export type { SandboxLauncher, EnvelopeRun, EnvelopeLimits, LaunchPlan } from "./tools/sandbox/launcher.js";
