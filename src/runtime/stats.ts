/**
 * `toolgate stats`: pure aggregation over an audit trail — the measures that say whether an interface
 * works (docs/observations.md, "What to measure"):
 * per tool and overall, calls, validation-error and denial rates, replays, in-doubt count,
 * p50/p95 latency, argument and observation tokens, truncation rate; and apart from the calls, the
 * reads answered beside the pipeline (`kind: "read"` lines: a proxy's resources/read, prompts/get,
 * completion/complete, its lists, resources/subscribe and unsubscribe) per operation and overall:
 * how many, their outcomes, p50/p95 latency and answer size.
 */
import { escapeUntrusted } from "../observation/escape.js";
import type { AuditRecord, ReadAuditRecord } from "./types.js";
import { readAuditLines, type BrokenLine } from "./audit-reader.js";

export interface Percentiles {
  p50: number;
  p95: number;
}

export interface ToolStats {
  calls: number;
  ok: number;
  /** Share of calls refused as invalid arguments or failed semantic checks. */
  validation_error_rate: number;
  /** Share of calls refused at the grant (capability denial). */
  denial_rate: number;
  /** Calls refused because the tool name was unknown (selection errors). */
  unknown_tool: number;
  replays: number;
  in_doubt: number;
  approvals_required: number;
  tool_failed: number;
  latency_ms: Percentiles;
  argument_tokens: Percentiles;
  observation_tokens: Percentiles;
  truncation_rate: number;
}

export interface ReadStats {
  requests: number;
  ok: number;
  /** Answered by the gateway's side alone (nothing served by that name, no or a bad capability, a malformed request). */
  refused: number;
  /** The upstream was asked and failed (its error, a time limit, an answer too large). */
  error: number;
  latency_ms: Percentiles;
  /** Characters of the answers' JSON (0 for one not answered). */
  answer_chars: Percentiles;
}

export interface Stats {
  overall: ToolStats;
  /** By tool name, sorted by name. */
  tools: Record<string, ToolStats>;
  /** The reads beside the pipeline: overall, and by operation (e.g. `resources/read`), sorted by name. */
  reads: { overall: ReadStats; operations: Record<string, ReadStats> };
  /** Lines that were not a JSON audit record (counted, never fatal). */
  broken_lines: number;
  /** The first broken lines (1-based) and why, for the operator to look at. */
  broken: BrokenLine[];
  /** Lines that were a record (a call's or a read's) or broken; blank ones are not counted. */
  lines: number;
}

/** The fields of a read line the stats use. */
type ReadLine = Pick<ReadAuditRecord, "operation" | "outcome" | "latency_ms" | "answer_chars">;

const READ_OUTCOMES = new Set(["ok", "refused", "error"]);

/** At most this many broken lines are itemised; all are counted. */
const MAX_ITEMISED = 20;

const VALIDATION = new Set(["invalid_arguments", "check_failed"]);

/** Nearest-rank percentile of `values` (0 when empty). */
export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return 0;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.max(1, Math.ceil((p / 100) * sorted.length));
  return sorted[rank - 1]!;
}

/** Reads the trail (`audit-reader.ts`); blank lines are skipped, the first broken lines itemised, all counted. */
export function parseAudit(text: string): {
  records: AuditRecord[];
  reads: ReadLine[];
  broken_lines: number;
  broken: BrokenLine[];
  lines: number;
} {
  const { records, readRecords, broken } = readAuditLines(text, {
    record: (value) =>
      isAuditRecord(value) ? value : "JSON, but not an audit record: tool, outcome and latency_ms are required",
    read: readLineOf,
    notJson: () => "not JSON (a line cut short by a crash, or not an audit file)",
  });
  return {
    records,
    reads: readRecords,
    broken_lines: broken.length,
    broken: broken.slice(0, MAX_ITEMISED),
    lines: records.length + readRecords.length + broken.length,
  };
}

/** A `kind: "read"` line as the stats read it, or why it is not one. */
function readLineOf(value: Record<string, unknown>): ReadLine | string {
  if (
    typeof value.operation !== "string" ||
    typeof value.outcome !== "string" ||
    !READ_OUTCOMES.has(value.outcome) ||
    typeof value.latency_ms !== "number"
  )
    return 'JSON with "kind": "read", but not a read audit record: operation, outcome (ok, refused or error) and latency_ms are required';
  return {
    operation: value.operation,
    outcome: value.outcome as ReadLine["outcome"],
    latency_ms: value.latency_ms,
    answer_chars: typeof value.answer_chars === "number" ? value.answer_chars : 0,
  };
}

function isAuditRecord(v: unknown): v is AuditRecord {
  if (typeof v !== "object" || v === null) return false;
  const r = v as Record<string, unknown>;
  return typeof r.tool === "string" && typeof r.outcome === "string" && typeof r.latency_ms === "number";
}

/** Aggregates parsed records. */
export function aggregate(records: readonly AuditRecord[]): { overall: ToolStats; tools: Record<string, ToolStats> } {
  return { overall: summarise(records), tools: summarisedBy(records, (r) => r.tool, summarise) };
}

