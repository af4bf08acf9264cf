/**
 * The public API of toolgate. Any new export added here becomes public API
 * (guarded by test/index.test.ts); never `export *` an internal module.
 */
export type { Effect, AuthorityLevel, ToolAnnotations, McpFacing, ToolContext, GrantRequest, CheckIssue, ProbeOutcome, ToolResult, ToolSpec } from "./core/tool.js";
export type { JsonSchema, JsonValue } from "./core/json.js";
export { AUTHORITY, toolResult, isToolResult } from "./core/tool.js";
export { NoEffectError, ToolgateError } from "./core/errors.js";
export type * from "./idempotency/store.js";
export type { Proposal } from "./runtime/types.js";
export type { Observation, ObservationIssue, ObservationErrorCode } from "./core/observation.js";
// schema:
export { defineTool } from "./schema/define.js";
export type { ToolDefinition } from "./schema/define.js";
export { lintTool, lintCatalog } from "./schema/lint/index.js";
export type { LintFinding, Severity, CatalogRule } from "./schema/lint/finding.js";
export type { UncheckedDescriptor } from "./schema/descriptor.js";
export { lintSources } from "./schema/lint/report.js";
export type { LintReport, LintSource, SourcedFinding } from "./schema/lint/report.js";
export { formatReport } from "./schema/lint/format.js";
export type { LintFormat } from "./schema/lint/format.js";
export { createValidator } from "./schema/validate.js";
export type { Validator, ValidationResult } from "./schema/validate.js";
export { renderIssues, renderIssue, fromCheckIssue } from "./schema/issue-text.js";
// canonical / idempotency:
export { canonicalize, CanonicalJsonError } from "./canonical/jcs.js";
export { deriveIdempotencyKey, fingerprint, validateClientKey, IdempotencyKeyError, MAX_CLIENT_KEY_LENGTH } from "./canonical/key.js";
export type { KeyInput, KeyOptions } from "./canonical/key.js";
export { settle } from "./idempotency/settle.js";
export type { SettleOptions, SettleClaim } from "./idempotency/settle.js";
export type {
  SettleOutcome,
  SettleExecuted,
  SettleReplay,
  SettleInFlight,
  SettleInDoubt,
  SettleKeyReused,
  SettleReleased,
  InDoubtCause,
} from "./idempotency/outcome.js";
export { settleRecord } from "./idempotency/manual.js";
export type { ManualOutcome, SettleRecordOptions, SettleRecordResult } from "./idempotency/manual.js";
export { StoreUnavailableError, SettleRecordError } from "./idempotency/errors.js";
export { DEFAULT_TTL_MS, effectiveState } from "./idempotency/record.js";
export { listRecords, showRecord } from "./idempotency/inspect.js";
export type { RecordView, ListRecordsQuery } from "./idempotency/inspect.js";
export { createMemoryStore } from "./idempotency/stores/memory.js";
export type { MemoryStoreOptions } from "./idempotency/stores/memory.js";
export { openStore } from "./idempotency/open.js";
export { defaultStateDir, defaultKeyFile } from "./state/location.js";
export type { OpenStoreOptions } from "./idempotency/open.js";
export { createSqliteStore } from "./idempotency/stores/sqlite.js";
export type { SqliteStoreOptions } from "./idempotency/stores/sqlite.js";
export { createRedisStore } from "./idempotency/stores/redis.js";
export type { RedisStoreOptions } from "./idempotency/stores/redis.js";
export { createPostgresStore } from "./idempotency/stores/postgres.js";
export type { PostgresStoreOptions } from "./idempotency/stores/postgres.js";
// capability:
export { createCapabilityAuthority } from "./capability/authority.js";
export type { CapabilityAuthority, CapabilityAuthorityOptions, Inspection } from "./capability/authority.js";
export { attenuate, AttenuationError } from "./capability/attenuate.js";
export type { Component as AttenuationComponent } from "./capability/attenuate.js";
export type { AuthorizationRequest, Decision as CapabilityDecision, DenyCode } from "./capability/authorize.js";
export type { GrantInput, NarrowerInput } from "./capability/input.js";
export type { ArgBound, Predicate as CapabilityPredicate } from "./capability/predicates.js";
export type { Block as CapabilityBlock } from "./capability/block.js";
export { MalformedError } from "./capability/block.js";
export { KeyRing, loadKeys, keyRingFromMap, generateKey } from "./capability/keys.js";
export { parseToken, TOKEN_PREFIX } from "./capability/token.js";
export type { ParsedToken } from "./capability/token.js";
export { viewGrant, summariseGrant } from "./capability/grant.js";
export type { GrantView, EffectiveGrant } from "./capability/grant.js";
export { parseObject, objectWithin, ObjectError } from "./capability/objects.js";
export type { CapObject, ObjectKind } from "./capability/objects.js";
export { parseDuration } from "./capability/duration.js";
// runtime:
export type { Gateway, ApprovalsApi, AuditRecord, StageOutcome } from "./runtime/types.js";
export { createGateway } from "./runtime/gateway.js";
export type { GatewayOptions } from "./runtime/gateway.js";
export type { Budgets } from "./runtime/config.js";
export { createAuditSink, createMemoryAuditSink } from "./runtime/audit.js";
export type { AuditSink, AuditFileOptions, PendingAudit } from "./runtime/audit.js";
export { auditStats, renderStats } from "./runtime/stats.js";
export type { Stats, ToolStats, Percentiles } from "./runtime/stats.js";
export { DEFAULT_APPROVAL_TTL_MS } from "./runtime/approvals.js";
// observation:
export { renderResult, renderError, outputText } from "./observation/observation-text.js";
export type { ResultParts, ErrorParts, RenderOptions, Rendered } from "./observation/observation-text.js";
export { fitText, DEFAULT_BUDGET_TOKENS } from "./observation/budget.js";
export { fenceUntrusted } from "./observation/fence.js";
export { createRedactor, REDACTED } from "./observation/redact.js";
export type { Redactor } from "./observation/redact.js";
// tools:
export { createCodingCatalog } from "./tools/catalog.js";
export type { CodingCatalogOptions } from "./tools/catalog.js";
export { HIDDEN_DEFAULT, PROTECTED_DEFAULT } from "./tools/workspace.js";
export { createBubblewrap } from "./tools/sandbox/bubblewrap.js";
export type { BubblewrapOptions } from "./tools/sandbox/bubblewrap.js";
export type { SandboxLauncher, EnvelopeRun, EnvelopeLimits, LaunchPlan } from "./tools/sandbox/launcher.js";
// mcp:
export { createMcpServer } from "./mcp/server/server.js";
export type { McpServerOptions } from "./mcp/server/server.js";
export { annotationsFor, toMcpTool } from "./mcp/server/listing.js";
export { toCallToolResult, OBSERVATION_META } from "./mcp/server/result.js";
export { META_KEYS } from "./mcp/server/meta.js";
export { serveStdio } from "./mcp/transports/stdio.js";
export type { StdioOptions, StdioHandle } from "./mcp/transports/stdio.js";
export { serveHttp } from "./mcp/transports/http.js";
export type { HttpOptions, HttpHandle } from "./mcp/transports/http.js";
export { createProxy } from "./mcp/proxy/proxy.js";
export type { ProxyOptions, Proxy } from "./mcp/proxy/proxy.js";
export { listMcpTools } from "./mcp/proxy/list-tools.js";
export type { UpstreamTarget } from "./mcp/proxy/upstream.js";
// serve and proxy as the CLI hosts them (settings, lifecycle, catalog modules):
export { gatewayFromSettings } from "./cli/host/gateway-settings.js";
export type { GatewaySettings } from "./cli/host/gateway-settings.js";
export { runGatewayServer } from "./cli/host/run.js";
export type { RunOptions } from "./cli/host/run.js";
export { parseListenAddress } from "./cli/host/flags.js";
export type { ListenAddress } from "./cli/host/flags.js";
export { loadCatalogModule } from "./cli/host/catalog-module.js";
// economics:
export { breakeven } from "./economics/breakeven.js";
export type { BreakevenInput, BreakevenResult, BreakevenDecision } from "./economics/breakeven.js";
export { breakevenFromAudit } from "./economics/breakeven-audit.js";
export type { AuditBreakeven, AuditBreakevenOptions, ToolBreakeven, Recommendation } from "./economics/breakeven-audit.js";
export { wilsonInterval } from "./economics/wilson.js";
export type { Interval } from "./economics/wilson.js";
export { catalogCost, compareCatalogShapes } from "./economics/cost.js";
export type { CatalogCost, CatalogCostOptions, CatalogShape, ShapeComparison } from "./economics/cost.js";
export type { ToolDescriptor } from "./schema/descriptor.js";
export { exportCatalog } from "./export/catalog.js";
export type { CatalogExport, ExportOptions } from "./export/catalog.js";
export type { ExportFormat } from "./export/formats.js";
export { toGbnf } from "./export/gbnf/grammar.js";
export type { GbnfResult, GbnfOptions } from "./export/gbnf/grammar.js";
export type { GbnfGap } from "./export/gbnf/tool.js";
export { checkOpenAIStrict } from "./export/openai-strict.js";
export type { StrictVerdict, StrictProblem } from "./export/openai-strict.js";
export { overlapFindings } from "./schema/lint/rules/overlap.js";
export type { OverlapFinding, OverlapOptions } from "./schema/lint/rules/overlap.js";
