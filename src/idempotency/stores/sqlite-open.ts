/**
 * How every SQLite-backed store opens its file (the idempotency store, the guard store): the
 * folder and files checked as ours alone, WAL, a busy timeout, its tables created under SQLite's
 * write lock, and the name checked again after better-sqlite3 opened it.
 */
import { dirname } from "node:path";
import type BetterSqlite3 from "better-sqlite3";
import { ToolgateError } from "../../core/errors.js";
import {
  checkPrivateFileIfPresent,
  checkSameFile,
  ensurePrivateDir,
  preparePrivateFile,
  type FileId,
} from "../../state/private.js";
import { importDriver } from "./driver.js";

/**
 * Opens `path` (`:memory:` for a private in-process database) and runs `ddl` once, idempotently,
 * then `migrate` (what DDL cannot say idempotently) in the same write transaction.
 */
export async function openSqliteDatabase(
  path: string,
  busyTimeoutMs: number,
  ddl: string,
  migrate: (db: BetterSqlite3.Database) => void = () => {},
): Promise<BetterSqlite3.Database> {
  const { default: Database } = await importDriver("sqlite", "better-sqlite3", 12, () => import("better-sqlite3"));
  const id = path === ":memory:" ? null : preparePath(path);
  let db: BetterSqlite3.Database;
  try {
    db = new Database(path);
    // busy_timeout first: switching to WAL and the DDL below may meet another process doing the same.
    db.pragma(`busy_timeout = ${busyTimeoutMs}`);
    db.pragma("journal_mode = WAL");
    // NORMAL in WAL mode: a commit survives a process crash (the case settle guards against);
    // only an OS crash or power loss may lose the last commits.
    db.pragma("synchronous = NORMAL");
    db.transaction(() => {
      db.exec(ddl);
      migrate(db);
    }).immediate();
  } catch (err) {
    throw new ToolgateError("store_unavailable", `cannot open the SQLite store at ${path}: ${(err as Error).message}`, {
      cause: err,
    });
  }
  if (id !== null) {
    try {
      // better-sqlite3 opens by name, following links: the name must still be the file checked above.
      checkSameFile(path, id, "the SQLite store");
    } catch (err) {
      db.close();
      throw err;
    }
  }
  return db;
}

/** SQLite's own files beside the database, which it opens by name too. */
const COMPANIONS = ["-wal", "-shm", "-journal"];

/** Checks the folder and the files SQLite will open, creating the database file 0600 when absent. */
function preparePath(path: string): FileId {
  ensurePrivateDir(dirname(path), "the SQLite store's folder");
  for (const suffix of COMPANIONS) checkPrivateFileIfPresent(path + suffix, "the SQLite store's companion file");
  // SQLite gives its -wal and -shm files the database file's mode, so 0600 here makes them 0600 too.
  return preparePrivateFile(path, "the SQLite store");
}
