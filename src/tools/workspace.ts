/**
 * Workspace confinement for the coding catalog (docs/envelope.md: a general catalog
 * is safe only inside an envelope sized for the broadest thing its
 * tools can do). Every path a tool touches is absolute and lies inside the workspace root; the
 * tools open it with `open()`, a walk from a held root descriptor that resolves symlinks itself
 * (fs/walk.ts), and then work on the descriptors it holds, never on a path string again: a
 * concurrent change of the tree cannot lead them out of the workspace or into its hidden places.
 */
import { constants, lstatSync, openSync, realpathSync, statSync } from "node:fs";
import { realpath } from "node:fs/promises";
import { basename, dirname, isAbsolute, relative, resolve as resolveLexically } from "node:path";
import { NoEffectError, ToolgateError } from "../core/errors.js";
import type { CheckIssue } from "../core/tool.js";
import { Guards } from "./fs/guards.js";
import { readHeld } from "./fs/read.js";
import { O_PATH, errno } from "./fs/sys.js";
import { walk, type Reached } from "./fs/walk.js";
import { cachedNamedByGit, type GitNamedIO } from "./git-named.js";

/** A confined workspace: its real root and a resolver that refuses anything outside it. */
export interface Workspace {
  /** The workspace root with every symlink resolved. */
  readonly root: string;
  /** Absolute real paths closed to every file tool and hidden from bash_execute: toolgate's state and key files. */
  readonly hidden: readonly string[];
  /** Absolute paths (they may not exist) the agent may read but never change: file_edit refuses them, the sandbox
   * mounts them read-only. */
  readonly readOnly: readonly string[];
  /**
   * Resolves `path` (absolute; `..` allowed) to its real location: the path the walk built when
   * it exists, else the deepest existing folder joined with the rest (a new file). Throws
   * `NoEffectError` (code `outside_workspace`, `protected_path` or `invalid_path`) naming the
   * path and the root when it is outside the root or hidden.
   */
  resolve(path: string, field?: string): Promise<string>;
  /** Like `resolve`, but returns the refusal as a check issue instead of throwing. */
  check(path: string, field?: string): Promise<CheckIssue[]>;
  /** `check` for a tool that changes the path: a read-only path is refused too (code `protected_path`). */
  checkWrite(path: string, field?: string): Promise<CheckIssue[]>;
  /** `path:<resolved>` when inside, else `path:<as given>` (the check has refused it already). */
  target(path: string): Promise<string>;
  /**
   * Opens `path` for a tool: the entry held by descriptor (release it with `close()`), or where
   * a missing one would be. `write` refuses read-only paths as well. Throws like `resolve`.
   */
  open(path: string, purpose: "read" | "write", field?: string): Promise<Opened>;
  /**
   * The workspace paths the repository's git config names for git to run or read on the host
   * (git-named.ts: core.hooksPath, include.path, the gitfile's git folder, files in command
   * values), read now and not already read-only; none when the read-only list protects neither
   * `.git` nor `.git/config`. file_edit refuses them; bash_execute's sandbox gets them read-only
   * for the call. Throws NoEffectError (git_config_too_large) past its bounds.
   */
  gitNamed(): Promise<string[]>;
}

export type Opened = Reached | { kind: "missing"; path: string; notDir: boolean; close(): Promise<void> };

export interface WorkspaceOptions {
  /** Closed to every file tool, hidden from the shell: absolute, or relative to the root. Default HIDDEN_DEFAULT. */
  hiddenPaths?: readonly string[];
  /** Read-only for the agent: relative to the root. Default PROTECTED_DEFAULT. */
  protectedPaths?: readonly string[];
}

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

const within = (p: string, dir: string) => dir === "/" || p === dir || p.startsWith(dir + "/");

