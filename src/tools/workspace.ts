/**
 * Workspace confinement for the coding catalog (seed 000, "A reference catalog for coding
 * agents": a general catalog is safe only inside an envelope sized for the broadest thing its
 * tools can do). Every path a tool touches is absolute and, after resolving symlinks, lies
 * inside the workspace root; tools then operate on the resolved path, never on the one given.
 */
import { realpathSync, statSync } from "node:fs";
import { realpath } from "node:fs/promises";
import { basename, dirname, isAbsolute, resolve as resolveLexically } from "node:path";
import { NoEffectError } from "../schema/errors.js";
import type { CheckIssue } from "../schema/types.js";

/** A confined workspace: its real root and a resolver that refuses anything outside it. */
export interface Workspace {
  /** The workspace root with every symlink resolved. */
  readonly root: string;
  /** Absolute folders inside the root that tools may not touch (hidden from bash_execute too). */
  readonly protected: readonly string[];
  /**
   * Resolves `path` (absolute; `..` allowed) to its real location: the realpath of the path
   * when it exists, else the realpath of its deepest existing ancestor joined with the rest
   * (a new file). Throws `NoEffectError` (code `outside_workspace` or `invalid_path`) with the
   * resolved path and the root when the result is not inside the root.
   */
  resolve(path: string, field?: string): Promise<string>;
  /** Like `resolve`, but returns the refusal as a check issue instead of throwing. */
  check(path: string, field?: string): Promise<CheckIssue[]>;
  /** `path:<resolved>` when inside, else `path:<as given>` (the check has refused it already). */
  target(path: string): Promise<string>;
}

/**
 * Folders inside the workspace that no tool may touch: toolgate's own state (`.toolgate/`:
 * idempotency records, approvals, the audit trail). A tool that could rewrite them could
 * approve its own calls or erase its trail.
 */
export const PROTECTED_DEFAULT = [".toolgate"];

/** Opens a workspace at `root` (which must exist; symlinks in it are resolved once, now). */
export function openWorkspace(root: string, protectedPaths: string[] = PROTECTED_DEFAULT): Workspace {
  if (!isAbsolute(root)) throw new NoEffectError(`workspace root must be an absolute path; received ${JSON.stringify(root)}`, "invalid_path");
  let real: string;
  try {
    real = realpathSync(root);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    throw new NoEffectError(`workspace root ${JSON.stringify(root)} ${code === "ENOENT" ? "does not exist" : `cannot be opened (${code ?? (err as Error).message})`}; create the folder first (mkdir -p) or pass an existing one`, "invalid_path");
  }
  if (!statSync(real).isDirectory()) throw new NoEffectError(`workspace root ${JSON.stringify(root)} is not a folder; pass the folder the tools work in`, "invalid_path");
  const within = (p: string, dir: string) => dir === "/" || p === dir || p.startsWith(dir + "/");
  const inside = (p: string) => within(p, real);
  const guarded = protectedPaths.map((p) => resolveLexically(real, p));

  const resolve = async (path: string, field = "path"): Promise<string> => {
    if (typeof path !== "string" || !isAbsolute(path)) {
      throw new NoEffectError(
        `${field} must be an absolute path inside the workspace ${real}; received ${JSON.stringify(path)}; example ${JSON.stringify(real + "/README.md")}`,
        "invalid_path",
      );
    }
    const resolved = await realLocation(resolveLexically(path));
    if (!inside(resolved)) {
      throw new NoEffectError(
        `${field} ${JSON.stringify(path)} resolves to ${resolved}, which is outside the workspace ${real}; use a path under ${real}/`,
        "outside_workspace",
      );
    }
    const hit = guarded.find((g) => within(resolved, g));
    if (hit !== undefined) {
      throw new NoEffectError(`${field} ${JSON.stringify(path)} resolves to ${resolved}, inside ${hit}, which holds toolgate's own state and is closed to tools; use another path in ${real}/`, "protected_path");
    }
    return resolved;
  };

  return {
    root: real,
    protected: guarded,
    resolve,
    async check(path, field = "path") {
      const expected = `an absolute path under ${real}/`;
      // The renderer adds "; received …; example …" from the issue's fields: the message must not say them again.
      if (typeof path !== "string" || !isAbsolute(path)) {
        return [{ path: `/${field}`, code: "invalid_path", message: `${field} must be an absolute path inside the workspace ${real}`, expected, received: path, example: `${real}/README.md` }];
      }
      try {
        await resolve(path, field);
        return [];
      } catch (err) {
        if (!(err instanceof NoEffectError)) throw err;
        // These messages name the path as given and where it resolves: no separate `received`.
        return [{ path: `/${field}`, code: err.code, message: err.message, expected }];
      }
    },
    async target(path) {
      try {
        return `path:${await resolve(path)}`;
      } catch {
        return `path:${path}`;
      }
    },
  };
}

/**
 * realpath of `p`, or of its deepest existing ancestor with the missing tail appended. The
 * tail holds no `..` (the path was normalised first) and no existing entry, so no symlink
 * in it can lead elsewhere at the time of the check.
 */
async function realLocation(p: string): Promise<string> {
  const tail: string[] = [];
  let current = p;
  for (;;) {
    try {
      const real = await realpath(current);
      return tail.length ? resolveLexically(real, ...tail.reverse()) : real;
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code === "ELOOP") throw new NoEffectError(`${p} cannot be resolved: a symlink in it loops (ELOOP); use a path without the looping link`, "invalid_path");
      // ENOTDIR: an ancestor is a file; the tool's own open reports that precisely.
      if (code !== "ENOENT" && code !== "ENOTDIR") throw err;
      const parent = dirname(current);
      if (parent === current) return p;
      tail.push(basename(current));
      current = parent;
    }
  }
}
