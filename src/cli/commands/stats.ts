/**
 * `toolgate stats --audit FILE [--json]`: per tool and overall — calls, validation-error rate,
 * denial rate, replays, in-doubt count, p50/p95 latency, argument and observation tokens,
 * truncation rate (seed 003: "Measure selection accuracy, validation-error rate, result tokens").
 * Exit 0; 2 when the file cannot be read. Broken lines are counted and named, never fatal.
 */
import type { Command } from "commander";
import { auditStats, renderStats } from "../../runtime/stats.js";
import { DEFAULT_AUDIT_PATH } from "../../runtime/audit.js";
import { printJson, readInput } from "../io.js";

export function register(program: Command): void {
  program
    .command("stats")
    .description("aggregate an audit trail: per-tool calls, error and denial rates, replays, in-doubt, latency and token percentiles")
    .option("--audit <file>", "audit trail (JSON Lines); - reads standard input", DEFAULT_AUDIT_PATH)
    .option("--json", "print the result as JSON")
    .action((opts: { audit: string; json?: boolean }) => {
      const stats = auditStats(readInput(opts.audit));
      if (opts.json) printJson(stats);
      else process.stdout.write(renderStats(stats) + "\n");
    });
}
