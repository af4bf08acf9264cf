/**
 * Folders and files only this user can change: how toolgate creates and opens its own state
 * (the SQLite store, the audit trail, key files, in-workspace state folders).
 *
 * A folder is toolgate's to use when it is a real directory (not a symbolic link), owned by the
 * effective user, and writable by nobody else: then no other account can add, rename or replace
 * a file in it. Folders toolgate creates are 0700. Files are opened without following a
 * symbolic link at the last component (`O_NOFOLLOW`), without blocking on a FIFO
 * (`O_NONBLOCK`), and checked on the open descriptor: a regular file, ours, with one name (a hard
 * link planted under our name would make toolgate write a file elsewhere); their mode is
 * tightened to 0600. Every refusal is a ToolgateError `unsafe_state_path` naming the path, what
 * is wrong and the fix.
 */
import {
  closeSync,
  constants,
  fchmodSync,
  fstatSync,
  lstatSync,
  mkdirSync,
  openSync,
  readlinkSync,
  realpathSync,
  type Stats,
} from "node:fs";
import { basename, dirname, join, sep } from "node:path";
import { ToolgateError, type ToolgateErrorCode } from "../core/errors.js";

const { O_APPEND, O_CREAT, O_EXCL, O_RDONLY, O_WRONLY } = constants;
const O_NOFOLLOW = constants.O_NOFOLLOW ?? 0;
const O_NONBLOCK = constants.O_NONBLOCK ?? 0;

/** The effective uid, or null where the platform has none (no ownership checks there). */
const me = (): number | null => process.geteuid?.() ?? null;

/** The identity of an opened file, to check that a path still names it later. */
export interface FileId {
  dev: number;
  ino: number;
}

/** Creates `dir` (and missing parents, 0700) when absent, then checks it is ours alone. */
export function ensurePrivateDir(dir: string, what: string): void {
  try {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    throw unsafe(
      `cannot create ${what} ${dir}: ${code === "EACCES" ? "permission denied" : code === "ENOTDIR" || code === "EEXIST" ? "a file is in the way" : ((err as Error).message ?? code)}; choose a folder you can create (--state-dir DIR), or set XDG_STATE_HOME (or HOME) to a folder you own`,
      "state_dir_unusable",
      err,
    );
  }
  checkPrivateDir(dir, what);
}

/** Refuses `dir` unless it is a real directory, ours, writable by nobody else. */
export function checkPrivateDir(dir: string, what: string): void {
  const st = lstatOrNull(dir);
  if (st === null) throw unsafe(`${what} ${dir} does not exist`);
  if (st.isSymbolicLink()) {
    throw unsafe(
      `${what} ${dir} is a symbolic link (to ${target(dir)}); toolgate does not follow links to its own state, which could be pointed anywhere; name the real folder instead, or remove the link`,
    );
  }
  if (!st.isDirectory()) throw unsafe(`${what} ${dir} is not a directory; remove it or choose another folder`);
  checkOwner(st, dir, what);
  if ((st.mode & 0o022) !== 0) {
    const who = [(st.mode & 0o020) !== 0 ? "its group" : "", (st.mode & 0o002) !== 0 ? "every user" : ""]
      .filter(Boolean)
      .join(" and ");
    throw unsafe(
      `${what} ${dir} is writable by ${who} (mode ${octal(st.mode)}), who could replace the files in it; make it yours alone (chmod 700 ${dir}) or choose another folder`,
    );
  }
}

/** Opens `path` for appending, creating it 0600 when absent; refuses a link, a non-file, another owner. */
export function openPrivateAppend(path: string, what: string): number {
  return openChecked(path, O_WRONLY | O_APPEND | O_CREAT, what);
}

/**
 * Makes sure `path` is a private regular file, creating it empty (0600) when absent, and returns
 * its identity, for a library that then opens it by name (SQLite): check with `checkSameFile`
 * afterwards that the name still named this file.
 */
export function preparePrivateFile(path: string, what: string): FileId {
  const fd = openChecked(path, O_RDONLY | O_CREAT, what);
  try {
    const { dev, ino } = fstatSync(fd);
    return { dev, ino };
  } finally {
    closeSync(fd);
  }
}

