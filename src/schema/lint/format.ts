/** The three renderings of a lint report: text for people, JSON for scripts, SARIF 2.1.0 for code scanning. */
import type { LintReport } from "./report.js";
import { RULE_TITLES } from "./titles.js";

export type LintFormat = "text" | "json" | "sarif";
export const LINT_FORMATS: readonly LintFormat[] = ["text", "json", "sarif"];

/** Findings grouped by tool with pointer and fix, then a count per rule. */
export function formatText(report: LintReport): string {
  const out: string[] = [];
  let current = "";
  // Group by source and tool in first-appearance order (catalog rules report after the per-tool pass).
  const groups = new Map<string, LintReport["findings"]>();
  for (const f of report.findings) {
    const key = `${f.source}\0${f.tool}`;
    groups.set(key, [...(groups.get(key) ?? []), f]);
  }
  for (const f of [...groups.values()].flat()) {
    const head = `${f.source} · ${f.tool}`;
    if (head !== current) {
      if (current) out.push("");
      out.push(head);
      current = head;
    }
    out.push(
      `  ${f.severity === "error" ? "error  " : "warning"} ${f.rule} ${f.pointer || "(tool)"}`,
      `          ${f.message}`,
      `          fix: ${f.fix}`,
    );
  }
  if (out.length) out.push("");
  const s = report.summary;
  out.push(
    `${s.tools} tool${s.tools === 1 ? "" : "s"}, ${s.clean} clean, ${s.errors} error${s.errors === 1 ? "" : "s"}, ${s.warnings} warning${s.warnings === 1 ? "" : "s"}`,
  );
  for (const [rule, n] of Object.entries(s.byRule))
    out.push(`  ${rule} ${String(n).padStart(5)}  ${RULE_TITLES[rule] ?? ""}`);
  return out.join("\n") + "\n";
}

export function formatJson(report: LintReport): string {
  return JSON.stringify(report, null, 2) + "\n";
}

/** SARIF 2.1.0: one result per finding; the tool and JSON Pointer as the logical location. */
export function formatSarif(report: LintReport): string {
  const rules = Object.entries(RULE_TITLES).map(([id, text]) => ({ id, shortDescription: { text } }));
  const results = report.findings.map((f) => ({
    ruleId: f.rule,
    level: f.severity,
    message: { text: `${f.tool}: ${f.message}. Fix: ${f.fix}` },
    locations: [
      {
        physicalLocation: { artifactLocation: { uri: f.source === "-" ? "stdin" : f.source } },
        logicalLocations: [{ name: f.tool, fullyQualifiedName: `${f.tool}#${f.pointer}`, kind: "object" }],
      },
    ],
  }));
  const sarif = {
    $schema: "https://json.schemastore.org/sarif-2.1.0.json",
    version: "2.1.0",
    runs: [
      {
        tool: { driver: { name: "toolgate", informationUri: "https://github.com/toolgate/toolgate", rules } },
        results,
      },
    ],
  };
  return JSON.stringify(sarif, null, 2) + "\n";
}

export function formatReport(report: LintReport, format: LintFormat): string {
  return format === "json" ? formatJson(report) : format === "sarif" ? formatSarif(report) : formatText(report);
}
