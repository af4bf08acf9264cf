/**
 * Puts back protected paths a run created or replaced (protect.ts watches them): one that did not
 * exist is removed, a symlink is made again with its old target. The removal runs inside the
 * envelope too (`runCleanup`: the same user, mounts of the workspace only), never on the host:
 * the tree being removed is the command's work, and a symlink it planted in it can only lead
 * where the sandbox reaches anyway.
 */
import { changedPaths, type Watched } from "./protect.js";

/** Removes (with write permission restored first, so a chmod 000 folder cannot resist) and relinks, in order. */
export const RESTORE_SCRIPT = [
  "while [ $# -ge 3 ]; do kind=$1; p=$2; t=$3; shift 3",
  'if [ -e "$p" ] || [ -L "$p" ]; then [ -L "$p" ] || chmod -R u+rwx -- "$p" 2>/dev/null; rm -rf -- "$p" || continue; fi',
  'if [ "$kind" = link ]; then ln -s -- "$t" "$p"; fi',
  "done",
].join("\n");

export interface Restored {
  changed: string[];
  unrestored: string[];
}

/**
 * Restores `changed` (shallowest first; a path under one already put back needs nothing more)
 * with `runCleanup(args)` running RESTORE_SCRIPT with those arguments, then checks again.
 */
export async function restoreProtected(
  changed: readonly Watched[],
  runCleanup: (args: string[]) => Promise<void>,
): Promise<Restored> {
  const ordered = [...changed].sort((a, b) => a.path.split("/").length - b.path.split("/").length);
  const chosen: Watched[] = [];
  for (const w of ordered) if (!chosen.some((c) => w.path.startsWith(c.path + "/"))) chosen.push(w);
  const args: string[] = [];
  const unrestored: string[] = [];
  for (const w of chosen) {
    if (w.before.kind === "absent") args.push("remove", w.path, "");
    else if (w.before.kind === "symlink") args.push("link", w.path, w.before.target);
    // A pinned entry cannot change; if it did, there is nothing here to put it back from.
    else unrestored.push(`${w.path} (was pinned, and changed anyway)`);
  }
  if (args.length > 0) {
    try {
      await runCleanup(args);
    } catch (err) {
      unrestored.push(`cleanup failed: ${(err as Error).message}`);
    }
  }
  for (const still of changedPaths(changed))
    if (!unrestored.some((u) => u.startsWith(still.path + " ")))
      unrestored.push(`${still.path} (still changed after the cleanup)`);
  return { changed: ordered.map((w) => w.path), unrestored };
}