/** `items` grouped by `key`, each group summarised, by key sorted by name. */
function summarisedBy<T, S>(items: readonly T[], key: (item: T) => string, summary: (group: T[]) => S) {
  const groups = new Map<string, T[]>();
  for (const item of items) {
    const list = groups.get(key(item)) ?? [];
    list.push(item);
    groups.set(key(item), list);
  }
  const out: Record<string, S> = {};
  for (const name of [...groups.keys()].sort()) out[name] = summary(groups.get(name)!);
  return out;
}

/** Stats of an audit file's text. */
export function auditStats(text: string): Stats {
  const { records, reads, broken_lines, broken, lines } = parseAudit(text);
  return { ...aggregate(records), reads: aggregateReads(reads), broken_lines, broken, lines };
}

function pct<T>(rs: readonly T[], f: (r: T) => number): Percentiles {
  const values = rs.map(f).filter((v) => Number.isFinite(v));
  return { p50: percentile(values, 50), p95: percentile(values, 95) };
}

/** The read lines per operation and overall. */
function aggregateReads(lines: readonly ReadLine[]): Stats["reads"] {
  const summariseReads = (rs: readonly ReadLine[]): ReadStats => ({
    requests: rs.length,
    ok: rs.filter((r) => r.outcome === "ok").length,
    refused: rs.filter((r) => r.outcome === "refused").length,
    error: rs.filter((r) => r.outcome === "error").length,
    latency_ms: pct(rs, (r) => r.latency_ms),
    answer_chars: pct(rs, (r) => r.answer_chars),
  });
  return { overall: summariseReads(lines), operations: summarisedBy(lines, (r) => r.operation, summariseReads) };
}

function summarise(rs: readonly AuditRecord[]): ToolStats {
  const n = rs.length;
  const count = (f: (r: AuditRecord) => boolean) => rs.reduce((k, r) => k + (f(r) ? 1 : 0), 0);
  const rate = (k: number) => (n === 0 ? 0 : k / n);
  return {
    calls: n,
    ok: count((r) => r.outcome === "ok"),
    validation_error_rate: rate(count((r) => VALIDATION.has(r.outcome))),
    denial_rate: rate(count((r) => r.outcome === "denied")),
    unknown_tool: count((r) => r.outcome === "unknown_tool"),
    replays: count((r) => r.replay === true),
    in_doubt: count((r) => r.record_state === "IN_DOUBT"),
    approvals_required: count((r) => r.outcome === "approval_required"),
    tool_failed: count((r) => r.outcome === "tool_failed" || r.outcome === "timeout"),
    latency_ms: pct(rs, (r) => r.latency_ms),
    argument_tokens: pct(rs, (r) => r.argument_tokens),
    observation_tokens: pct(rs, (r) => r.observation_tokens),
    truncation_rate: rate(count((r) => r.truncated === true)),
  };
}

/** The plain-text table `toolgate stats` prints. */
export function renderStats(s: Stats): string {
  const pc = (v: number) => `${(v * 100).toFixed(1)}%`;
  const ms = (p: Percentiles) => `${fmt(p.p50)}/${fmt(p.p95)}`;
  const header = [
    "tool",
    "calls",
    "ok",
    "invalid",
    "denied",
    "replays",
    "in-doubt",
    "latency ms p50/p95",
    "arg tok p50/p95",
    "obs tok p50/p95",
    "truncated",
  ];
  // Tool names come from the trail, i.e. from whatever a model proposed: shown escaped.
  const row = (name: string, t: ToolStats) => [
    escapeUntrusted(name),
    String(t.calls),
    String(t.ok),
    pc(t.validation_error_rate),
    pc(t.denial_rate),
    String(t.replays),
    String(t.in_doubt),
    ms(t.latency_ms),
    ms(t.argument_tokens),
    ms(t.observation_tokens),
    pc(t.truncation_rate),
  ];
  const out = table(header, [...Object.entries(s.tools).map(([k, v]) => row(k, v)), row("(all)", s.overall)]);
  if (s.reads.overall.requests > 0) {
    // Operations come from the trail, i.e. from what a client sent: shown escaped.
    const read = (name: string, r: ReadStats) => [
      escapeUntrusted(name),
      String(r.requests),
      String(r.ok),
      String(r.refused),
      String(r.error),
      ms(r.latency_ms),
      ms(r.answer_chars),
    ];
    out.push(
      "",
      ...table(
        ["read", "requests", "ok", "refused", "error", "latency ms p50/p95", "answer chars p50/p95"],
        [...Object.entries(s.reads.operations).map(([k, v]) => read(k, v)), read("(all)", s.reads.overall)],
      ),
    );
  }
  out.push(
    `${s.lines} line(s), ${s.broken_lines} broken${s.broken.length ? `: ${s.broken.map((b) => `line ${b.line}`).join(", ")}${s.broken_lines > s.broken.length ? ", …" : ""}` : ""}`,
  );
  return out.join("\n");
}

/** `header` and `body` as aligned lines: the first column left-aligned, the rest right-aligned. */
function table(header: string[], body: string[][]): string[] {
  const widths = header.map((h, i) => Math.max(h.length, ...body.map((r) => r[i]!.length)));
  const line = (cells: string[]) =>
    cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join("  ");
  return [line(header), ...body.map(line)];
}

function fmt(v: number): string {
  return Number.isInteger(v) ? String(v) : v.toFixed(v < 10 ? 2 : 1);
}
