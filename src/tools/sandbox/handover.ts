/**
 * Handing a root-owned workspace to the sandbox's user, once per workspace and launcher: a root
 * toolgate runs the sandbox unprivileged (user.ts), and that user must be able to write the tree
 * it works in. Every entry owned by root (uid 0) becomes the sandbox user's (uid and gid); entries
 * of other owners, hidden paths (toolgate's state, key files) and read-only protected paths keep
 * theirs, symlinks are never followed (nor chowned), a file with more than one hard link keeps
 * its owner (another of its names may be outside the workspace: /etc/shadow on the same file
 * system), and other file systems mounted inside the tree are not entered. Afterwards, on the host, those files belong
 * to the sandbox user, as does
 * everything the sandbox creates.
 *
 * Each entry is opened with O_PATH | O_NOFOLLOW (no I/O, so FIFOs and devices cannot block or
 * react) and checked, through /proc/self/fd, to be exactly the path expected before it is changed,
 * so a directory swapped for a symlink meanwhile is skipped instead of followed out of the tree.
 */
import { readdir, readlink, chown, open } from "node:fs/promises";
import { constants } from "node:fs";
import { join } from "node:path";
import { O_PATH } from "./protect.js";
import type { SandboxUser } from "./user.js";

export interface HandoverCount {
  /** Entries now owned by the sandbox user. */
  changed: number;
  /** Entries that could not be changed (removed meanwhile, or refused by the file system). */
  failed: number;
  /** Root's files left as they were because they have more than one hard link. */
  linked: number;
}

/** Entries in flight at once: enough to hide the thread pool's latency, few enough to leave it to others. */
const PARALLEL = 16;

export async function handOver(root: string, user: SandboxUser, keep: readonly string[]): Promise<HandoverCount> {
  const count: HandoverCount = { changed: 0, failed: 0, linked: 0 };
  const kept = (p: string) => keep.some((k) => p === k || p.startsWith(k + "/"));
  let rootDev: number | undefined;
  const pending: string[] = [root];

  // Returns the subdirectories to walk next.
  const visit = async (path: string): Promise<string[]> => {
    if (kept(path)) return [];
    let handle;
    try {
      handle = await open(path, O_PATH | constants.O_NOFOLLOW);
    } catch {
      count.failed++;
      return [];
    }
    try {
      const self = `/proc/self/fd/${handle.fd}`;
      if ((await readlink(self)) !== path) return [];
      const st = await handle.stat();
      if (st.isSymbolicLink()) return [];
      rootDev ??= st.dev;
      if (st.dev !== rootDev) return [];
      if (st.uid === 0 && !st.isDirectory() && st.nlink > 1) count.linked++;
      else if (st.uid === 0) {
        try {
          await chown(self, user.uid, user.gid);
          count.changed++;
        } catch {
          count.failed++;
        }
      }
      if (!st.isDirectory()) return [];
      return (await readdir(self)).map((name) => join(path, name));
    } catch {
      count.failed++;
      return [];
    } finally {
      await handle.close();
    }
  };

  while (pending.length > 0) {
    const batch = pending.splice(0, PARALLEL);
    for (const next of await Promise.all(batch.map(visit))) pending.push(...next);
  }
  return count;
}
