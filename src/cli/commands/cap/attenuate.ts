/**
 * `toolgate cap attenuate TOKEN`: appends a narrowing block to a token, offline (no key needed);
 * prints the child token.
 */
import type { Command } from "commander";
import { attenuate } from "../../../capability/attenuate.js";
import { grantInput, grantOptions, readToken, type GrantFlags } from "./flags.js";
import { printGrant } from "./print-grant.js";

export function register(cap: Command): void {
  grantOptions(
    cap.command("attenuate").description("append a narrowing block (offline: no key needed); prints the child token"),
  )
    .argument("<token>", "parent token (- reads standard input)")
    .action((token: string, flags: GrantFlags) => {
      printGrant(attenuate(readToken(token), grantInput(flags)), flags.json);
    });
}
