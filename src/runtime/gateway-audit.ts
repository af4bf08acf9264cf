/**
 * The gateway's audit lines as data: a call's record (`auditEntry`, built from its `CallState`
 * and the observation it answered) and the writer of a read's line beside the pipeline
 * (`readRecorder`: its trace checked, its reason cut to `READ_REASON_CHARS`).
 */
import type { JsonValue } from "../core/json.js";
import type { Rendered } from "../observation/observation-text.js";
import { auditTimestamp, type AuditSink, type PendingAudit } from "./audit.js";
import { auditedApproval } from "./approval-gate.js";
import type { CallState } from "./call.js";
import { readTraceContext } from "./trace-context.js";
import { READ_REASON_CHARS, type Gateway } from "./types.js";

/**
 * The audit record of call `c`, answered with `rendered`. Its stages and notes are copies: a sink may serialise the
 * record later (`PendingAudit`), and a handler still running past its bound can still add a note.
 */
export function auditEntry(c: CallState, rendered: Rendered): PendingAudit {
  const o = rendered.observation;
  return {
    record: {
      ts: auditTimestamp(c.arrived),
      trajectory_id: String(c.proposal.trajectory_id),
      turn: c.proposal.turn,
      call_id: String(c.proposal.call_id),
      tool: typeof c.proposal.tool === "string" ? c.proposal.tool : "(none)",
      authority: c.authority,
      outcome: o.ok ? "ok" : (o.error?.code ?? "error"),
      stages: { ...c.stages },
      validation_codes: c.validation_codes,
      grant_code: c.grant_code,
      key: c.key,
      record_state: c.record_state,
      replay: c.replay,
      approval: auditedApproval(c.approval),
      argument_tokens: null,
      observation_tokens: rendered.tokens,
      truncated: o.truncated !== undefined,
      latency_ms: c.elapsed(),
      ...(c.notes ? { notes: { ...c.notes } } : {}),
      ...(c.trace.trace ? { trace: c.trace.trace } : {}),
      ...(c.trace.ignored !== null ? { trace_ignored: c.trace.ignored } : {}),
    },
    arguments: c.args !== undefined ? c.args : (c.proposal.arguments as JsonValue),
    observation_text: o.text,
  };
}

/** `Gateway.recordRead` over `sink` (nothing when it writes no reads), timestamped on `clock`; built once per gateway. */
export function readRecorder(sink: AuditSink | null, clock: () => number): NonNullable<Gateway["recordRead"]> {
  return function recordRead(read) {
    if (!sink?.writeRead) return;
    const { trace: given, reason, ...rest } = read;
    const trace = given === undefined ? null : readTraceContext(given);
    try {
      sink.writeRead({
        ts: auditTimestamp(clock() - read.latency_ms),
        kind: "read",
        ...rest,
        ...(reason !== undefined ? { reason: reason.slice(0, READ_REASON_CHARS) } : {}),
        ...(trace?.trace ? { trace: trace.trace } : {}),
        ...(trace && trace.ignored !== null ? { trace_ignored: trace.ignored } : {}),
      });
    } catch (err) {
      // As for a call's line: a read answered after close() still answers; its line is reported instead.
      process.stderr.write(`toolgate: audit line for ${read.operation} not written: ${(err as Error).message}\n`);
    }
  };
}

/** Writes call `c`'s audit line to `sink` (none: nothing); a failing write is said on stderr, never thrown. */
export function writeAudit(sink: AuditSink | null, c: CallState, rendered: Rendered): void {
  if (!sink) return;
  try {
    sink.write(auditEntry(c, rendered));
  } catch (err) {
    // A call that outlived close() must still answer; its line is reported instead of thrown.
    process.stderr.write(
      `toolgate: audit line for call ${String(c.proposal.call_id)} not written: ${(err as Error).message}\n`,
    );
  }
}
