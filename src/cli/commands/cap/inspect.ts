/**
 * `toolgate cap inspect TOKEN`: the blocks and the effective grant, verified when keys are
 * configured (unverified otherwise), with revocation and budgets read from `--store` when given.
 */
import type { Command } from "commander";
import { createCapabilityAuthority } from "../../../capability/authority.js";
import { summariseGrant, viewGrant } from "../../../capability/grant.js";
import { parseToken } from "../../../capability/token.js";
import { escapeUntrusted, jsonForDisplay } from "../../../observation/escape.js";
import { printJson } from "../../io.js";
import { stateFlags, type StateFlags } from "../../store.js";
import { optionalKeys, readToken, withStoreFlag } from "./flags.js";

export function register(cap: Command): void {
  stateFlags(
    cap
      .command("inspect")
      .description("show the blocks and the effective grant; verified when keys are configured")
      .argument("<token>", "token (- reads standard input)")
      .option(
        "--keys <file>",
        "key file (default: TOOLGATE_KEYS, else ~/.config/toolgate/keys.json when it exists; without keys the token is shown unverified)",
      )
      .option(
        "--store <url>",
        "also check revocation in this store (sqlite: is the one toolgate serve uses for the workspace)",
      ),
  )
    .option("--json", "print JSON")
    .action(async (arg: string, flags: StateFlags & { keys?: string; store?: string; json?: boolean }) => {
      const token = readToken(arg);
      const parsed = parseToken(token);
      const keys = optionalKeys(flags);
      const report = await withStoreFlag(flags.store, flags, async (store) => {
        if (!keys)
          return {
            status: "unverified",
            reason: "no keys configured (--keys or TOOLGATE_KEYS)",
            blocks: parsed.blocks.map((b) => b.block),
            grant: viewGrant(parsed.grant),
          };
        return createCapabilityAuthority({ keys, ...(store ? { store } : {}) }).inspect(token);
      });
      if (flags.json) return printJson(report);
      // A holder writes its own blocks (offline attenuation): their text is shown escaped.
      const lines = [
        `status: ${report.status}${report.reason ? ` (${escapeUntrusted(report.reason)})` : ""}`,
        `grant: ${escapeUntrusted(summariseGrant(parsed.grant))}`,
      ];
      report.blocks.forEach((b, i) => lines.push(`block ${i}: ${jsonForDisplay(b)}`));
      for (const b of "budgets" in report ? report.budgets : [])
        lines.push(
          `budget of block ${b.block_id}: ${b.spent === null ? "? (pass --store to read it)" : b.spent} of ${b.limit} spent`,
        );
      process.stdout.write(lines.join("\n") + "\n");
    });
}
