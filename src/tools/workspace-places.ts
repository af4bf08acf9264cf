/**
 * Which places of a workspace are hidden and which read-only (workspace.ts): the defaults, and
 * the operator's lists read into absolute paths, each entry checked by option name.
 */
import { realpathSync } from "node:fs";
import { homedir } from "node:os";
import { basename, dirname, isAbsolute, resolve as resolveLexically } from "node:path";
import { ToolgateError } from "../core/errors.js";

/**
 * Hidden by default: toolgate's own state (`.toolgate/`: idempotency records, approvals, the
 * audit trail). A tool that could read or rewrite it could approve its own calls or erase its trail.
 */
export const HIDDEN_DEFAULT: readonly string[] = [".toolgate"];

/**
 * Read-only by default: repository files whose content runs on the host, outside the sandbox,
 * the next time a person runs git, opens the editor or starts a shell there. First the whole
 * top-level `.git` (a folder or a gitfile): a mount point cannot be renamed, so no copy of it with
 * writable hooks can take its place, and a gitfile cannot be pointed at a planted git folder; git
 * commands that only read work inside the sandbox, those that write it (add, commit, checkout)
 * fail there. Then, for an operator who takes `.git` out of the list to let the agent commit, what
 * must stay read-only inside it: hooks and config (core.fsmonitor, core.hooksPath), the places
 * that can stand in for them (a linked worktree's config, `commondir` pointing git at another
 * folder, the git folders of submodules and worktrees with their own hooks and config, which
 * `git status` in the superproject reads). Then submodule URLs, editor and agent settings, direnv
 * and shell start-up files. Submodule and worktree commands that write those git folders run
 * outside the sandbox, or the operator narrows the list.
 */
export const PROTECTED_DEFAULT: readonly string[] = [
  ".git",
  ".git/hooks",
  ".git/config",
  ".git/config.worktree",
  ".git/commondir",
  ".git/modules",
  ".git/worktrees",
  ".gitmodules",
  ".vscode",
  ".idea",
  ".mcp.json",
  ".claude",
  ".cursor",
  ".envrc",
  ".bashrc",
  ".bash_profile",
  ".bash_login",
  ".bash_logout",
  ".profile",
  ".zshrc",
  ".zshenv",
  ".zprofile",
  ".zlogin",
];

/** True when `p` is `dir` or lies under it. */
export const within = (p: string, dir: string) => dir === "/" || p === dir || p.startsWith(dir + "/");

/** Hidden places as absolute paths: a relative one is under the root; the last name is kept as is (a planted symlink
 * there is hidden itself, not its target). */
export function hiddenPlaces(root: string, paths: readonly string[]): string[] {
  return list("hiddenPaths", paths).map((p) => {
    const abs = resolveLexically(root, p);
    try {
      return resolveLexically(realpathSync(dirname(abs)), basename(abs));
    } catch {
      return abs;
    }
  });
}

/** Read-only places as absolute paths under the root; an absolute entry, or one outside the root or the root itself, is refused. */
export function readOnlyPlaces(root: string, paths: readonly string[]): string[] {
  return list("protectedPaths", paths).map((p, i) => {
    const abs = resolveLexically(root, p);
    if (isAbsolute(p) || !within(abs, root) || abs === root) {
      throw new ToolgateError(
        "invalid_option",
        `protectedPaths[${i}] must be a path inside the workspace, relative to its root (e.g. ".git/hooks"); received ${JSON.stringify(p)}`,
      );
    }
    return abs;
  });
}

function list(option: string, paths: readonly string[]): readonly string[] {
  if (!Array.isArray(paths))
    throw new ToolgateError(
      "invalid_option",
      `${option} must be an array of paths; received ${JSON.stringify(paths)}; example [".toolgate"]`,
    );
  paths.forEach((p, i) => {
    if (typeof p !== "string" || p === "")
      throw new ToolgateError(
        "invalid_option",
        `${option}[${i}] must be a non-empty path; received ${JSON.stringify(p)}`,
      );
  });
  return paths;
}

/**
 * Host trees the envelope binds read-only at their own path (README, "The envelope") and the
 * kernel's own: none can be the one writable tree, and a root toolgate hands the tree it works in
 * to the sandbox user (`sandbox/handover.ts`), which for these would give the system away.
 */
const SYSTEM_TREES = [
  "/usr",
  "/bin",
  "/sbin",
  "/lib",
  "/lib32",
  "/lib64",
  "/libx32",
  "/etc",
  "/boot",
  "/proc",
  "/sys",
  "/dev",
  "/run",
  // Root's crontabs and mail, the system's logs: handed to the sandbox user, a crontab would run its lines as root.
  "/var/spool",
  "/var/mail",
  "/var/log",
];

/**
 * Where source code lives inside `/usr` (the FHS's; a container's `WORKDIR /usr/src/app`): a
 * project in one is no system tree, and the envelope binds the workspace over the read-only `/usr`.
 * The folders themselves stay refused.
 */
const SOURCE_FOLDERS = ["/usr/src", "/usr/local/src"];

/**
 * Folders that hold other folders' projects, other users' files or services' data: a project may
 * live inside one (`/srv/agent`, `/root/app`), but the folder itself is never one, and a root
 * toolgate would hand every root-owned file in it to the sandbox user.
 */
const SHARED_FOLDERS = ["/home", "/root", "/var", "/var/lib", "/var/tmp", "/tmp", "/srv", "/opt", "/mnt", "/media"];

/**
 * Why the real path `real` cannot be a workspace (the whole file system, a system tree, a shared
 * folder itself, a home folder itself), or undefined. A home folder holds its owner's keys and
 * credentials (.ssh, .aws, .netrc), which every tool could read and a root toolgate would hand
 * over, and it is where an MCP client starts a server it gave no folder.
 */
export function systemWorkspace(real: string, home: string = homedir()): string | undefined {
  if (real === "/") return "is the whole file system";
  const tree = SYSTEM_TREES.find((t) => within(real, t));
  if (tree !== undefined && !SOURCE_FOLDERS.some((s) => real !== s && within(real, s)))
    return `is ${real === tree ? "" : "inside "}the system folder ${tree}`;
  if (real === "/root" || isHome(real, home) || /^\/home\/[^/]+$/.test(real))
    return "is a home folder (its keys and credentials: .ssh, .aws, .netrc)";
  if (SHARED_FOLDERS.includes(real)) return `is the shared folder ${real} itself, not a project inside it`;
  return undefined;
}

/** True when the real path `real` is the home folder `home` names (spelt with a trailing slash, or through a link). */
function isHome(real: string, home: string): boolean {
  if (home === "") return false;
  try {
    return real === realpathSync(home);
  } catch {
    return real === resolveLexically(home);
  }
}

/** What follows a system workspace's refusal: the tools' reach, and what to pass instead. */
export const SYSTEM_WORKSPACE_FIX =
  "the tools may change anything in their workspace, and a root toolgate hands its root-owned files to the sandbox user; pass the project's own folder (an MCP client starts its servers in / or the home folder, so name the folder in the server's arguments: serve --workspace /path/to/project)";
