/**
 * Atomic replacement of a file's content (file_edit): a temporary file in the same held
 * directory, written and flushed, given the original's mode less setuid/setgid (and owner, where allowed), then
 * renamed over the original — both names taken relative to the directory the walk holds
 * (fs/walk.ts), so neither lands anywhere else whatever happens to the path meanwhile. A reader
 * sees the old content or the new, never a mix.
 */
import { randomBytes } from "node:crypto";
import { constants, type Stats } from "node:fs";
import { lstat, open, rename, unlink } from "node:fs/promises";
import { NoEffectError } from "../core/errors.js";
import { at } from "./fs/sys.js";

/** The held directory and the name in it of the file to replace. */
export interface HeldName {
  fd: number;
  name: string;
}

/**
 * Any failure leaves the original untouched (the rename is the only step that changes it, and it
 * is atomic), so failures are thrown as `NoEffectError` code `write_failed`: the key is released.
 * `path` names the file in messages; `original` is the stat of the file that was read: if the
 * name no longer holds that file when the temporary file is ready, nothing is replaced.
 */
export async function writeAtomically(target: HeldName, path: string, content: Buffer, original: Stats): Promise<void> {
  // The original's name cut short, so a long one cannot push the temporary name past NAME_MAX.
  const temp = `.${target.name.slice(0, 100)}.toolgate-${randomBytes(6).toString("hex")}.tmp`;
  const flags = constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW;
  // The original's permissions without setuid and setgid: content the agent chose must never run
  // with its owner's privileges (the kernel drops these bits too when anyone but root writes a file).
  const mode = original.mode & 0o1777;
  // O_EXCL | O_NOFOLLOW: never reuse or follow an existing entry at the temporary name.
  const handle = await open(at(target.fd, temp), flags, mode).catch((err: Error) => {
    throw new NoEffectError(`could not write ${path}: ${err.message}; the file is unchanged`, "write_failed");
  });
  try {
    try {
      await handle.writeFile(content);
      await handle.chmod(mode); // the umask may have narrowed the mode at open
      await handle.chown(original.uid, original.gid).catch(() => undefined); // only root may give files away
      await handle.sync();
    } finally {
      await handle.close();
    }
    const now = await lstat(at(target.fd, target.name)).catch(() => null);
    if (now === null || now.dev !== original.dev || now.ino !== original.ino) {
      throw new NoEffectError(
        `${path} was replaced or removed while file_edit worked on it; the file is unchanged: view it again and retry`,
        "version_mismatch",
      );
    }
    await rename(at(target.fd, temp), at(target.fd, target.name));
  } catch (err) {
    await unlink(at(target.fd, temp)).catch(() => undefined);
    if (err instanceof NoEffectError) throw err;
    throw new NoEffectError(
      `could not write ${path}: ${(err as Error).message}; the file is unchanged`,
      "write_failed",
    );
  }
}
