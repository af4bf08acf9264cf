/**
 * `toolgate cap issue`: a root grant signed with the key file's last kid (or `--kid`); prints the
 * token. Rights outside the standard four are accepted with a warning.
 */
import type { Command } from "commander";
import { createCapabilityAuthority } from "../../../capability/authority.js";
import { CliError } from "../../io.js";
import { grantInput, grantOptions, keysFrom, warnCustomRights, type GrantFlags } from "./flags.js";
import { printGrant } from "./print-grant.js";

export function register(cap: Command): void {
  grantOptions(cap.command("issue").description("issue a root grant; prints the token"))
    .option("--keys <file>", "key file (default: TOOLGATE_KEYS, else ~/.config/toolgate/keys.json when it exists)")
    .option("--kid <kid>", "sign with this kid (default: the last in the key file)")
    .action((flags: GrantFlags & { keys?: string; kid?: string }) => {
      const input = grantInput(flags);
      if (input.rights === undefined || input.objects === undefined)
        throw new CliError("cap issue needs --rights and --objects, e.g. --rights read --objects path:/ws");
      if (input.ttl_ms === undefined && input.expires_at === undefined)
        throw new CliError("cap issue needs --ttl (e.g. 1h) or --expires-at");
      warnCustomRights(input.rights);
      const authority = createCapabilityAuthority({ keys: keysFrom(flags) });
      printGrant(
        authority.issue({
          ...input,
          rights: input.rights,
          objects: input.objects,
          ...(flags.kid ? { kid: flags.kid } : {}),
        }),
        flags.json,
      );
    });
}
