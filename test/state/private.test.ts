/**
 * state/private.ts: toolgate's own folders are ours alone, its files are opened without
 * following links or blocking, and every refusal names the path, what is wrong and the fix.
 */
import {
  chmodSync,
  chownSync,
  existsSync,
  linkSync,
  mkdirSync,
  readFileSync,
  statSync,
  symlinkSync,
  writeFileSync,
  closeSync,
  writeSync,
} from "node:fs";
import { execFileSync } from "node:child_process";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { checkSameFile, ensurePrivateDir, openPrivateAppend, preparePrivateFile } from "../../src/state/private.js";
import { tempDir } from "./support.js";

const mode = (path: string) => (statSync(path).mode & 0o7777).toString(8);
const refusal = (fn: () => unknown) => {
  try {
    fn();
  } catch (err) {
    return { code: (err as { code?: string }).code, message: (err as Error).message };
  }
  throw new Error("expected a refusal");
};

describe("ensurePrivateDir", () => {
  it("creates missing folders 0700 and accepts an existing folder of ours that nobody else can write", () => {
    const root = tempDir("dir");
    ensurePrivateDir(join(root, "a", "b"), "the state folder");
    expect([mode(join(root, "a")), mode(join(root, "a", "b"))]).toEqual(["700", "700"]);
    mkdirSync(join(root, "readable"), { mode: 0o755 });
    chmodSync(join(root, "readable"), 0o755);
    expect(() => ensurePrivateDir(join(root, "readable"), "the state folder")).not.toThrow();
  });

  it("refuses a link, a file, a folder others can write and one another user owns, each with the fix", () => {
    const root = tempDir("dir");
    mkdirSync(join(root, "real"));
    symlinkSync(join(root, "real"), join(root, "link"));
    writeFileSync(join(root, "file"), "");
    mkdirSync(join(root, "shared"));
    chmodSync(join(root, "shared"), 0o777);
    mkdirSync(join(root, "group"));
    chmodSync(join(root, "group"), 0o770);
    expect(refusal(() => ensurePrivateDir(join(root, "link"), "the state folder"))).toEqual({
      code: "unsafe_state_path",
      message: `the state folder ${root}/link is a symbolic link (to "${root}/real"); toolgate does not follow links to its own state, which could be pointed anywhere; name the real folder instead, or remove the link`,
    });
    expect(refusal(() => ensurePrivateDir(join(root, "file", "x"), "the state folder")).message).toBe(
      `cannot create the state folder ${root}/file/x: a file is in the way; choose a folder you can create (--state-dir DIR), or set XDG_STATE_HOME (or HOME) to a folder you own`,
    );
    expect(refusal(() => ensurePrivateDir(join(root, "shared"), "the state folder")).message).toBe(
      `the state folder ${root}/shared is writable by its group and every user (mode 0777), who could replace the files in it; make it yours alone (chmod 700 ${root}/shared) or choose another folder`,
    );
    expect(refusal(() => ensurePrivateDir(join(root, "group"), "the state folder")).message).toContain(
      "is writable by its group (mode 0770)",
    );
    if (process.getuid?.() === 0) {
      mkdirSync(join(root, "theirs"), { mode: 0o700 });
      chownSync(join(root, "theirs"), 65534, 65534);
      expect(refusal(() => ensurePrivateDir(join(root, "theirs"), "the state folder")).message).toBe(
        `the state folder ${root}/theirs belongs to uid 65534, not to this user (uid 0): another account could change what toolgate reads there; use a folder of your own, or run toolgate as uid 65534`,
      );
    }
  });
});

describe("openPrivateAppend (the audit trail)", () => {
  it("creates the file 0600 and tightens an existing 0644 one", () => {
    const root = tempDir("file");
    closeSync(openPrivateAppend(join(root, "new.jsonl"), "the audit trail"));
    writeFileSync(join(root, "old.jsonl"), "kept\n", { mode: 0o644 });
    const fd = openPrivateAppend(join(root, "old.jsonl"), "the audit trail");
    writeSync(fd, "added\n");
    closeSync(fd);
    expect([
      mode(join(root, "new.jsonl")),
      mode(join(root, "old.jsonl")),
      readFileSync(join(root, "old.jsonl"), "utf8"),
    ]).toEqual(["600", "600", "kept\nadded\n"]);
  });

  it("refuses a symbolic link (even a dangling one) without touching or creating its target", () => {
    const root = tempDir("file");
    writeFileSync(join(root, "victim"), "untouched\n");
    symlinkSync(join(root, "victim"), join(root, "audit.jsonl"));
    symlinkSync(join(root, "would-be-created"), join(root, "dangling.jsonl"));
    expect(refusal(() => openPrivateAppend(join(root, "audit.jsonl"), "the audit trail"))).toEqual({
      code: "unsafe_state_path",
      message: `the audit trail ${root}/audit.jsonl is a symbolic link (to "${root}/victim"); toolgate does not follow links to its own state; remove the link`,
    });
    expect(refusal(() => openPrivateAppend(join(root, "dangling.jsonl"), "the audit trail")).code).toBe(
      "unsafe_state_path",
    );
    expect(readFileSync(join(root, "victim"), "utf8")).toBe("untouched\n");
    expect(existsSync(join(root, "would-be-created"))).toBe(false);
  });

  it("refuses a FIFO without blocking, a directory, and a file with a second name (hard link)", () => {
    const root = tempDir("file");
    execFileSync("mkfifo", [join(root, "fifo")]);
    mkdirSync(join(root, "dir"));
    writeFileSync(join(root, "elsewhere"), "someone else's\n");
    linkSync(join(root, "elsewhere"), join(root, "linked.jsonl"));
    expect(refusal(() => openPrivateAppend(join(root, "fifo"), "the audit trail")).message).toBe(
      `the audit trail ${root}/fifo is not a regular file (a FIFO or socket); remove it`,
    );
    expect(refusal(() => openPrivateAppend(join(root, "dir"), "the audit trail")).message).toBe(
      `the audit trail ${root}/dir is a directory; remove it or choose another file`,
    );
    expect(refusal(() => openPrivateAppend(join(root, "linked.jsonl"), "the audit trail")).message).toBe(
      `the audit trail ${root}/linked.jsonl has 2 names (hard links): writing it would change a file elsewhere too; remove the other links, or this file`,
    );
    expect(readFileSync(join(root, "elsewhere"), "utf8")).toBe("someone else's\n");
  });
});

describe("preparePrivateFile and checkSameFile (the SQLite store, opened by name)", () => {
  it("creates the file 0600 and notices when the name is swapped for a link afterwards", () => {
    const root = tempDir("file");
    const path = join(root, "state.db");
    const id = preparePrivateFile(path, "the SQLite store");
    expect(mode(path)).toBe("600");
    expect(() => checkSameFile(path, id, "the SQLite store")).not.toThrow();
    writeFileSync(join(root, "other"), "");
    execFileSync("mv", [join(root, "state.db"), join(root, "moved")]);
    symlinkSync(join(root, "other"), path);
    expect(refusal(() => checkSameFile(path, id, "the SQLite store")).message).toBe(
      `the SQLite store ${path} was replaced while toolgate opened it; check what changes that folder, then start again`,
    );
  });
});
