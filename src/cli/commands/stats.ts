/**
 * `toolgate stats [--audit FILE | --workspace DIR [--state-dir DIR]] [--json]`: per tool and overall — calls,
 * validation-error rate,
 * denial rate, replays, in-doubt count, p50/p95 latency, argument and observation tokens,
 * truncation rate (docs/observations.md, "What to measure"); and apart from the calls, a proxy's
 * reads beside the pipeline per operation (requests, outcomes, latency, answer size).
 * Exit 0 (an empty trail too: no calls yet); 2 when the file cannot be read, or when it has lines
 * and none of them is a record (the wrong file). Other broken lines are counted and named.
 */
import type { Command } from "commander";
import { auditStats, renderStats } from "../../runtime/stats.js";
import { CliError, printJson, readInput } from "../io.js";
import { existingDefaultAudit, stateFlags, type StateFlags } from "../store.js";

export function register(program: Command): void {
  stateFlags(
    program
      .command("stats")
      .description(
        "aggregate an audit trail: per-tool calls, error and denial rates, replays, in-doubt, latency and token percentiles; a proxy's reads (resources, prompts, completions, lists, subscriptions) per operation",
      )
      .option(
        "--audit <file>",
        "audit trail (JSON Lines); - reads standard input (default: the one toolgate serve writes for the workspace, audit.jsonl in its state folder)",
      ),
  )
    .option("--json", "print the result as JSON")
    .action((opts: StateFlags & { audit?: string; json?: boolean }) => {
      const audit = opts.audit ?? existingDefaultAudit(opts, "--audit FILE");
      const stats = auditStats(readInput(audit));
      if (stats.broken_lines > 0 && stats.broken_lines === stats.lines) {
        const first = stats.broken[0];
        throw new CliError(
          `the audit trail holds no usable record (${stats.broken_lines} broken line(s)${first ? `; line ${first.line}: ${first.reason}` : ""}). Expected one AuditRecord JSON object per line, as the gateway writes to its audit trail; check --audit`,
        );
      }
      if (opts.json) printJson(stats);
      else process.stdout.write(renderStats(stats) + "\n");
    });
}