/** Opens a workspace at `root` (which must exist; symlinks in it are resolved once, now, and the root is held open). */
export function openWorkspace(root: string, options: WorkspaceOptions = {}): Workspace {
  if (!isAbsolute(root))
    throw new NoEffectError(
      `workspace root must be an absolute path; received ${JSON.stringify(root)}`,
      "invalid_path",
    );
  let real: string;
  try {
    real = realpathSync(root);
  } catch (err) {
    const code = errno(err);
    throw new NoEffectError(
      `workspace root ${JSON.stringify(root)} ${code === "ENOENT" ? "does not exist" : `cannot be opened (${code ?? (err as Error).message})`}; create the folder first (mkdir -p) or pass an existing one`,
      "invalid_path",
    );
  }
  if (!statSync(real).isDirectory())
    throw new NoEffectError(
      `workspace root ${JSON.stringify(root)} is not a folder; pass the folder the tools work in`,
      "invalid_path",
    );
  const hiddenList = hiddenPlaces(real, options.hiddenPaths ?? HIDDEN_DEFAULT);
  const readOnlyList = readOnlyPlaces(real, options.protectedPaths ?? PROTECTED_DEFAULT);
  // Held for the life of the process: every walk starts here, not at the root's path.
  const rootFd = openSync(real, O_PATH | constants.O_DIRECTORY | constants.O_NOFOLLOW);
  const hidden = new Guards(hiddenList);
  const readOnly = new Guards(readOnlyList);
  hidden.lookFirst();
  readOnly.lookFirst();

  const open = async (path: string, purpose: "read" | "write", field = "path"): Promise<Opened> => {
    if (typeof path !== "string" || !isAbsolute(path)) {
      throw new NoEffectError(
        `${field} must be an absolute path inside the workspace ${real}; received ${JSON.stringify(path)}; example ${JSON.stringify(real + "/README.md")}`,
        "invalid_path",
      );
    }
    // The refusals below name the path as given and the walked paths; the gateway's renderer shows
    // their control, bidi and invisible characters escaped (observation/escape.ts).
    const outside = (resolved: string) =>
      new NoEffectError(
        `${field} ${JSON.stringify(path)} resolves to ${resolved}, which is outside the workspace ${real}; use a path under ${real}/`,
        "outside_workspace",
      );
    let lexical = resolveLexically(path);
    if (!within(lexical, real)) {
      // Not under the root as written (`..`, or a name outside that links in): where the host
      // resolves it decides; only a place inside the root is walked, from the root again.
      const resolved = await realLocation(lexical);
      if (!within(resolved, real)) throw outside(resolved);
      lexical = resolved;
    }
    hidden.look();
    if (purpose === "write") readOnly.look();
    const guardOf = (st: { dev: number; ino: number }) =>
      hidden.placeOf(st) ?? (purpose === "write" ? readOnly.placeOf(st) : undefined);
    let w;
    try {
      w = await walk({ fd: rootFd, path: real, guardOf }, relative(real, lexical).split("/"));
    } catch (err) {
      // The walk only opened and read names: whatever failed, nothing changed.
      const code = errno(err);
      const why =
        code === "EACCES"
          ? "a folder on the way is closed to toolgate's user (permission denied)"
          : code === "ENAMETOOLONG"
            ? "a name in it is too long (ENAMETOOLONG)"
            : (code ?? (err as Error).message);
      throw new NoEffectError(
        `${field} ${JSON.stringify(path)} cannot be opened: ${why}; use another path in ${real}/`,
        code === "EACCES" ? "permission_denied" : "invalid_path",
      );
    }
    switch (w.kind) {
      case "outside":
        throw outside(await realLocation(w.to));
      case "loop":
        throw new NoEffectError(
          `${lexical} cannot be resolved: a symlink in it loops (ELOOP); use a path without the looping link`,
          "invalid_path",
        );
      case "changed":
        throw new NoEffectError(
          `${field} ${JSON.stringify(path)} kept changing while it was opened (a symlink on it was replaced again and again); nothing was read or changed; retry when the tree is still`,
          "path_changed",
        );
      case "guarded":
        // Reached by its own name, it is refused by path below; by another, the message says so.
        if (!within(w.path, w.guard))
          throw guardedError(field, path, w.path, w.guard, hidden.places.includes(w.guard), real);
    }
    const hit = hidden.containing(w.path) ?? (purpose === "write" ? readOnly.containing(w.path) : undefined);
    if (hit !== undefined) {
      if (w.kind === "reached") void w.close();
      throw hidden.places.includes(hit)
        ? hiddenError(field, path, w.path, hit, real)
        : readOnlyError(field, path, w.path, hit);
    }
    if (purpose === "write" && w.kind !== "guarded") {
      // Named by git's config now: compared by where each resolves (a hooks folder may be a symlink).
      const named = await gitNamed().catch(async (err: unknown) => {
        if (w.kind === "reached") await w.close();
        throw err;
      });
      const places = named.map(realPlace);
      const place = places.find((p) => w.path === p || w.path.startsWith(p + "/"));
      if (place !== undefined) {
        if (w.kind === "reached") void w.close();
        throw readOnlyError(
          field,
          path,
          w.path,
          place,
          undefined,
          "the repository's git config names it for git to run or read on the host (core.hooksPath, include.path or a command)",
        );
      }
    }
    if (w.kind === "guarded") throw new Error(`unreachable: a guarded walk at ${w.path} passed the path check`);
    return w.kind === "reached" ? w : { ...w, close: async () => undefined };
  };

  const gitIO: GitNamedIO = {
    async read(path, limit) {
      let opened: Opened;
      try {
        opened = await open(path, "read", "git config");
      } catch (err) {
        if (err instanceof NoEffectError) return { kind: "none" }; // outside, hidden, looping: nothing git there can use from the workspace
        throw err;
      }
      try {
        if (opened.kind !== "reached" || !(opened.stat.isFile() || opened.stat.isDirectory())) return { kind: "none" };
        if (opened.stat.isDirectory()) return { kind: "dir" };
        const r = await readHeld(opened.fd, opened.stat, limit, opened.path).catch((err: unknown) => {
          if (err instanceof NoEffectError) return null; // not readable by toolgate's user: nor writable by the sandbox's
          throw err;
        });
        if (r === null) return { kind: "none" };
        return "tooLarge" in r
          ? { kind: "tooLarge", bytes: r.tooLarge }
          : { kind: "file", text: r.bytes.toString("utf8") };
      } finally {
        await opened.close();
      }
    },
    exists: (p) => lstatSync(p, { throwIfNoEntry: false }) !== undefined,
  };
  const guardsGit = readOnlyList.some((p) => p === `${real}/.git` || p === `${real}/.git/config`);
  const named = cachedNamedByGit(real, gitIO);
  const gitNamed = async (): Promise<string[]> =>
    guardsGit ? (await named()).filter((p) => readOnly.containing(p) === undefined) : [];

  const resolve = async (path: string, field = "path"): Promise<string> => {
    const opened = await open(path, "read", field);
    await opened.close();
    return opened.path;
  };

  const asIssues = async (path: string, field: string, purpose: "read" | "write"): Promise<CheckIssue[]> => {
    const expected = `an absolute path under ${real}/`;
    // The renderer adds "; received …; example …" from the issue's fields: the message must not say them again.
    if (typeof path !== "string" || !isAbsolute(path)) {
      return [
        {
          path: `/${field}`,
          code: "invalid_path",
          message: `${field} must be an absolute path inside the workspace ${real}`,
          expected,
          received: path,
          example: `${real}/README.md`,
        },
      ];
    }
    try {
      await (await open(path, purpose, field)).close();
      return [];
    } catch (err) {
      if (!(err instanceof NoEffectError)) throw err;
      // These messages name the path as given and where it resolves: no separate `received`.
      return [{ path: `/${field}`, code: err.code, message: err.message, expected }];
    }
  };

  return {
    root: real,
    hidden: hiddenList,
    readOnly: readOnlyList,
    resolve,
    open,
    gitNamed,
    check: (path, field = "path") => asIssues(path, field, "read"),
    checkWrite: (path, field = "path") => asIssues(path, field, "write"),
    async target(path) {
      try {
        return `path:${await resolve(path)}`;
      } catch {
        return `path:${path}`;
      }
    },
  };
}

