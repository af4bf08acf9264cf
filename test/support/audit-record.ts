/** One audit line (the runtime's AuditRecord) for tests that read audit trails: a clean A0 call, every field set. */
import type { AuditRecord } from "../../src/runtime/types.js";

export function auditRecord(over: Partial<AuditRecord> = {}): AuditRecord {
  return {
    ts: "2026-03-05T10:00:00.000Z",
    trajectory_id: "t",
    turn: 0,
    call_id: "c",
    tool: "file_view",
    authority: "A0",
    outcome: "ok",
    stages: {},
    validation_codes: [],
    grant_code: null,
    key: null,
    record_state: null,
    replay: false,
    argument_tokens: 10,
    observation_tokens: 100,
    truncated: false,
    latency_ms: 1,
    ...over,
  };
}
