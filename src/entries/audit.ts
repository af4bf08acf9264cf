/**
 * `toolgate/audit`: the audit trail — the sinks a gateway writes it to (`createGateway({ audit })`)
 * and its per-tool statistics (`toolgate stats`). An explicit list, documented in docs/api.md.
 */
export { createAuditSink, createMemoryAuditSink } from "../runtime/audit.js";
export type { AuditSink, AuditFileOptions, PendingAudit } from "../runtime/audit.js";
export type { AuditRecord, ReadAudit, ReadAuditRecord, StageOutcome } from "../runtime/types.js";
export { auditStats, renderStats } from "../runtime/stats.js";
export type { Stats, ToolStats, ReadStats, Percentiles } from "../runtime/stats.js";
