/**
 * The calls the measured forms of the economics commands read from the runtime's audit trail,
 * through its one reader (`runtime/audit-reader.ts`): a line is a call when it has every field
 * they use, else it is a broken line saying which field is wrong.
 */
import type { AuditRecord } from "../runtime/types.js";
import { readAuditLines, type BrokenLine } from "../runtime/audit-reader.js";
import { isPlainObject } from "../core/json.js";

/** The fields the economics read from one audit line; the rest of AuditRecord is ignored. */
export type AuditCall = Pick<
  AuditRecord,
  "trajectory_id" | "turn" | "call_id" | "tool" | "outcome" | "argument_tokens" | "latency_ms"
> & {
  /** `ts` as epoch milliseconds. */
  at: number;
  /** 1-based line number in the file. */
  line: number;
};

export interface AuditRead {
  calls: AuditCall[];
  broken: BrokenLine[];
  /** Lines that were empty (not counted as broken). */
  blank: number;
}

const STRING_FIELDS = ["trajectory_id", "call_id", "tool", "outcome", "ts"] as const;

function describe(value: unknown): string {
  return value === undefined ? "nothing" : JSON.stringify(value);
}

/** Checks one parsed line; returns the call or why it is broken. */
function toCall(value: unknown, line: number): AuditCall | string {
  if (!isPlainObject(value)) return `expected a JSON object, got ${describe(value)}`;
  const v = value;
  for (const f of STRING_FIELDS) {
    if (typeof v[f] !== "string" || v[f] === "")
      return `field ${f} must be a non-empty string; received ${describe(v[f])}`;
  }
  const at = Date.parse(v.ts as string);
  if (Number.isNaN(at)) return `field ts must be an ISO-8601 timestamp; received ${describe(v.ts)}`;
  if (!Number.isInteger(v.turn) || (v.turn as number) < 0)
    return `field turn must be an integer ≥ 0; received ${describe(v.turn)}`;
  if (typeof v.argument_tokens !== "number" || !Number.isFinite(v.argument_tokens) || v.argument_tokens < 0) {
    return `field argument_tokens must be a number ≥ 0; received ${describe(v.argument_tokens)}`;
  }
  const latency = typeof v.latency_ms === "number" && Number.isFinite(v.latency_ms) ? v.latency_ms : 0;
  return {
    trajectory_id: v.trajectory_id as string,
    turn: v.turn as number,
    call_id: v.call_id as string,
    tool: v.tool as string,
    outcome: v.outcome as string,
    argument_tokens: v.argument_tokens,
    latency_ms: latency,
    at,
    line,
  };
}

/** Parses JSON Lines text of audit records (`runtime/audit-reader.ts`), keeping what the economics need. */
export function readAudit(text: string): AuditRead {
  const { records, broken, blank } = readAuditLines(text, {
    record: toCall,
    notJson: (message) => `not valid JSON (${message})`,
  });
  return { calls: records, broken, blank };
}
