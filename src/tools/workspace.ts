/**
 * Workspace confinement for the coding catalog (docs/envelope.md: a general catalog
 * is safe only inside an envelope sized for the broadest thing its
 * tools can do). Every path a tool touches is absolute and lies inside the workspace root; the
 * tools open it with `open()`, a walk from a held root descriptor that resolves symlinks itself
 * (fs/walk.ts), and then work on the descriptors it holds, never on a path string again: a
 * concurrent change of the tree cannot lead them out of the workspace or into its hidden places.
 */
import { constants, lstatSync, openSync, realpathSync, statSync } from "node:fs";
import { isAbsolute, relative, resolve as resolveLexically } from "node:path";
import { NoEffectError } from "../core/errors.js";
import type { CheckIssue } from "../core/tool.js";
import { Guards } from "./fs/guards.js";
import { readHeld } from "./fs/read.js";
import { O_PATH, errno } from "./fs/sys.js";
import { walk, type Reached } from "./fs/walk.js";
import { cachedNamedByGit, type GitNamedIO } from "./git-named.js";
import {
  HIDDEN_DEFAULT,
  hiddenPlaces,
  PROTECTED_DEFAULT,
  readOnlyPlaces,
  SYSTEM_WORKSPACE_FIX,
  systemWorkspace,
  within,
} from "./workspace-places.js";
import { realLocation, realPlace } from "./workspace-realpath.js";
import { guardedError, hiddenError, readOnlyError } from "./workspace-refusals.js";

export { HIDDEN_DEFAULT, PROTECTED_DEFAULT } from "./workspace-places.js";

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
  const system = systemWorkspace(real);
  if (system !== undefined)
    throw new NoEffectError(
      `workspace root ${JSON.stringify(root)}${real !== root ? ` (${real})` : ""} ${system}: ${SYSTEM_WORKSPACE_FIX}`,
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
