/**
 * Where a path resolves on the host, for the workspace's comparisons and messages (workspace.ts).
 */
import { realpathSync } from "node:fs";
import { realpath } from "node:fs/promises";
import { basename, dirname, resolve as resolveLexically } from "node:path";
import { NoEffectError } from "../core/errors.js";
import { errno } from "./fs/sys.js";

/**
 * Where a path git's config names resolves on the host (realpath of it or of its deepest existing
 * ancestor, the rest appended), for comparing with a walked path: synchronous, since it runs at
 * every file_edit for a few paths and takes microseconds.
 */
export function realPlace(p: string): string {
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
export async function realLocation(p: string): Promise<string> {
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
