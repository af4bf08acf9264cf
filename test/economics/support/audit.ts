/** Builds audit trails (the runtime's AuditRecord lines) for the economics tests. */
import type { AuditRecord } from "../../../src/runtime/types.js";
import { auditRecord } from "../../support/audit-record.js";

const T0 = Date.parse("2026-11-30T10:00:00.000Z");

export function record(over: Partial<AuditRecord> & { at_ms?: number }): AuditRecord {
  const { at_ms = 0, ...rest } = over;
  return auditRecord({
    ts: new Date(T0 + at_ms).toISOString(),
    trajectory_id: "traj-0",
    call_id: "c0",
    tool: "file_edit",
    authority: "A2",
    argument_tokens: 80,
    observation_tokens: 20,
    latency_ms: 5,
    ...rest,
  });
}

/**
 * `failed` repair episodes (a malformed call, then the next call of the trajectory
 * `repair_ms` later) plus single good calls up to `calls` in all.
 */
export function traffic(
  tool: string,
  opts: { calls: number; failed: number; tokens: number; repair_ms: number },
): AuditRecord[] {
  const out: AuditRecord[] = [];
  for (let i = 0; i < opts.failed; i++) {
    const trajectory_id = `${tool}-repair-${i}`;
    out.push(
      record({
        tool,
        trajectory_id,
        turn: 1,
        call_id: "a",
        outcome: "invalid_arguments",
        validation_codes: ["required"],
        argument_tokens: opts.tokens,
        at_ms: i * 10_000,
      }),
    );
    out.push(
      record({
        tool,
        trajectory_id,
        turn: 2,
        call_id: "b",
        argument_tokens: opts.tokens,
        at_ms: i * 10_000 + opts.repair_ms,
      }),
    );
  }
  for (let i = out.length; i < opts.calls; i++) {
    out.push(
      record({ tool, trajectory_id: `${tool}-ok-${i}`, call_id: `c${i}`, argument_tokens: opts.tokens, at_ms: i }),
    );
  }
  return out;
}

export const jsonl = (records: unknown[]): string => records.map((r) => JSON.stringify(r)).join("\n") + "\n";
