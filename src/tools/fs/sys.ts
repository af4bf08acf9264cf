/**
 * Descriptor-relative file system calls for the file tools. Node has no openat(2), so a name is
 * opened relative to a held directory through `/proc/self/fd/<dir>/<name>`: the kernel jumps to
 * the held directory itself, whatever its path is now, and resolves only `<name>` from there
 * (ARCHITECTURE.md, "tools/": why the file tools work this way). Linux only, like the sandbox.
 */
import { close, constants, fstatSync, openSync, readlinkSync, type Stats } from "node:fs";

/** open(2) flag for a descriptor that names a file without opening it (Linux's O_PATH). */
export const O_PATH = 0o10000000;

/** The path through which a held descriptor, or a name in a held directory, is reached. */
export function at(fd: number, name?: string): string {
  return name === undefined ? `/proc/self/fd/${fd}` : `/proc/self/fd/${fd}/${name}`;
}

// These calls are made synchronously, on purpose: an O_PATH open, an fstat of a held descriptor
// and a readlink never wait for a device, a FIFO's writer or file contents (O_PATH opens nothing
// for reading), so each returns in microseconds on a local file system, while the same call through
// libuv's thread pool costs a round trip of tens of microseconds and a walk makes several per path.
// They stay async functions so that a failure reaches the caller as a rejection, as before.
async function openRaw(path: string, flags: number): Promise<number> {
  return openSync(path, flags);
}
async function fstatRaw(fd: number): Promise<Stats> {
  return fstatSync(fd);
}
async function readlinkRaw(path: string): Promise<string> {
  return readlinkSync(path);
}

/** Opens `name` in the held directory `dir` without following it if it is a symlink (O_PATH: no read, no side effects).
 * */
export function openEntry(dir: number, name: string): Promise<number> {
  return openRaw(at(dir, name), O_PATH | constants.O_NOFOLLOW);
}

/** Opens `name` in `dir` only if it is a directory itself (ENOTDIR for a symlink or a file). */
export function openDirectoryEntry(dir: number, name: string): Promise<number> {
  return openRaw(at(dir, name), O_PATH | constants.O_DIRECTORY | constants.O_NOFOLLOW);
}

/** Opens a directory path itself (a root the operator gave), never through a final symlink. */
export function openDirectory(path: string): Promise<number> {
  return openRaw(path, O_PATH | constants.O_DIRECTORY | constants.O_NOFOLLOW);
}

export const statFd = (fd: number): Promise<Stats> => fstatRaw(fd);

/** The target of the symlink `name` in the held directory `dir` (EINVAL when it is no longer a symlink). */
export const readlinkIn = (dir: number, name: string): Promise<string> => readlinkRaw(at(dir, name));

/**
 * Closes a descriptor without waiting for it: nothing is read through it again, and a failure
 * to close a descriptor that was only looked through is not the caller's concern.
 */
export function closeFd(fd: number): void {
  close(fd, () => undefined);
}

/** The (device, inode) pair that names a file whatever path reaches it. */
export const identity = (st: Pick<Stats, "dev" | "ino">): string => `${st.dev}:${st.ino}`;

/** The errno code of a failed call, or undefined. */
export const errno = (err: unknown): string | undefined => (err as NodeJS.ErrnoException | null)?.code;
