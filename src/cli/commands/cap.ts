/**
 * `toolgate cap …`: issue, attenuate, inspect, verify and revoke capability tokens, and make a
 * key file, one subcommand per file in `cap/` (each parses flags, calls the capability API and
 * prints; `cap/flags.ts` is the parsing they share). Keys come from `--keys FILE` or
 * `TOOLGATE_KEYS` and never appear in any output.
 *
 *   cap keygen [--out FILE] [--kid K]          create a key file (default ~/.config/toolgate/keys.json), or add a kid
 * to it (rotation)
 *   cap issue --rights read,write --objects path:/ws,host:api.example.com --ttl 1h [--max-cost N] [--budget N]
 *   cap attenuate TOKEN [--rights …] [--objects …] [--ttl 10m] …   (no key needed)
 *   cap inspect TOKEN [--json]                 blocks and the effective grant; verified when keys are there
 *   cap verify TOKEN --op OP --target OBJ [--cost N] [--store URL] [--json]   exit 0 allowed, 1 denied, 2 usage
 *   cap revoke ID|TOKEN [--reason R] [--store URL]
 * Keys: `--keys FILE`, else TOOLGATE_KEYS, else the default key file when it exists. `sqlite:` is the
 * state toolgate serve keeps for the workspace (`--workspace`, `--state-dir` as serve had them).
 * inspect and verify refuse a missing SQLite store (never create one); revoke creates it, with a note.
 */
import type { Command } from "commander";
import * as attenuate from "./cap/attenuate.js";
import * as inspect from "./cap/inspect.js";
import * as issue from "./cap/issue.js";
import * as keygen from "./cap/keygen.js";
import * as revoke from "./cap/revoke.js";
import * as verify from "./cap/verify.js";

export function register(program: Command): void {
  const cap = program
    .command("cap")
    .description("capability tokens C = (R, O, P, E): issue, attenuate, inspect, verify, revoke");
  // In this order in `toolgate cap --help`.
  for (const sub of [keygen, issue, attenuate, inspect, verify, revoke]) sub.register(cap);
}
