import { existsSync } from "node:fs";
import { join, resolve } from "node:path";
import type { Command } from "commander";
import { openStore } from "../idempotency/open.js";
import type { Store } from "../idempotency/store.js";
import { redactUrl } from "../idempotency/stores/driver.js";
import { AUDIT_FILE, defaultStateDir } from "../state/location.js";
import type { StatePlacement } from "../state/placement.js";
import { CliError } from "./io.js";

/**
 * `--workspace` and `--state-dir` on the commands that read what `toolgate serve` recorded: with
 * the same values serve was started with (none, from the same folder), `sqlite:` and the default
 * audit trail name the files serve uses.
 */
export interface StateFlags {
  workspace?: string;
  stateDir?: string;
}

/** Adds `--workspace DIR` and `--state-dir DIR` to a command. */
export function stateFlags(cmd: Command): Command {
  return cmd
    .option(
      "--workspace <dir>",
      "the workspace toolgate serve was started for: sqlite: and the default audit trail are its state (default: the current directory)",
    )
    .option(
      "--state-dir <dir>",
      "the state folder toolgate serve was given with --state-dir (relative to the workspace)",
    );
}

/** The workspace and state folder the flags name. */
export function stateLocation(flags: StateFlags): { workspace: string; stateDir: string } {
  const workspace = resolve(flags.workspace ?? process.cwd());
  return {
    workspace,
    stateDir: flags.stateDir !== undefined ? resolve(workspace, flags.stateDir) : defaultStateDir(workspace),
  };
}

/** The audit trail serve writes by default for these flags. */
export function defaultAuditFile(flags: StateFlags): string {
  return join(stateLocation(flags).stateDir, AUDIT_FILE);
}

/** That default trail, refused with what to pass when serve has written none there (a command run from another folder). */
export function existingDefaultAudit(flags: StateFlags, auditFlag: string): string {
  const audit = defaultAuditFile(flags);
  if (!existsSync(audit))
    throw new CliError(
      `no audit trail at ${audit}: toolgate serve has recorded no call for this workspace yet; run from the folder serve was started in, or pass --workspace DIR (and --state-dir DIR) as serve had them, or ${auditFlag}`,
    );
  return audit;
}

/** Opens `url` as a command run with `flags` sees it (`sqlite:` → the state folder's state.db; relative paths under the
 * workspace). */
export function openStoreFor(url: string, flags: StateFlags, options: { mustExist?: boolean } = {}): Promise<Store> {
  const workspace = resolve(flags.workspace ?? process.cwd());
  // The default state folder is worked out only for `sqlite:` alone (openStore), so other URLs need no home folder.
  return openStore(url, {
    workspace,
    ...(flags.stateDir !== undefined ? { stateDir: resolve(workspace, flags.stateDir) } : {}),
    ...options,
  });
}

/** Runs `run` with an open store and always closes it, whether `run` resolves or throws. */
export async function withStore<T>(store: Store, run: (store: Store) => Promise<T>): Promise<T> {
  try {
    return await run(store);
  } finally {
    await store.close();
  }
}

/**
 * Opens the store at `url` for a command that works on what is already recorded, runs `run`,
 * and always closes it. A missing SQLite file is refused, never created: a mistyped `--store`
 * must not read as an empty store.
 */
export async function withExistingStore<T>(
  url: string,
  flags: StateFlags,
  run: (store: Store) => Promise<T>,
): Promise<T> {
  return withStore(await openStoreFor(url, flags, { mustExist: true }), run);
}

/** Help text of `--state-dir` for `toolgate serve` (`where`: "workspace") and `toolgate proxy` ("current folder"). */
export function stateDirHelp(where: string): string {
  return `folder for the SQLite store (sqlite:) and the audit trail (default: $XDG_STATE_HOME/toolgate/<name>-<hash>/, i.e. under ~/.local/state, outside the ${where}); inside the ${where} only directly under it, e.g. .toolgate: created at start${where === "workspace" ? " and hidden from the tools" : ""}, and refused unless toolgate made it`;
}

/** Where the state went, for a start line: the store and the audit trail. */
export function stateWhere(state: StatePlacement): string {
  const store = state.store.toLowerCase().startsWith("sqlite:")
    ? state.store.slice("sqlite:".length)
    : redactUrl(state.store);
  return `${store}, ${state.audit === false ? "no audit trail" : state.audit}`;
}

/** `--store` (serve's default store when omitted), the state flags and `--json`: what every command reading the store takes. */
export function storeFlags(c: Command): Command {
  return stateFlags(
    c.option(
      "--store <url>",
      "state store: sqlite: (toolgate serve's default: state.db in the workspace's state folder), sqlite:PATH, memory:, redis://…, postgres://…",
      "sqlite:",
    ),
  ).option("--json", "print JSON");
}
