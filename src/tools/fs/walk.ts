/**
 * The walk every file tool opens a path with: component by component from a held root
 * descriptor, each name opened relative to the directory held before it and never followed.
 * Symlinks are read and resolved here, by the same rules (bounded hops, never above the root),
 * so a concurrent rename, exchange or symlink swap anywhere in the tree can change what the walk
 * finds but never lead it out of the root: every directory it stands in was opened from the one
 * before. The path it returns is the one the walk itself built.
 */
import { join, relative, resolve as resolveLexically } from "node:path";
import type { Stats } from "node:fs";
import { closeFd, errno, openDirectoryEntry, openEntry, readlinkIn, statFd } from "./sys.js";

/** Symlinks followed in one walk before it is called a loop (Linux's own bound is 40). */
export const MAX_HOPS = 40;
/** Times one name may change kind under the walk (a symlink gone by the time it is read) before the walk gives up. */
const MAX_RETRIES = 16;

export interface WalkRoot {
  /** Held descriptor of the root directory (never closed by the walk). */
  readonly fd: number;
  /** Real path of the root: no symlinks, no trailing slash. */
  readonly path: string;
  /** The guarded place (hidden, or read-only for a write) that a file or directory is, by identity; else undefined. */
  guardOf(st: Stats): string | undefined;
}

/** An entry the walk reached: held descriptors the caller releases with `close()`. */
export interface Reached {
  kind: "reached";
  /** Real path the walk built. */
  path: string;
  /** O_PATH descriptor of the entry itself (a directory, file, FIFO, …; never a symlink). */
  fd: number;
  stat: Stats;
  /** Held directory the entry is in and its name there; null for the root itself. */
  parent: { fd: number; name: string } | null;
  close(): Promise<void>;
}

export type Walk =
  | Reached
  /** Nothing at `path`; `notDir` when a component before the end is a file. */
  | { kind: "missing"; path: string; notDir: boolean }
  /** A `..` or a symlink led out of the root; `to` is where, lexically (the rest of the path appended). */
  | { kind: "outside"; to: string }
  /** An entry on the way is a guarded place by identity, reached under another name. */
  | { kind: "guarded"; path: string; guard: string }
  | { kind: "loop" }
  /** The tree kept changing under the walk. */
  | { kind: "changed" };

const within = (p: string, dir: string) => dir === "/" || p === dir || p.startsWith(dir + "/");

