/**
 * Atomic replacement of a file's content (issue 6, file_edit): a temporary file in the same
 * directory, written and flushed, given the original's mode (and owner, where allowed), then
 * renamed over the original. A reader sees the old content or the new, never a mix.
 */
import { randomBytes } from "node:crypto";
import { open, rename, unlink } from "node:fs/promises";
import { basename, dirname, join } from "node:path";
import type { Stats } from "node:fs";
import { NoEffectError } from "../schema/errors.js";

/**
 * Any failure leaves the original untouched (the rename is the only step that changes it, and it
 * is atomic), so failures are thrown as `NoEffectError` code `write_failed`: the key is released.
 */
export async function writeAtomically(path: string, content: Buffer, original: Stats): Promise<void> {
  const temp = join(dirname(path), `.${basename(path)}.toolgate-${randomBytes(6).toString("hex")}.tmp`);
  // "wx": never reuse or follow an existing entry at the temporary name.
  const handle = await open(temp, "wx", original.mode & 0o7777).catch((err: Error) => {
    throw new NoEffectError(`could not write ${path}: ${err.message}; the file is unchanged`, "write_failed");
  });
  try {
    try {
      await handle.writeFile(content);
      await handle.chmod(original.mode & 0o7777); // the umask may have narrowed the mode at open
      await handle.chown(original.uid, original.gid).catch(() => undefined); // only root may give files away
      await handle.sync();
    } finally {
      await handle.close();
    }
    await rename(temp, path);
  } catch (err) {
    await unlink(temp).catch(() => undefined);
    throw new NoEffectError(`could not write ${path}: ${(err as Error).message}; the file is unchanged`, "write_failed");
  }
}