/** Refuses when `path` is no longer the file `id` identifies (replaced or turned into a link meanwhile). */
export function checkSameFile(path: string, id: FileId, what: string): void {
  const st = lstatOrNull(path);
  if (st === null || st.isSymbolicLink() || st.dev !== id.dev || st.ino !== id.ino) {
    throw unsafe(
      `${what} ${path} was replaced while toolgate opened it; check what changes that folder, then start again`,
    );
  }
}

/** When `path` exists: refuses it unless it is a regular file of ours with one name (a companion file SQLite opens by
 * itself). */
export function checkPrivateFileIfPresent(path: string, what: string): void {
  const st = lstatOrNull(path);
  if (st === null) return;
  if (st.isSymbolicLink()) throw unsafe(`${what} ${path} is a symbolic link (to ${target(path)}); remove the link`);
  checkFile(st, path, what);
}

/** Creates a new file 0600 that did not exist (`O_EXCL`): for markers and temporary files. */
export function createPrivateFile(path: string, what: string): number {
  return openChecked(path, O_WRONLY | O_CREAT | O_EXCL, what);
}

/** The real path of `path`'s deepest existing ancestor, with the rest appended: where it would land. */
export function realish(path: string): string {
  const rest: string[] = [];
  let at = path;
  for (;;) {
    try {
      return join(realpathSync(at), ...rest.reverse());
    } catch {
      const up = dirname(at);
      if (up === at) return path;
      rest.push(basename(at));
      at = up;
    }
  }
}

/** Whether `path` is `root` or below it (both absolute and normalised). */
export function isInside(path: string, root: string): boolean {
  return path === root || path.startsWith(root.endsWith(sep) ? root : root + sep);
}

function openChecked(path: string, flags: number, what: string): number {
  let fd: number;
  try {
    fd = openSync(path, flags | O_NOFOLLOW | O_NONBLOCK, 0o600);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === "ELOOP")
      throw unsafe(
        `${what} ${path} is a symbolic link (to ${target(path)}); toolgate does not follow links to its own state; remove the link`,
        "unsafe_state_path",
        err,
      );
    if (code === "ENXIO")
      throw unsafe(`${what} ${path} is not a regular file (a FIFO or socket); remove it`, "unsafe_state_path", err);
    if (code === "EISDIR")
      throw unsafe(`${what} ${path} is a directory; remove it or choose another file`, "unsafe_state_path", err);
    if (code === "EEXIST") throw unsafe(`${what} ${path} already exists; remove it`, "unsafe_state_path", err);
    throw unsafe(`cannot open ${what} ${path}: ${code ?? (err as Error).message}`, "state_dir_unusable", err);
  }
  try {
    const st = fstatSync(fd);
    checkFile(st, path, what);
    if ((st.mode & 0o077) !== 0) fchmodSync(fd, 0o600);
    return fd;
  } catch (err) {
    closeSync(fd);
    throw err;
  }
}

function checkFile(st: Stats, path: string, what: string): void {
  if (!st.isFile()) throw unsafe(`${what} ${path} is not a regular file; remove it`);
  checkOwner(st, path, what);
  if (st.nlink !== 1) {
    throw unsafe(
      `${what} ${path} has ${st.nlink} names (hard links): writing it would change a file elsewhere too; remove the other links, or this file`,
    );
  }
}

function checkOwner(st: Stats, path: string, what: string): void {
  const uid = me();
  if (uid !== null && st.uid !== uid) {
    throw unsafe(
      `${what} ${path} belongs to uid ${st.uid}, not to this user (uid ${uid}): another account could change what toolgate reads there; use a folder of your own, or run toolgate as uid ${st.uid}`,
    );
  }
}

function lstatOrNull(path: string): Stats | null {
  try {
    return lstatSync(path);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return null;
    throw unsafe(
      `cannot inspect ${path}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`,
      "state_dir_unusable",
      err,
    );
  }
}

/** What a link says, quoted: it may have been written by anyone who could write the folder. */
function target(path: string): string {
  try {
    // TODO(escape): JSON.stringify escapes C0 controls only; C1, bidi and invisible characters need escapeUntrusted.
    return JSON.stringify(readlinkSync(path));
  } catch {
    return "an unreadable target";
  }
}

const octal = (mode: number) => "0" + (mode & 0o7777).toString(8);

function unsafe(message: string, code: ToolgateErrorCode = "unsafe_state_path", cause?: unknown): ToolgateError {
  return new ToolgateError(code, message, cause === undefined ? undefined : { cause });
}