function hiddenError(field: string, path: string, resolved: string, place: string, root: string): NoEffectError {
  const what =
    resolved === place
      ? "which toolgate keeps for itself (its state or keys)"
      : `inside ${place}, which holds toolgate's own state`;
  return new NoEffectError(
    `${field} ${JSON.stringify(path)} resolves to ${resolved}, ${what} and is closed to tools; use another path in ${root}/`,
    "protected_path",
  );
}

function guardedError(
  field: string,
  path: string,
  walked: string,
  guard: string,
  isHidden: boolean,
  root: string,
): NoEffectError {
  const reached = `${field} ${JSON.stringify(path)} leads to ${walked}, which is ${guard} under another name (a folder on the way was moved or swapped with it)`;
  return isHidden
    ? new NoEffectError(
        `${reached}; it holds toolgate's own state and is closed to tools; use another path in ${root}/`,
        "protected_path",
      )
    : readOnlyError(field, path, walked, guard, reached);
}

function readOnlyError(
  field: string,
  path: string,
  resolved: string,
  place: string,
  lead?: string,
  namedBy?: string,
): NoEffectError {
  const where =
    lead ?? `${field} ${JSON.stringify(path)} resolves to ${resolved}${resolved === place ? "" : `, under ${place}`}`;
  const list = namedBy
    ? `; ${namedBy}, so it stays read-only while the config names it`
    : `; the operator sets the list with the catalog's protectedPaths option${basename(place) === ".git" ? " (toolgate serve --git-writable takes the repository's .git out of it, its hooks and config staying read-only)" : ""}`;
  return new NoEffectError(
    `${where}, which is read-only for the agent: git, an editor or a shell runs what it holds on the host, outside the sandbox, the next time a person works in this repository. file_view may read it; file_edit does not change it. A person can edit it outside the agent${list}.`,
    "protected_path",
  );
}