/** Walks `parts` (names below the root; `.`, `..` and empty names allowed) from `root`. */
export async function walk(root: WalkRoot, parts: readonly string[]): Promise<Walk> {
  const held: number[] = []; // directories below the root, in order
  const names: string[] = [];
  const queue = [...parts];
  const dir = () => held.at(-1) ?? root.fd;
  const here = (...more: string[]) => join(root.path, ...names, ...more);
  const rest = () => queue.some((q) => q !== "" && q !== ".");
  // Directories on the way are checked against the guards while the walk goes on (their stat
  // runs beside the next open); a descriptor left behind is closed only once its check is done.
  const checks: Promise<void>[] = [];
  const retired: number[] = [];
  let hit: { path: string; guard: string } | undefined;
  const check = (fd: number, path: string) =>
    checks.push(
      statFd(fd).then((st) => {
        const guard = root.guardOf(st);
        if (guard !== undefined && hit === undefined) hit = { path, guard };
      }),
    );
  /** The answer once every check is in: a guarded directory on the way overrides it. */
  const settle = async (w: Walk): Promise<Walk> => {
    await Promise.all(checks);
    if (hit === undefined) return w;
    if (w.kind === "reached") await w.close();
    return { kind: "guarded", ...hit };
  };
  let hops = 0;
  let retries = 0;
  let kept = false;
  try {
    while (queue.length > 0) {
      const name = queue.shift()!;
      if (name === "" || name === ".") continue;
      if (name === "..") {
        if (names.length === 0) return { kind: "outside", to: resolveLexically(root.path, "..", ...queue) };
        names.pop();
        retired.push(held.pop()!);
        continue;
      }
      if (rest()) {
        // On the way: a real directory opens in one call (O_DIRECTORY | O_NOFOLLOW fails on a symlink or a file).
        const fd = await openDirectoryEntry(dir(), name).catch((err: unknown) => err);
        if (typeof fd === "number") {
          check(fd, here(name, ...queue));
          held.push(fd);
          names.push(name);
          continue;
        }
        if (errno(fd) === "ENOENT") return await settle(missing(root, here(name, ...queue), false));
        if (errno(fd) !== "ENOTDIR") throw fd;
      }
      let fd: number;
      try {
        fd = await openEntry(dir(), name);
      } catch (err) {
        if (errno(err) !== "ENOENT") throw err;
        return await settle(missing(root, here(name, ...queue), false));
      }
      let stat: Stats;
      try {
        stat = await statFd(fd);
      } catch (err) {
        closeFd(fd);
        throw err;
      }
      if (stat.isSymbolicLink()) {
        closeFd(fd);
        let target: string;
        try {
          target = await readlinkIn(dir(), name);
        } catch (err) {
          // Replaced by something else since it was opened: look at the name again.
          if ((errno(err) === "EINVAL" || errno(err) === "ENOENT") && ++retries <= MAX_RETRIES) {
            queue.unshift(name);
            continue;
          }
          if (errno(err) === "EINVAL" || errno(err) === "ENOENT") return { kind: "changed" };
          throw err;
        }
        if (++hops > MAX_HOPS) return { kind: "loop" };
        if (target.startsWith("/")) {
          const to = resolveLexically(target);
          if (!within(to, root.path)) return { kind: "outside", to: join(to, ...queue) };
          // An absolute link into the root: start again from the root descriptor, not from the link's path.
          retired.push(...held.splice(0));
          names.length = 0;
          queue.unshift(...relative(root.path, to).split("/"));
        } else {
          queue.unshift(...target.split("/"));
        }
        continue;
      }
      const guard = root.guardOf(stat);
      if (guard !== undefined) {
        closeFd(fd);
        return await settle({ kind: "guarded", path: here(name, ...queue), guard });
      }
      if (stat.isDirectory()) {
        held.push(fd);
        names.push(name);
        continue;
      }
      if (rest()) {
        closeFd(fd);
        return await settle(missing(root, here(name, ...queue), true));
      }
      kept = true;
      return await settle(reached(here(name), fd, stat, { fd: dir(), name }, held));
    }
    // The walk ends in a directory: the last one held, or the root.
    const last = held.at(-1);
    const stat = await statFd(last ?? root.fd);
    const guard = root.guardOf(stat);
    if (guard !== undefined) return await settle({ kind: "guarded", path: here(), guard });
    kept = true;
    if (last === undefined) return await settle(reached(root.path, root.fd, stat, null, held, false));
    held.pop();
    return await settle(reached(here(), last, stat, { fd: dir(), name: names.at(-1)! }, held));
  } finally {
    await Promise.allSettled(checks);
    for (const fd of retired) closeFd(fd);
    if (!kept) for (const fd of held) closeFd(fd);
  }
}

function reached(
  path: string,
  fd: number,
  stat: Stats,
  parent: Reached["parent"],
  held: number[],
  ownsFd = true,
): Reached {
  const release = [...held, ...(ownsFd ? [fd] : [])];
  let closed = false;
  return {
    kind: "reached",
    path,
    fd,
    stat,
    parent,
    async close() {
      if (closed) return;
      closed = true;
      for (const d of release) closeFd(d);
    },
  };
}

/** A missing tail may hold `..` from a symlink's target: resolved lexically, it must stay under the root. */
function missing(root: WalkRoot, path: string, notDir: boolean): Walk {
  return within(path, root.path) ? { kind: "missing", path, notDir } : { kind: "outside", to: path };
}
