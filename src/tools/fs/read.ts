/**
 * Reading an entry a walk reached (fs/walk.ts): reopened through its own descriptor, so the bytes
 * come from the very file the walk checked, whatever its name points at by now, and read with a
 * bound, so a file that grows while it is read cannot make the read unbounded.
 */
import { constants, type Stats } from "node:fs";
import { open } from "node:fs/promises";
import { NoEffectError } from "../../core/errors.js";
import { at, errno } from "./sys.js";

/** What a non-regular entry is, for a refusal ("a FIFO (named pipe)"); undefined for a regular file or directory. */
export function specialKind(st: Stats): string | undefined {
  if (st.isFile() || st.isDirectory()) return undefined;
  if (st.isFIFO()) return "a FIFO (named pipe)";
  if (st.isSocket()) return "a socket";
  if (st.isCharacterDevice()) return "a character device";
  if (st.isBlockDevice()) return "a block device";
  return "not a regular file";
}

export type Read = { bytes: Buffer } | { tooLarge: number };

/**
 * Reads the regular file held by `fd` (an O_PATH descriptor; `stat` its fstat, which said "regular file"),
 * at most `limit` bytes: a larger one (by its size, or by what a read finds past the limit) is
 * `{ tooLarge: size }` and nothing more is read. A file that cannot be read is a `NoEffectError`
 * naming `path` (reading changes nothing).
 */
export async function readHeld(fd: number, stat: Stats, limit: number, path: string): Promise<Read> {
  if (stat.size > limit) return { tooLarge: stat.size };
  // The magic link reopens the same inode; O_NONBLOCK and O_NOCTTY guard the open even so.
  const handle = await open(at(fd), constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOCTTY).catch(
    (err: unknown) => {
      const code = errno(err);
      const why =
        code === "EACCES" || code === "EPERM"
          ? "toolgate's user may not read it (permission denied)"
          : (code ?? (err as Error).message);
      throw new NoEffectError(
        `${path} cannot be read: ${why}; nothing was changed`,
        code === "EACCES" || code === "EPERM" ? "permission_denied" : "read_failed",
      );
    },
  );
  try {
    // The size is the walk's stat of this inode; one byte more shows, on the first read, a file that grew since.
    let buffer = Buffer.allocUnsafe(stat.size + 1);
    let length = 0;
    for (;;) {
      if (length === buffer.length) {
        const grown = Buffer.allocUnsafe(Math.min(limit + 1, buffer.length * 2));
        buffer.copy(grown, 0, 0, length);
        buffer = grown;
      }
      const { bytesRead } = await handle.read(buffer, length, buffer.length - length, length);
      length += bytesRead;
      if (length > limit) return { tooLarge: length };
      // At the size the stat gave, or at the end: the bound is what matters, not a file still being written.
      if (bytesRead === 0 || length === stat.size) return { bytes: buffer.subarray(0, length) };
    }
  } finally {
    // Not waited for: nothing is read through it again.
    void handle.close().catch(() => undefined);
  }
}
