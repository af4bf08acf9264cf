/**
 * `toolgate breakeven`: when constrained decoding pays (docs/economics.md,
 * equation 1) — from given figures, or per tool from an audit trail.
 *   toolgate breakeven --tokens L --mask-ms t --repair-ms T [--observed-rate p] [--decode-ms d] [--json]
 *   toolgate breakeven --audit [FILE] [--mask-ms t] [--repair-ms T] [--json]   (no FILE: the trail toolgate serve
 * writes for the current folder)
 * Exit 0; 2 for bad input (zero or negative times, a rate outside [0, 1], an unreadable trail).
 */
import type { Command } from "commander";
import { breakeven } from "../../economics/breakeven.js";
import { breakevenFromAudit } from "../../economics/breakeven-audit.js";
import { renderAuditBreakeven, renderBreakeven } from "../economics-text.js";
import { CliError, printJson, readInput } from "../io.js";
import { existingDefaultAudit, stateFlags, type StateFlags } from "../store.js";

interface Options extends StateFlags {
  tokens?: string;
  maskMs?: string;
  repairMs?: string;
  observedRate?: string;
  decodeMs?: string;
  audit?: string | true;
  json?: boolean;
}

/** A numeric option: a clear usage error for text that is not a number. */
export function numberOption(flag: string, text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  const n = Number(text);
  if (text.trim() === "" || !Number.isFinite(n))
    throw new CliError(`${flag} must be a number; received ${JSON.stringify(text)}`);
  return n;
}

export function register(program: Command): void {
  stateFlags(program.command("breakeven"))
    .description(
      "when constraining decoding to the schema pays: p_break = L·t_mask/T_repair (docs/economics.md, equation 1)",
    )
    .option("--tokens <L>", "output tokens of one call (L_gen)")
    .option("--mask-ms <t>", "masking overhead per token, ms (t_mask; default 0.5 with --audit)")
    .option(
      "--repair-ms <T>",
      "latency of one repair turn, ms (T_repair; with --audit: used when no repair can be timed)",
    )
    .option("--observed-rate <p>", "measured malformation rate p_err in [0, 1]")
    .option("--decode-ms <d>", "decode time per token, ms (t_decode; only shifts both latencies)")
    .option(
      "--audit [file]",
      "estimate per tool from an audit trail (JSON Lines of AuditRecord); without FILE, the one toolgate serve writes for the workspace (--workspace, default the current folder)",
    )
    .option("--json", "print the result as JSON")
    .action((opts: Options) => {
      const mask_ms = numberOption("--mask-ms", opts.maskMs);
      const repair_ms = numberOption("--repair-ms", opts.repairMs);
      if (opts.audit !== undefined) {
        const audit = opts.audit === true ? existingDefaultAudit(opts, "--audit FILE") : opts.audit;
        for (const [flag, v] of [
          ["--tokens", opts.tokens],
          ["--observed-rate", opts.observedRate],
          ["--decode-ms", opts.decodeMs],
        ] as const) {
          if (v !== undefined)
            throw new CliError(`${flag} does not apply with --audit: L_gen and p_err are measured from the trail`);
        }
        const result = breakevenFromAudit(readInput(audit), {
          ...(mask_ms !== undefined ? { mask_ms } : {}),
          ...(repair_ms !== undefined ? { repair_ms } : {}),
        });
        if (result.broken.length > 0) {
          const shown = result.broken.slice(0, 5).map((b) => `  line ${b.line}: ${b.reason}`);
          process.stderr.write(
            `toolgate: ${result.broken.length} broken line(s) in ${audit} skipped, ${result.records} used:\n${shown.join("\n")}${result.broken.length > 5 ? `\n  … and ${result.broken.length - 5} more` : ""}\n`,
          );
        }
        if (opts.json) printJson(result);
        else process.stdout.write(renderAuditBreakeven(result));
        return;
      }
      const tokens = numberOption("--tokens", opts.tokens);
      const missing = [
        tokens === undefined && "--tokens",
        mask_ms === undefined && "--mask-ms",
        repair_ms === undefined && "--repair-ms",
      ].filter(Boolean);
      if (missing.length > 0) {
        throw new CliError(
          `breakeven needs ${missing.join(", ")} (e.g. --tokens 80 --mask-ms 0.5 --repair-ms 1800), or --audit FILE`,
        );
      }
      const observed = numberOption("--observed-rate", opts.observedRate);
      const decode = numberOption("--decode-ms", opts.decodeMs);
      const result = breakeven({
        tokens: tokens!,
        mask_ms: mask_ms!,
        repair_ms: repair_ms!,
        ...(observed !== undefined ? { observed_rate: observed } : {}),
        ...(decode !== undefined ? { decode_ms: decode } : {}),
      });
      if (opts.json) printJson(result);
      else process.stdout.write(renderBreakeven(result));
    });
}
