/**
 * Where `toolgate serve` and `toolgate proxy` keep their state, decided and made ready at start,
 * before any call: the state folder, the SQLite file `sqlite:` names, the audit trail, and which
 * of them lie inside the workspace (to be hidden from the tools). A capability key file inside
 * the workspace is refused here too: the agent could read the key and mint any capability.
 *
 * Outside the workspace a folder only has to be ours alone (private.ts). Inside it, a folder is
 * used only when the operator named it, only directly under the workspace root, and only as a
 * folder toolgate made (in-workspace.ts); a state file directly in the workspace root is refused.
 */
import { existsSync, realpathSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { ToolgateError } from "../core/errors.js";
import { claimStateDirInWorkspace } from "./in-workspace.js";
import {
  AUDIT_FILE,
  STATE_DB_FILE,
  defaultKeyFile,
  defaultStateDir,
  realWorkspace,
  sqliteUrlPath,
} from "./location.js";
import { ensurePrivateDir, isInside, realish } from "./private.js";

export interface StatePlacementInput {
  /** The workspace: relative paths resolve against it. */
  workspace: string;
  /**
   * Whether the workspace is a tree the agent can write (serve: yes). False for a proxy started
   * where the upstream's reach says nothing (see `cwdCountsAsWorkspace`): then no in-workspace rules apply.
   */
  guard: boolean;
  /** `--state-dir`; default `defaultStateDir(workspace)`. */
  stateDir?: string;
  /** Store URL; `sqlite:` alone names `<state folder>/state.db`. */
  store: string;
  /** Audit file, or false for none; default `<state folder>/audit.jsonl`. */
  audit?: string | false;
  /** Capability key file, checked to lie outside the workspace. */
  keys?: string;
  env?: NodeJS.ProcessEnv;
}

export interface StatePlacement {
  /** The workspace's real path. */
  workspace: string;
  /** The store URL with a SQLite path made absolute. */
  store: string;
  /** Absolute audit path, or false. */
  audit: string | false;
  /** State folders inside the workspace (real paths), for the coding catalog's `hiddenPaths`. */
  hidden: string[];
  /** Things the operator should know (stderr lines without a prefix). */
  notes: string[];
}

/** Decides every state path, creates and checks the folders, and refuses a key file inside the workspace. */
export function placeState(input: StatePlacementInput): StatePlacement {
  const env = input.env ?? process.env;
  const workspace = realWorkspace(input.workspace);
  let defaultDir: string | undefined;
  const perUser = () => (defaultDir ??= defaultStateDir(workspace, env));
  // Worked out only when a default needs it: with every path explicit, no home folder is needed.
  const stateDir = () => (input.stateDir !== undefined ? resolve(workspace, input.stateDir) : perUser());
  const dbFile = sqliteFile(input.store, workspace, stateDir);
  const audit = input.audit === false ? false : resolve(workspace, input.audit ?? join(stateDir(), AUDIT_FILE));

  if (input.keys !== undefined && input.guard) checkKeyFileOutside(resolve(input.keys), workspace, env);
  const folders = [...new Set([dbFile, audit].filter((p): p is string => typeof p === "string").map(dirname))];
  const hidden: string[] = [];
  for (const folder of folders) {
    const real = realish(folder);
    if (input.guard && isInside(real, workspace)) {
      checkInWorkspaceFolder(folder, real, workspace, input.stateDir === undefined && folder === stateDir());
      const records = perUser();
      if (isInside(realish(records), workspace)) {
        throw new ToolgateError(
          "unsafe_state_path",
          `toolgate records the state folders it creates inside a workspace in ${records}, and that is inside the workspace ${workspace} too, where the agent could forge the record; set XDG_STATE_HOME (or HOME) to a folder outside the workspace`,
        );
      }
      claimStateDirInWorkspace(folder, records);
      hidden.push(real);
    } else {
      ensurePrivateDir(folder, "the state folder");
    }
  }
  return {
    workspace,
    store: dbFile === null ? input.store : `sqlite:${dbFile}`,
    audit,
    hidden,
    notes: legacyNotes(workspace, hidden, dbFile),
  };
}

/**
 * Whether the current folder counts as a workspace, for `toolgate proxy` (which has no
 * `--workspace`) and `cap keygen`'s warning: yes, unless it holds toolgate's own per-user
 * folders (`/`, `/home`, the home folder), where the folder a command was started in says
 * nothing about where an agent works, and every path would count as inside it.
 */
export function cwdCountsAsWorkspace(cwd: string, env: NodeJS.ProcessEnv = process.env): boolean {
  const real = realWorkspace(cwd);
  try {
    return !isInside(realish(defaultStateDir(real, env)), real) && !isInside(realish(defaultKeyFile(env)), real);
  } catch {
    return true;
  }
}

/** The absolute SQLite file a store URL names, or null (another scheme, or `:memory:`). */
function sqliteFile(url: string, workspace: string, stateDir: () => string): string | null {
  if (!/^sqlite:/i.test(url)) return null;
  const path = sqliteUrlPath(url, workspace, stateDir);
  return path === ":memory:" ? null : path;
}

function checkInWorkspaceFolder(folder: string, real: string, workspace: string, isDefault: boolean): void {
  if (isDefault) {
    throw new ToolgateError(
      "unsafe_state_path",
      `the default state folder ${folder} is inside the workspace ${workspace}, where the agent can write; keep state outside it: set XDG_STATE_HOME to a folder outside the workspace, or pass --state-dir DIR (outside; or inside, directly under the root, e.g. --state-dir .toolgate, to have it created and hidden)`,
    );
  }
  if (real === workspace) {
    throw new ToolgateError(
      "unsafe_state_path",
      `a state file directly in the workspace root ${workspace} is open to the agent; keep state outside the workspace (the default), or in a folder of its own directly under the root (--state-dir .toolgate), which toolgate creates at start and hides from the tools`,
    );
  }
  if (real !== folder) {
    throw new ToolgateError(
      "unsafe_state_path",
      `the state folder ${folder} is reached through a symbolic link inside the workspace ${workspace} (it resolves to ${real}), which the agent could point elsewhere; name a real folder directly under the root (e.g. --state-dir .toolgate) or one outside the workspace`,
    );
  }
  if (dirname(real) !== workspace) {
    throw new ToolgateError(
      "unsafe_state_path",
      `the state folder ${folder} is inside the workspace ${workspace} but not directly under its root: the agent could rename a folder on its path and put anything in its place; use a folder directly under the root (e.g. --state-dir .toolgate) or one outside the workspace`,
    );
  }
}

/** Refuses a key file whose path or real path lies inside the workspace. */
export function checkKeyFileOutside(file: string, workspace: string, env: NodeJS.ProcessEnv = process.env): void {
  let real = file;
  try {
    real = realpathSync(file);
  } catch {
    // loadKeys reports a missing file
  }
  if (!isInside(file, workspace) && !isInside(real, workspace)) return;
  const moveTo = keyFileOutside(workspace, env);
  throw new ToolgateError(
    "key_file_in_workspace",
    `the capability key file ${file}${real !== file ? ` (${real})` : ""} is inside the workspace ${workspace}: anything the agent runs there can read it (e.g. bash_execute "base64 keys.json") and mint any capability. Move it outside the workspace, e.g. mkdir -p -m 700 ${dirname(moveTo.file)} && mv ${file} ${moveTo.file}, and pass --keys with the new path (or set TOOLGATE_KEYS)${moveTo.isDefault ? "; toolgate cap keygen without --out writes there" : ""}`,
  );
}

/** Where to suggest moving a key file: the default one, unless that is inside the workspace too (e.g. the workspace is
 * the home folder). */
function keyFileOutside(workspace: string, env: NodeJS.ProcessEnv): { file: string; isDefault: boolean } {
  try {
    const file = defaultKeyFile(env);
    if (!isInside(realish(file), workspace)) return { file, isDefault: true };
  } catch {
    // no home folder
  }
  return { file: "/etc/toolgate/keys.json", isDefault: false };
}

/** A note when the workspace still holds a store from a version that kept it there, and this one uses another. */
function legacyNotes(workspace: string, hidden: string[], dbFile: string | null): string[] {
  const old = join(workspace, ".toolgate");
  const oldDb = join(old, STATE_DB_FILE);
  if (hidden.includes(old) || dbFile === oldDb || !existsSync(oldDb)) return [];
  const move =
    dbFile === null
      ? ""
      : `; if toolgate itself wrote that file and you trust it, stop toolgate and move it: mv ${oldDb} ${dbFile}`;
  return [
    `note: ${oldDb} is not used: toolgate keeps its state outside the workspace${dbFile === null ? "" : `, in ${dbFile}`}, where the agent cannot write. Anything in the workspace may have been written by the agent or shipped with the repository${move}`,
  ];
}
