/**
 * Text renderings of the economics results for the CLI (the commands print these, or the
 * result objects themselves with --json).
 */
import type { AuditBreakeven } from "../economics/breakeven-audit.js";
import { fmtMs, percent, type BreakevenResult } from "../economics/breakeven.js";
import type { CatalogCost, ShapeComparison } from "../economics/cost.js";

const int = (n: number) => Math.round(n).toLocaleString("en-US");
const dec = (n: number) => n.toLocaleString("en-US", { minimumFractionDigits: 1, maximumFractionDigits: 1 });

/** A left-aligned text table. */
export function table(header: string[], rows: string[][]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? "").length)));
  const line = (cells: string[]) =>
    cells
      .map((c, i) => c.padEnd(widths[i]!))
      .join("  ")
      .trimEnd();
  return [line(header), ...rows.map(line)].join("\n");
}

export function renderBreakeven(r: BreakevenResult): string {
  const lines = [
    `p_break = L_gen · t_mask / T_repair = ${r.tokens.toLocaleString("en-US", { maximumFractionDigits: 2 })} × ${fmtMs(r.mask_ms)} / ${fmtMs(r.repair_ms)} = ${fmtMs(r.mask_cost_ms)} / ${fmtMs(r.repair_ms)}` +
      (r.p_break >= 1
        ? " ≥ 100 % (a repair turn costs less than masking one call)"
        : ` = ${(r.p_break * 100).toFixed(2)} %`) +
      (r.one_in !== null ? ` (1 in ${r.one_in.toLocaleString("en-US")})` : ""),
    `T_constrained = L_gen · (t_decode + t_mask) = ${fmtMs(r.constrained_ms)}${r.decode_ms === 0 ? " (mask overhead only; pass --decode-ms for the full time)" : ""}`,
  ];
  if (r.expected_free_ms !== null) {
    lines.push(
      `E[T_free] = L_gen · t_decode + p_err · T_repair = ${fmtMs(r.expected_free_ms)} at p_err = ${percent(r.observed_rate!)}`,
    );
  }
  const verdict = {
    constrain: "constrain decoding",
    dont_constrain: "do not constrain",
    either: "either (the costs are equal)",
    measure: "measure p_err to decide",
  }[r.decision];
  lines.push(`decision: ${verdict}`, r.summary);
  return lines.join("\n") + "\n";
}

export function renderAuditBreakeven(r: AuditBreakeven): string {
  const rows = r.tools.map((t) => [
    t.tool,
    String(t.calls),
    String(t.failed),
    `${(t.p_err.p * 100).toFixed(1)} % [${(t.p_err.low * 100).toFixed(1)}, ${(t.p_err.high * 100).toFixed(1)}]`,
    dec(t.l_gen),
    t.t_repair_ms === null
      ? "—"
      : `${int(t.t_repair_ms)} ms${t.t_repair_source === "measured" ? "" : ` (${t.t_repair_source})`}`,
    t.constraining_never_pays ? "≥ 100 %" : t.p_break === null ? "—" : `${(t.p_break * 100).toFixed(2)} %`,
    { constrain: "constrain", dont_constrain: "don't constrain", not_enough_data: "not enough data" }[t.recommendation],
  ]);
  const out = [
    table(["tool", "calls", "failed", "p_err [95 % CI]", "L_gen", "T_repair", "p_break", "recommendation"], rows),
    "",
    ...r.tools
      .filter((t) => t.recommendation === "not_enough_data" || t.constraining_never_pays)
      .map((t) => `${t.tool}: ${t.reason}`),
    `${r.records} record(s) read; failed = outcome ${r.malformed_outcomes.join(" or ")}; t_mask = ${fmtMs(r.mask_ms)}` +
      (r.unknown_tool_calls > 0 ? `; ${r.unknown_tool_calls} call(s) to unknown tools not attributed` : ""),
  ];
  return out.join("\n") + "\n";
}

export function renderCost(c: CatalogCost, source: string): string {
  const rows = c.tools.map((t) => [t.name, int(t.tokens)]);
  return (
    [
      `${source}`,
      table(["tool", `tokens (${c.tokenizer})`], rows),
      `K = ${c.k} tool(s), mean S = ${dec(c.mean_s)} tokens, K·S = ${int(c.per_turn)} tokens per turn`,
      `N·K·S = ${c.turns} × ${c.k} × ${dec(c.mean_s)} = ${int(c.total)} tokens over ${c.turns} turns`,
    ].join("\n") + "\n"
  );
}

export function renderComparison(c: ShapeComparison): string {
  const side = (label: string, s: ShapeComparison["a"]) =>
    `${label}: ${s.k} tools × ${int(s.s)} tokens = ${int(s.per_turn)} per turn, ${int(s.total)} over ${c.turns} turns`;
  return [side("A", c.a), side("B", c.b), verdict(c)].join("\n") + "\n";
}

/** B against A in words: "less" or "more" (never a negative "less"), the same, or A sending nothing. */
function verdict(c: ShapeComparison): string {
  if (c.a.total === c.b.total) return `A and B send the same: ${int(c.a.total)} tokens each over ${c.turns} turns`;
  if (c.a.total === 0) return `B sends ${int(c.b.total)} tokens over ${c.turns} turns; A sends none`;
  return c.reduction > 0
    ? `B sends ${dec(c.reduction * 100)} % less than A`
    : `B sends ${dec(-c.reduction * 100)} % more than A`;
}
