/**
 * `toolgate cap verify TOKEN --op OP --target OBJ`: the capability check for one request; exit 0
 * allowed, 1 denied. With `--store` it checks revocation and spends budgets there; without it, a
 * budget is checked as a fresh one (nothing spent) and revocation not at all, which stderr says.
 */
import type { Command } from "commander";
import { createCapabilityAuthority } from "../../../capability/authority.js";
import { parseObject } from "../../../capability/objects.js";
import { ToolgateError } from "../../../core/errors.js";
import { escapeUntrusted } from "../../../observation/escape.js";
import { createMemoryStore } from "../../../idempotency/stores/memory.js";
import { CliError, EXIT, parseJson, printJson } from "../../io.js";
import { stateFlags, type StateFlags } from "../../store.js";
import { keysFrom, number, readToken, withStoreFlag } from "./flags.js";

export function register(cap: Command): void {
  stateFlags(
    cap
      .command("verify")
      .description("the capability check for one request: exit 0 allowed, 1 denied (prints code and reason)")
      .argument("<token>", "token (- reads standard input)")
      .requiredOption("--op <right>", "the right the call needs, e.g. write")
      .requiredOption("--target <object>", "the object the call touches, e.g. path:/ws/a.txt")
      .option("--cost <n>", "cost of the call (default 1)")
      .option("--tool <name>", "the calling tool")
      .option("--args <json>", "the call's arguments, for argument bounds")
      .option("--keys <file>", "key file (default: TOOLGATE_KEYS, else ~/.config/toolgate/keys.json when it exists)")
      .option(
        "--store <url>",
        "check revocation and spend budgets in this existing store (a real approval; a missing SQLite file is an error, not created; sqlite: is the one toolgate serve uses for the workspace)",
      ),
  )
    .option("--json", "print JSON")
    .action(
      async (
        arg: string,
        flags: StateFlags & {
          op: string;
          target: string;
          cost?: string;
          tool?: string;
          args?: string;
          keys?: string;
          store?: string;
          json?: boolean;
        },
      ) => {
        const token = readToken(arg);
        const keys = keysFrom(flags);
        try {
          parseObject(flags.target);
        } catch (err) {
          // A malformed --target is the operator's typo, not a denial by the grant.
          throw new CliError(`--target: ${(err as Error).message}`);
        }
        const request = {
          op: flags.op,
          target: flags.target,
          ...(flags.cost !== undefined ? { cost: number("--cost", flags.cost) } : {}),
          ...(flags.tool !== undefined ? { tool: flags.tool } : {}),
          ...(flags.args !== undefined ? { args: parseJson(flags.args, "--args") } : {}),
        };
        const decision = await withStoreFlag(flags.store, flags, (store) =>
          createCapabilityAuthority({ keys, ...(store ? { store } : {}) }).authorize(token, request),
        ).catch((err: unknown) => {
          if (!(err instanceof ToolgateError && err.code === "store_required") || flags.store !== undefined) throw err;
          // A budgeted grant without --store: checked against a fresh budget in a throwaway store,
          // as for a grant without a budget, revocation is not checked; stderr says both.
          process.stderr.write(
            "toolgate: without --store, the budget is checked as if nothing had been spent and revocation is not checked; pass --store sqlite: (toolgate serve's store for the workspace) to check both and spend\n",
          );
          return createCapabilityAuthority({ keys, store: createMemoryStore() }).authorize(token, request);
        });
        if (flags.json) printJson(decision);
        else if (decision.allowed)
          process.stdout.write(
            `allowed: grant ${decision.grant_id}${decision.remaining_budget !== undefined ? `, budget left ${decision.remaining_budget}` : ""}\n`,
          );
        else process.stdout.write(`denied: ${decision.code}: ${escapeUntrusted(decision.reason)}\n`);
        process.exitCode = decision.allowed ? EXIT.ok : EXIT.findings;
      },
    );
}
