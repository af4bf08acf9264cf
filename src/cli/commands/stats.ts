/**
 * `toolgate stats --audit FILE [--json]`: per tool and overall — calls, validation-error rate,
 * denial rate, replays, in-doubt count, p50/p95 latency, argument and observation tokens,
 * truncation rate (seed 003: "Measure selection accuracy, validation-error rate, result tokens").
 * Exit 0 (an empty trail too: no calls yet); 2 when the file cannot be read, or when it has lines
 * and none of them is a record (the wrong file). Other broken lines are counted and named.
 */
import type { Command } from "commander";
import { auditStats, renderStats } from "../../runtime/stats.js";
import { DEFAULT_AUDIT_PATH } from "../../runtime/audit.js";
import { CliError, printJson, readInput } from "../io.js";

export function register(program: Command): void {
  program
    .command("stats")
    .description("aggregate an audit trail: per-tool calls, error and denial rates, replays, in-doubt, latency and token percentiles")
    .option("--audit <file>", "audit trail (JSON Lines); - reads standard input", DEFAULT_AUDIT_PATH)
    .option("--json", "print the result as JSON")
    .action((opts: { audit: string; json?: boolean }) => {
      const stats = auditStats(readInput(opts.audit));
      if (stats.broken_lines > 0 && stats.broken_lines === stats.lines) {
        const first = stats.broken[0];
        throw new CliError(
          `the audit trail holds no usable record (${stats.broken_lines} broken line(s)${first ? `; line ${first.line}: ${first.reason}` : ""}). Expected one AuditRecord JSON object per line, as the gateway writes to ${DEFAULT_AUDIT_PATH}; check --audit`,
        );
      }
      if (opts.json) printJson(stats);
      else process.stdout.write(renderStats(stats) + "\n");
    });
}
