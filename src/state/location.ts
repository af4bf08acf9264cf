/**
 * Where toolgate keeps its own files when nobody says otherwise: per user, outside every
 * workspace, so nothing an agent writes in its workspace can be taken for toolgate state and
 * the agent cannot read or replace it.
 *
 * - State (SQLite store, audit trail): `$XDG_STATE_HOME/toolgate/<name>-<hash>/`, one folder per
 *   workspace, keyed by the workspace's real path (`<name>` is its last component, for people
 *   browsing the folder; `<hash>` makes it unique). XDG_STATE_HOME defaults to `~/.local/state`.
 * - Keys: `$XDG_CONFIG_HOME/toolgate/keys.json`, XDG_CONFIG_HOME defaulting to `~/.config`.
 *
 * The home folder is `HOME`, else the account's home from the user database. Without an
 * absolute one the default is an error naming the fix: there is no shared fallback such as
 * `/tmp`, where another local user could create the folder first, and which a reboot empties
 * (revocations and records must outlive a restart).
 */
import { createHash } from "node:crypto";
import { realpathSync } from "node:fs";
import { userInfo } from "node:os";
import { basename, isAbsolute, join, resolve } from "node:path";
import { ToolgateError } from "../core/errors.js";

/** The SQLite file `sqlite:` names, inside the state folder. */
export const STATE_DB_FILE = "state.db";
/** The audit trail, inside the state folder. */
export const AUDIT_FILE = "audit.jsonl";

/** The default state folder of `workspace` (not created here; see `ensurePrivateDir`). */
export function defaultStateDir(workspace: string, env: NodeJS.ProcessEnv = process.env): string {
  return join(xdgBase(env, "XDG_STATE_HOME", [".local", "state"]), "toolgate", workspaceKey(workspace));
}

/** The default capability key file, `$XDG_CONFIG_HOME/toolgate/keys.json`. */
export function defaultKeyFile(env: NodeJS.ProcessEnv = process.env): string {
  return join(xdgBase(env, "XDG_CONFIG_HOME", [".config"]), "toolgate", "keys.json");
}

/**
 * The file a `sqlite:` URL names: `sqlite:` alone → `<state folder>/state.db`; a relative
 * `sqlite:PATH` → under the workspace; `sqlite:/abs` or `sqlite:///abs` as given; `:memory:` as is.
 */
export function sqliteUrlPath(url: string, workspace: string, stateDir: () => string): string {
  let path = url.slice("sqlite:".length);
  if (path.startsWith("//")) path = path.slice(2);
  if (path === ":memory:") return path;
  return path === "" ? join(stateDir(), STATE_DB_FILE) : resolve(workspace, path);
}

/** The workspace's real path when it exists (so every spelling of it shares one folder), else its absolute path. */
export function realWorkspace(workspace: string): string {
  const abs = resolve(workspace);
  try {
    return realpathSync(abs);
  } catch {
    return abs;
  }
}

/** `<name>-<16 hex of sha256(real path)>`; the name keeps only characters safe in a file name. */
export function workspaceKey(workspace: string): string {
  const real = realWorkspace(workspace);
  const name = basename(real)
    .replace(/[^A-Za-z0-9._-]/g, "_")
    .replace(/^\.+/, "")
    .slice(0, 40);
  const hash = createHash("sha256").update(real).digest("hex").slice(0, 16);
  return name ? `${name}-${hash}` : hash;
}

function xdgBase(env: NodeJS.ProcessEnv, variable: string, underHome: string[]): string {
  // The XDG base directory specification: a relative value is invalid and is ignored.
  const value = env[variable];
  if (value && isAbsolute(value)) return value;
  return join(homeDir(env, variable), ...underHome);
}

function homeDir(env: NodeJS.ProcessEnv, variable: string): string {
  if (env.HOME && isAbsolute(env.HOME)) return env.HOME;
  let fromAccount: string | undefined;
  try {
    fromAccount = userInfo().homedir;
  } catch {
    // no entry for this uid in the user database
  }
  if (fromAccount && isAbsolute(fromAccount)) return fromAccount;
  throw new ToolgateError(
    "state_dir_unusable",
    `toolgate keeps its state and keys under your home folder, and there is none: HOME is ${env.HOME === undefined ? "unset" : JSON.stringify(env.HOME)} and the user database gives no absolute home for uid ${process.getuid?.() ?? "?"}; set ${variable} (or HOME) to an absolute folder you own, or name the place explicitly (--state-dir DIR, --store URL, --audit FILE, --keys FILE)`,
  );
}
