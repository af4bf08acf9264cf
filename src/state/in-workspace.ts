/**
 * A state folder inside the workspace, used only when the operator asks for one
 * (`--state-dir .toolgate`, `--store sqlite:.toolgate/state.db`): toolgate creates it at start,
 * before any call, and recognises it afterwards only as its own.
 *
 * Recognition cannot rest on anything in the folder alone: a repository can ship a `.toolgate/`
 * holding any marker, and anything running in the workspace can write one. So creating the
 * folder writes a random nonce both into it (`.toolgate-dir`) and into the per-user state folder
 * outside the workspace; a folder whose nonce does not match the one recorded outside was not
 * made by toolgate for this workspace and is refused. The folder must sit directly under the
 * workspace root, so no folder the agent could rename lies on its path; it is then hidden from
 * the tools (the caller hands it to the coding catalog).
 */
import { closeSync, mkdirSync, openSync, readSync, renameSync, writeSync, constants, fstatSync } from "node:fs";
import { createHash, randomBytes, timingSafeEqual } from "node:crypto";
import { basename, join } from "node:path";
import { ToolgateError } from "../core/errors.js";
import { checkPrivateDir, createPrivateFile, ensurePrivateDir } from "./private.js";

/** The marker toolgate writes into a state folder it creates inside a workspace. */
export const MARKER_FILE = ".toolgate-dir";

const NONCE_BYTES = 32;

/**
 * Creates `dir` (a direct child of the workspace) with a fresh nonce, or checks that an existing
 * `dir` carries the nonce recorded in `records` (the per-user state folder, outside the workspace).
 */
export function claimStateDirInWorkspace(dir: string, records: string): { created: boolean } {
  ensurePrivateDir(records, "toolgate's per-user state folder");
  const record = join(
    records,
    `workspace-dir-${createHash("sha256").update(basename(dir)).digest("hex").slice(0, 32)}`,
  );
  let created = false;
  try {
    mkdirSync(dir, { mode: 0o700 });
    created = true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "EEXIST") {
      throw new ToolgateError(
        "state_dir_unusable",
        `cannot create the state folder ${dir}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`,
        { cause: err },
      );
    }
  }
  checkPrivateDir(dir, "the state folder");
  if (created) {
    const nonce = randomBytes(NONCE_BYTES).toString("hex");
    writeNew(join(dir, MARKER_FILE), nonce, "the state folder's marker");
    // Written to a temporary name, then renamed: a reader sees the old record or the new one.
    const temp = `${record}.${randomBytes(6).toString("hex")}.tmp`;
    writeNew(temp, nonce, "the state folder's record");
    renameSync(temp, record);
    return { created };
  }
  const expected = readSmall(record);
  if (expected === null) throw notOurs(dir, `toolgate has no record of creating it (none in ${records})`);
  const found = readSmall(join(dir, MARKER_FILE));
  if (found === null || !sameText(found, expected))
    throw notOurs(dir, `its ${MARKER_FILE} does not hold the nonce toolgate recorded when it created the folder`);
  return { created };
}

function writeNew(path: string, text: string, what: string): void {
  const fd = createPrivateFile(path, what);
  try {
    writeSync(fd, text);
  } finally {
    closeSync(fd);
  }
}

/** At most a few hundred bytes of a regular file, without following a link; null when absent or not a plain file. */
function readSmall(path: string): string | null {
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDONLY | (constants.O_NOFOLLOW ?? 0) | (constants.O_NONBLOCK ?? 0));
  } catch {
    return null;
  }
  try {
    if (!fstatSync(fd).isFile()) return null;
    const buf = Buffer.alloc(256);
    const n = readSync(fd, buf, 0, buf.length, 0);
    return buf.subarray(0, n).toString("utf8");
  } finally {
    closeSync(fd);
  }
}

function sameText(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

function notOurs(dir: string, why: string): ToolgateError {
  return new ToolgateError(
    "unsafe_state_path",
    `the state folder ${dir} already exists and was not created by toolgate for this workspace (${why}). A folder that came with the repository, or that anything running in the workspace made, could hold a planted store or a link to any file. If nothing in it is yours, remove it (rm -r ${dir}) and start again: toolgate creates the folder itself; or keep the state outside the workspace (the default)`,
  );
}
