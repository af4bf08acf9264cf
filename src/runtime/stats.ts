/**
 * `toolgate stats`: pure aggregation over an audit trail — the measures that say whether an interface
 * works (docs/observations.md, "What to measure"):
 * per tool and overall, calls, validation-error and denial rates, replays, in-doubt count,
 * p50/p95 latency, argument and observation tokens, truncation rate.
 */
import { escapeUntrusted } from "../observation/escape.js";
import type { AuditRecord } from "./types.js";
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

export interface Stats {
  overall: ToolStats;
  /** By tool name, sorted by name. */
  tools: Record<string, ToolStats>;
  /** Lines that were not a JSON audit record (counted, never fatal). */
  broken_lines: number;
  /** The first broken lines (1-based) and why, for the operator to look at. */
  broken: BrokenLine[];
  lines: number;
}

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
  broken_lines: number;
  broken: BrokenLine[];
  lines: number;
} {
  const { records, broken } = readAuditLines(text, {
    record: (value) =>
      isAuditRecord(value) ? value : "JSON, but not an audit record: tool, outcome and latency_ms are required",
    notJson: () => "not JSON (a line cut short by a crash, or not an audit file)",
  });
  return {
    records,
    broken_lines: broken.length,
    broken: broken.slice(0, MAX_ITEMISED),
    lines: records.length + broken.length,
  };
}

function isAuditRecord(v: unknown): v is AuditRecord {
  if (typeof v !== "object" || v === null) return false;
  const r = v as Record<string, unknown>;
  return typeof r.tool === "string" && typeof r.outcome === "string" && typeof r.latency_ms === "number";
}

/** Aggregates parsed records. */
export function aggregate(records: readonly AuditRecord[]): { overall: ToolStats; tools: Record<string, ToolStats> } {
  const byTool = new Map<string, AuditRecord[]>();
  for (const r of records) {
    const list = byTool.get(r.tool) ?? [];
    list.push(r);
    byTool.set(r.tool, list);
  }
  const tools: Record<string, ToolStats> = {};
  for (const name of [...byTool.keys()].sort()) tools[name] = summarise(byTool.get(name)!);
  return { overall: summarise(records), tools };
}

/** Stats of an audit file's text. */
export function auditStats(text: string): Stats {
  const { records, broken_lines, broken, lines } = parseAudit(text);
  return { ...aggregate(records), broken_lines, broken, lines };
}

function summarise(rs: readonly AuditRecord[]): ToolStats {
  const n = rs.length;
  const count = (f: (r: AuditRecord) => boolean) => rs.reduce((k, r) => k + (f(r) ? 1 : 0), 0);
  const rate = (k: number) => (n === 0 ? 0 : k / n);
  const pct = (f: (r: AuditRecord) => number): Percentiles => {
    const values = rs.map(f).filter((v) => Number.isFinite(v));
    return { p50: percentile(values, 50), p95: percentile(values, 95) };
  };
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
    latency_ms: pct((r) => r.latency_ms),
    argument_tokens: pct((r) => r.argument_tokens),
    observation_tokens: pct((r) => r.observation_tokens),
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
  const body = [...Object.entries(s.tools).map(([k, v]) => row(k, v)), row("(all)", s.overall)];
  const widths = header.map((h, i) => Math.max(h.length, ...body.map((r) => r[i]!.length)));
  const line = (cells: string[]) =>
    cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join("  ");
  const out = [line(header), ...body.map(line)];
  out.push(
    `${s.lines} line(s), ${s.broken_lines} broken${s.broken.length ? `: ${s.broken.map((b) => `line ${b.line}`).join(", ")}${s.broken_lines > s.broken.length ? ", …" : ""}` : ""}`,
  );
  return out.join("\n");
}

function fmt(v: number): string {
  return Number.isInteger(v) ? String(v) : v.toFixed(v < 10 ? 2 : 1);
}
