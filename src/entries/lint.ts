/**
 * `toolgate/lint`: `toolgate lint` in code — lint several sources into one report and print it
 * as text, JSON or SARIF. `lintTool` and `lintCatalog` are in the root. An explicit list,
 * documented in docs/api.md.
 */
export { lintSources } from "../schema/lint/report.js";
export type { LintReport, LintSource, SourcedFinding } from "../schema/lint/report.js";
export { formatReport } from "../schema/lint/format.js";
export type { LintFormat } from "../schema/lint/format.js";
export type { LintFinding, Severity } from "../schema/lint/finding.js";
export type { UncheckedDescriptor } from "../schema/descriptor.js";
