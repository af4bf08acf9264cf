/**
 * `toolgate cap revoke ID|TOKEN`: revokes a grant and every grant attenuated from it, in the store
 * the runtime shares (default `sqlite:`, the one toolgate serve keeps for the workspace).
 */
import type { Command } from "commander";
import { revokeGrant } from "../../../capability/revoke.js";
import { parseToken, TOKEN_PREFIX } from "../../../capability/token.js";
import { sqlitePath } from "../../../idempotency/open.js";
import type { Store } from "../../../idempotency/store.js";
import { ToolgateError } from "../../../core/errors.js";
import { printJson } from "../../io.js";
import { openStoreFor, stateFlags, stateLocation, withStore, type StateFlags } from "../../store.js";
import { readToken } from "./flags.js";

const DEFAULT_STORE = "sqlite:";

/**
 * Opens the store `cap revoke` writes to. A missing SQLite file is created — a grant may be
 * revoked before the runtime's first run — and that is said on stderr, because a revocation in a
 * new file protects nothing unless the runtime uses that same store. Returns the created path.
 */
async function openRevocationStore(url: string, flags: StateFlags): Promise<{ store: Store; created: string | null }> {
  try {
    return { store: await openStoreFor(url, flags, { mustExist: true }), created: null };
  } catch (err) {
    if (!(err instanceof ToolgateError && err.code === "store_missing")) throw err;
  }
  const { workspace, stateDir } = stateLocation(flags);
  const created = sqlitePath(url, workspace, stateDir);
  const store = await openStoreFor(url, flags);
  process.stderr.write(
    `toolgate: note: created a new store at ${created} (there was none); the revocation takes effect only where the runtime uses this same store (toolgate serve --store); if you meant an existing one, pass it with --store\n`,
  );
  return { store, created };
}

export function register(cap: Command): void {
  stateFlags(
    cap
      .command("revoke")
      .description("revoke a grant id (or a token's own id) and every grant attenuated from it")
      .argument("<id>", "grant id (cap_…) or a whole token")
      .option("--reason <text>", "why, kept with the revocation")
      .option(
        "--store <url>",
        `store shared with the runtime (default ${DEFAULT_STORE}, the one toolgate serve uses for the workspace); a missing SQLite file is created, with a note on stderr`,
      ),
  )
    .option("--json", "print JSON")
    .action(async (arg: string, flags: StateFlags & { reason?: string; store?: string; json?: boolean }) => {
      let id = arg;
      let until: number | null = null;
      if (arg.startsWith(TOKEN_PREFIX) || arg === "-") {
        const g = parseToken(readToken(arg)).grant;
        id = g.id;
        until = g.exp;
      }
      const { store, created } = await openRevocationStore(flags.store ?? DEFAULT_STORE, flags);
      await withStore(store, (s) => revokeGrant(s, id, { reason: flags.reason ?? null, until, now: Date.now() }));
      if (flags.json) printJson({ revoked: id, until, created_store: created });
      else process.stdout.write(`revoked ${id} (and every grant attenuated from it)\n`);
    });
}
