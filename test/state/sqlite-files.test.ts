/**
 * The SQLite store's files: better-sqlite3 opens by name and follows links, so the store checks
 * the name itself before and after: a link (at the database or at its -wal/-shm/-journal), a
 * non-regular file or a folder others can write is refused, and nothing is written through it.
 */
import { chmodSync, mkdirSync, readFileSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { execFileSync } from "node:child_process";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { createSqliteStore } from "../../src/idempotency/stores/sqlite.js";
import { tempDir } from "./support.js";

describe("createSqliteStore: the database file and its companions", () => {
  it("creates the file 0600 (and a missing folder 0700); an existing 0644 file is tightened", async () => {
    const root = tempDir("db");
    await (await createSqliteStore({ path: join(root, "new", "state.db") })).close();
    writeFileSync(join(root, "old.db"), "", { mode: 0o644 });
    await (await createSqliteStore({ path: join(root, "old.db") })).close();
    expect([
      statSync(join(root, "new")).mode & 0o777,
      statSync(join(root, "new", "state.db")).mode & 0o777,
      statSync(join(root, "old.db")).mode & 0o777,
    ]).toEqual([0o700, 0o600, 0o600]);
  });

  it("refuses a database that is a link, and one whose -wal is a link, writing nothing through either", async () => {
    const root = tempDir("db");
    writeFileSync(join(root, "victim"), "precious\n");
    symlinkSync(join(root, "victim"), join(root, "linked.db"));
    await expect(createSqliteStore({ path: join(root, "linked.db") })).rejects.toMatchObject({
      code: "unsafe_state_path",
      message: `the SQLite store ${root}/linked.db is a symbolic link (to "${root}/victim"); toolgate does not follow links to its own state; remove the link`,
    });
    symlinkSync(join(root, "victim"), join(root, "state.db-wal"));
    await expect(createSqliteStore({ path: join(root, "state.db") })).rejects.toMatchObject({
      code: "unsafe_state_path",
      message: `the SQLite store's companion file ${root}/state.db-wal is a symbolic link (to "${root}/victim"); remove the link`,
    });
    expect(readFileSync(join(root, "victim"), "utf8")).toBe("precious\n");
  });

  it("refuses a FIFO without blocking, and a folder every user can write", async () => {
    const root = tempDir("db");
    execFileSync("mkfifo", [join(root, "fifo.db")]);
    await expect(createSqliteStore({ path: join(root, "fifo.db") })).rejects.toMatchObject({
      message: `the SQLite store ${root}/fifo.db is not a regular file; remove it`,
    });
    mkdirSync(join(root, "shared"));
    chmodSync(join(root, "shared"), 0o1777);
    await expect(createSqliteStore({ path: join(root, "shared", "state.db") })).rejects.toMatchObject({
      message: `the SQLite store's folder ${root}/shared is writable by its group and every user (mode 01777), who could replace the files in it; make it yours alone (chmod 700 ${root}/shared) or choose another folder`,
    });
  });
});
