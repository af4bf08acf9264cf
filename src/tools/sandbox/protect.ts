/**
 * How the envelope protects paths inside the workspace (bubblewrap.ts uses it for every run):
 * - a hidden path (toolgate's state, key files) is covered by an empty read-only tmpfs (a file by
 *   an unreadable device node), so the command can neither read nor change it;
 * - a read-only path (repository control files run on the host: .git/hooks, .git/config, editor
 *   and shell configuration) is bound read-only onto itself;
 * - each ancestor of either inside the workspace is bound onto itself, which makes it a mount
 *   point: renaming or removing it fails (EBUSY), so `mv .git x; mkdir .git` cannot swap a fresh,
 *   writable tree in under the protected path.
 * Every bind's source is a file descriptor toolgate opened itself (O_PATH, O_NOFOLLOW) and
 * checked to lie inside the workspace, not a path bwrap resolves later: a concurrent command
 * that swaps a directory for a symlink cannot make a bind expose a folder outside.
 *
 * A protected path cannot be pinned when it does not exist yet (toolgate does not litter the
 * workspace with placeholders), nor when it is a symlink (a mount follows it). Those (and symlinks
 * among the ancestors) are watched instead: their identity (absent, or device, inode and target) is taken before the
 * run and
 * compared while it runs and after; a change is undone by the launcher and reported as the
 * `protected_path` denial.
 */
import { closeSync, constants, fstatSync, lstatSync, openSync, readlinkSync, realpathSync } from "node:fs";
import { dirname } from "node:path";
import { NoEffectError } from "../../core/errors.js";

/** O_PATH (Linux): a descriptor naming a file without opening it for I/O (no FIFO blocks, no device opens). */
export const O_PATH = 0o10000000;

export type Identity =
  { kind: "absent" } | { kind: "symlink"; target: string } | { kind: "entry"; dev: number; ino: number };

/** A path whose identity must not change during a run. */
export interface Watched {
  path: string;
  before: Identity;
}

export interface Protection {
  /** bwrap arguments to place after the workspace bind. */
  args: string[];
  /** Descriptors the arguments name (`--bind-fd N`): the child's fd `firstFd + i` is `fds[i]`. */
  fds: number[];
  watched: Watched[];
  /** Closes toolgate's copies of the descriptors (after the spawn). */
  release(): void;
}

type Op = "pin" | "ro" | "hide";
const RANK: Record<Op, number> = { pin: 1, ro: 2, hide: 3 };

const within = (p: string, dir: string) => p === dir || p.startsWith(dir + "/");
const strictlyInside = (p: string, dir: string) => p !== dir && within(p, dir);

/** The identity of `path` as a host program would find it (intermediate symlinks followed, the last not). */
export function identity(path: string): Identity {
  try {
    const st = lstatSync(path);
    if (st.isSymbolicLink()) return { kind: "symlink", target: readlinkSync(path) };
    return { kind: "entry", dev: st.dev, ino: st.ino };
  } catch {
    return { kind: "absent" };
  }
}

export function sameIdentity(a: Identity, b: Identity): boolean {
  if (a.kind !== b.kind) return false;
  if (a.kind === "absent" || b.kind === "absent") return true;
  // A symlink is what it points to (made again with the same target, it is the same link to a host program).
  if (a.kind === "symlink" || b.kind === "symlink")
    return a.kind === "symlink" && b.kind === "symlink" && a.target === b.target;
  return a.dev === b.dev && a.ino === b.ino;
}

/** The watched paths whose identity differs now. */
export function changedPaths(watched: readonly Watched[]): Watched[] {
  return watched.filter((w) => !sameIdentity(w.before, identity(w.path)));
}

/**
 * The mounts and watches for one run. With `writable` false (a read-only workspace, as for
 * grep_search) only the hidden paths need mounts and nothing needs watching.
 */