/** Hidden places as absolute paths: a relative one is under the root; the last name is kept as is (a planted symlink
 * there is hidden itself, not its target). */
function hiddenPlaces(root: string, paths: readonly string[]): string[] {
  return list("hiddenPaths", paths).map((p) => {
    const abs = resolveLexically(root, p);
    try {
      return resolveLexically(realpathSync(dirname(abs)), basename(abs));
    } catch {
      return abs;
    }
  });
}

function readOnlyPlaces(root: string, paths: readonly string[]): string[] {
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
 * Where a path git's config names resolves on the host (realpath of it or of its deepest existing
 * ancestor, the rest appended), for comparing with a walked path: synchronous, since it runs at
 * every file_edit for a few paths and takes microseconds.
 */
function realPlace(p: string): string {
  const tail: string[] = [];
  for (let current = p; ; current = dirname(current)) {
    try {
      return resolveLexically(realpathSync(current), ...tail.reverse());
    } catch {
      if (dirname(current) === current) return p;
      tail.push(basename(current));
    }
  }
}

/**
 * realpath of `p`, or of its deepest existing ancestor with the missing tail appended: where the
 * host resolves a path outside the root, for a refusal's message and for a path that only
 * enters the root through a link outside it. Never used to open anything inside the root.
 */
async function realLocation(p: string): Promise<string> {
  const tail: string[] = [];
  let current = p;
  for (;;) {
    try {
      const found = await realpath(current);
      return tail.length ? resolveLexically(found, ...tail.reverse()) : found;
    } catch (err) {
      const code = errno(err);
      if (code === "ELOOP")
        throw new NoEffectError(
          `${p} cannot be resolved: a symlink in it loops (ELOOP); use a path without the looping link`,
          "invalid_path",
        );
      // Not allowed to look (EACCES): the path as written is all a message can name.
      if (code !== "ENOENT" && code !== "ENOTDIR")
        return tail.length ? resolveLexically(current, ...tail.reverse()) : current;
      const parent = dirname(current);
      if (parent === current) return p;
      tail.push(basename(current));
      current = parent;
    }
  }
}