export function protect(
  workspace: string,
  hidden: readonly string[],
  readOnly: readonly string[],
  writable: boolean,
  firstFd: number,
): Protection {
  const ops = new Map<string, Op>();
  const add = (path: string, op: Op) => {
    const had = ops.get(path);
    if (had === undefined || RANK[op] > RANK[had]) ops.set(path, op);
  };
  const watched: Watched[] = [];
  const seen = new Set<string>();
  const watch = (path: string, id: Identity) => {
    if (!seen.has(path)) watched.push({ path, before: id });
    seen.add(path);
  };

  const cover = (path: string, op: "ro" | "hide") => {
    if (!strictlyInside(path, workspace)) return;
    const id = identity(path);
    if (writable) {
      // A file or folder that exists is pinned below and cannot change from inside; watching it
      // would only report what programs on the host do meanwhile (git rewriting its config).
      if (id.kind !== "entry") watch(path, id);
      // A symlink among the ancestors can be replaced (it is not a mount point): watch it too.
      for (let a = dirname(path); strictlyInside(a, workspace); a = dirname(a)) {
        const aid = identity(a);
        if (aid.kind === "symlink") watch(a, aid);
        if (aid.kind === "absent") break;
      }
    }
    if (id.kind === "absent") return;
    let real: string;
    try {
      real = realpathSync(path);
    } catch {
      return; // a dangling symlink: nothing to mount, the watch covers it
    }
    // A target outside the workspace is not in the sandbox at all: nothing to protect there.
    if (!strictlyInside(real, workspace)) return;
    if (op === "ro" && !writable) return;
    add(real, op);
    if (writable) for (let a = dirname(real); strictlyInside(a, workspace); a = dirname(a)) add(a, "pin");
  };
  for (const h of hidden) cover(h, "hide");
  for (const r of readOnly) cover(r, "ro");

  // Nothing under a hidden path needs a mount; under a read-only one, a pin would make it writable.
  const covering = [...ops].filter(([, op]) => op !== "pin");
  const kept = [...ops].filter(
    ([p, op]) => !covering.some(([c, cop]) => strictlyInside(p, c) && (cop === "hide" || op !== "hide")),
  );
  kept.sort(([a], [b]) => a.split("/").length - b.split("/").length || (a < b ? -1 : 1));

  const args: string[] = [];
  const fds: number[] = [];
  const release = () => {
    for (const fd of fds.splice(0)) closeSync(fd);
  };
  try {
    for (const [path, op] of kept) {
      const fd = openVerified(path);
      if (fd === null) {
        throw new NoEffectError(
          `${path}, which the sandbox protects, changed while the sandbox was being set up (it is gone, or a symlink now); nothing was run. Call again`,
          "sandbox_unavailable",
        );
      }
      if (op === "hide") {
        // tmpfs takes a path, not a descriptor: the check above made sure it is still this one.
        const isDir = fstatSync(fd).isDirectory();
        closeSync(fd);
        args.push(...(isDir ? ["--tmpfs", path, "--remount-ro", path] : ["--ro-bind", "/dev/null", path]));
        continue;
      }
      fds.push(fd);
      args.push(op === "ro" ? "--ro-bind-fd" : "--bind-fd", String(firstFd + fds.length - 1), path);
    }
  } catch (err) {
    release();
    throw err;
  }
  return { args, fds, watched, release };
}

/**
 * An O_PATH descriptor of the workspace root, for `--bind-fd`: bwrap, already the sandbox user,
 * could not resolve the path itself where an ancestor is closed to that user (a 0700 temp folder,
 * /root). Throws NoEffectError when the root is gone or replaced.
 */
export function openWorkspaceRoot(root: string): number {
  const fd = openVerified(root);
  if (fd === null)
    throw new NoEffectError(
      `the workspace ${root} is gone or was replaced by a symlink; nothing was run. Recreate it, or restart toolgate on the folder it should use`,
      "sandbox_unavailable",
    );
  return fd;
}

/** An O_PATH descriptor of `path` when it still is that path (no symlink on the way), else null. */
export function openVerified(path: string): number | null {
  let fd: number;
  try {
    fd = openSync(path, O_PATH | constants.O_NOFOLLOW);
  } catch {
    return null;
  }
  try {
    if (readlinkSync(`/proc/self/fd/${fd}`) === path) return fd;
  } catch {
    // fall through
  }
  closeSync(fd);
  return null;
}
