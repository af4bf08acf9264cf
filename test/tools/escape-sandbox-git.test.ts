/**
 * The escape suite, the repository's git folder and what its config names: code git runs on the
 * host the next time a person runs it there. With the catalog's defaults the whole top-level
 * `.git` (folder or gitfile) is read-only inside bash_execute, git commands that write it are
 * refused with a typed denial while those that read work, one created where there was none is
 * removed; and the files git's config names (core.hooksPath, include.path, a gitfile's git folder,
 * files in command values) are read-only too, for bash_execute and file_edit alike. Each case
 * checks the host afterwards.
 */
import { spawnSync } from "node:child_process";
import { existsSync, lstatSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { NoEffectError } from "../../src/core/errors.js";
import type { ToolContext, ToolSpec } from "../../src/core/tool.js";
import { createCodingCatalog, type CodingCatalogOptions } from "../../src/tools/catalog.js";
import { PROTECTED_DEFAULT } from "../../src/tools/workspace.js";
import { binaryAvailable } from "../support/require.js";
import { makeWorkspace, type Sandbox } from "./fixtures.js";
import { asRoot, bashAsNobody, handToNobody, NOBODY } from "./sandbox/unprivileged.js";

const ready = binaryAvailable("bwrap") && binaryAvailable("git");
const made: Sandbox[] = [];
afterAll(() => made.forEach((s) => s.cleanup()));

interface Out {
  exit_code: number | null;
  stdout: string;
  stderr: string;
  sandbox_denied: { code: string; message: string }[];
}
const ctx = (): ToolContext => ({
  signal: new AbortController().signal,
  trajectory_id: "t",
  turn: 0,
  call_id: "c",
  now: Date.now,
  budget_tokens: 100_000,
});
// safe.directory: as root on the host, git refuses the workspace once it has been handed to the sandbox user.
const git = (cwd: string, ...args: string[]) =>
  spawnSync(
    "git",
    ["-c", "init.defaultBranch=main", "-c", "user.name=p", "-c", "user.email=p@h", "-c", "safe.directory=*", ...args],
    { cwd, encoding: "utf8" },
  );

/** A workspace and the catalog over it (the defaults unless said otherwise), made after `setup` has laid out the host's
 * files. */
function repo(prefix: string, setup: (s: Sandbox) => void, options: Partial<CodingCatalogOptions> = {}) {
  const s = makeWorkspace(`escape-git-${prefix}`);
  made.push(s);
  setup(s);
  const tools = new Map<string, ToolSpec>(
    createCodingCatalog({ workspace: s.root, sandbox: { warn: () => {} }, ...options }).map((t) => [t.name, t]),
  );
  const bash = async (command: string) => {
    const r = (await tools.get("bash_execute")!.handler({ command, timeout_ms: 20_000 }, ctx())) as {
      output: Out;
      text: string;
    };
    return { out: r.output, text: r.text };
  };
  const edit = (path: string, old_str: string, new_str: string) =>
    Promise.resolve(
      tools.get("file_edit")!.handler({ path, old_str, new_str, allow_multiple: false, expected_version: "" }, ctx()),
    ).then(
      () => "edited",
      (e: unknown) => (e instanceof NoEffectError ? `${e.code}: ${e.message}` : Promise.reject(e)),
    );
  return {
    s,
    bash,
    edit,
    read: (rel: string) => readFileSync(join(s.root, rel), "utf8"),
    has: (rel: string) => existsSync(join(s.root, rel)),
  };
}

/** A repository with one commit and a change not yet staged, made on the host. */
const committed = (s: Sandbox) => {
  git(s.root, "init", "-q");
  s.write("a.txt", "one\n");
  git(s.root, "add", "a.txt");
  git(s.root, "commit", "-qm", "first");
  s.write("a.txt", "one\ntwo\n");
};
const HOOK = "#!/bin/sh\ntouch /tmp/toolgate-escape-hook-ran\n";
const codes = (o: Out) => o.sandbox_denied.map((d) => d.code);

describe.runIf(ready)("escape suite: the repository's .git", () => {
  it("a gitfile cannot be pointed at a git folder the command planted (its hooks would run on the host)", async () => {
    const r = repo("gitfile", (s) => {
      // A linked worktree's layout: .git is a file naming the git folder, here outside the workspace.
      git(s.outside, "init", "-q", "--bare", "repo.git");
      writeFileSync(join(s.root, ".git"), `gitdir: ${join(s.outside, "repo.git")}\n`);
    });
    const { out } = await r.bash(
      `git init -q --bare planted && printf '${HOOK}' > planted/hooks/pre-commit && chmod +x planted/hooks/pre-commit && echo 'gitdir: planted' > .git; echo END`,
    );
    expect(out.stdout).toBe("END\n");
    expect(out.stderr).toMatch(/\.git: (Read-only file system|Permission denied)/);
    expect(r.read(".git")).toBe(`gitdir: ${join(r.s.outside, "repo.git")}\n`);
  });

  it("a .git created where there was none is removed after the call, a gitfile as well as a folder", async () => {
    const r = repo("absent", () => {});
    // The watch may stop the command as soon as .git appears: what is checked is the host afterwards.
    const planted = await r.bash(`git init -q --bare .planted && echo 'gitdir: .planted' > .git; echo planted`);
    expect(r.has(".git")).toBe(false);
    expect(codes(planted.out)).toContain("protected_path");
    const init = await r.bash("git init -q; echo initialised");
    expect(r.has(".git")).toBe(false);
    expect(init.out.sandbox_denied.find((d) => d.code === "protected_path")?.message).toMatch(
      new RegExp(`^the command created or replaced ${r.s.root}/\\.git, .* which are protected`),
    );
  });

  it("git commands that read the repository work inside; those that write it are refused with a denial that says why and how to allow it", async () => {
    const r = repo("work", committed);
    const before = git(r.s.root, "rev-parse", "HEAD").stdout;
    const reads = await r.bash(
      "git status --short; git log --oneline | wc -l; git diff --stat | tail -1; git show --stat HEAD | head -1 | cut -c1-6",
    );
    expect([reads.out.stdout, reads.out.stderr, reads.out.sandbox_denied]).toEqual([
      " M a.txt\n1\n 1 file changed, 1 insertion(+)\ncommit\n",
      "",
      [],
    ]);
    const writes = await r.bash("git add a.txt; git -c user.name=a -c user.email=a@b commit -qam second; echo END");
    expect(writes.out.stdout).toBe("END\n");
    expect(writes.out.stderr).toContain(`fatal: Unable to create '${r.s.root}/.git/index.lock': Read-only file system`);
    expect(writes.out.sandbox_denied).toEqual([
      {
        code: "protected_path",
        message:
          "the repository's .git is read-only in the sandbox (git runs its hooks and config on the host, so a command must not be able to plant them there): git commands that only read work (status, log, diff, show, blame, grep), those that write the repository (add, commit, checkout, switch, stash, fetch, gc) fail here; retrying will not help. " +
          'Make the changes in the files and leave committing to a person, or the operator lets the agent commit by taking ".git" out of the catalog\'s protectedPaths option (toolgate serve --git-writable); its hooks and config stay read-only',
      },
    ]);
    expect(writes.text).toContain("[sandbox denied: the repository's .git is read-only in the sandbox");
    if (asRoot) {
      // The handover gave .git's ordinary content to the sandbox user (commits work once allowed); what runs on the
      // host kept root.
      const owner = (rel: string) => lstatSync(join(r.s.root, rel)).uid;
      expect([".git", ".git/HEAD", ".git/objects", ".git/index"].map(owner)).toEqual(Array(4).fill(NOBODY));
      expect([".git/hooks", ".git/config"].map(owner)).toEqual([0, 0]);
    }
    expect(git(r.s.root, "rev-parse", "HEAD").stdout).toBe(before);
    expect(git(r.s.root, "status", "--short").stdout).toBe(" M a.txt\n");
  });

  it("with .git taken out of the list the agent commits, and the hooks and config stay read-only", async () => {
    const r = repo("writable", committed, { protectedPaths: PROTECTED_DEFAULT.filter((p) => p !== ".git") });
    const { out } = await r.bash(
      `git -c user.name=a -c user.email=a@b commit -qam second && git log --oneline | wc -l; printf '${HOOK}' > .git/hooks/pre-commit; echo END`,
    );
    expect(out.stdout).toBe("2\nEND\n");
    expect(out.stderr).toMatch(/\.git\/hooks\/pre-commit: (Read-only file system|Permission denied)/);
    expect(r.has(".git/hooks/pre-commit")).toBe(false);
  });
});

describe.runIf(ready)("escape suite: files the repository's git config names", () => {
  it("core.hooksPath: the hooks folder it names is read-only inside and refused by file_edit", async () => {
    const r = repo("hookspath", (s) => {
      committed(s);
      git(s.root, "config", "core.hooksPath", ".githooks");
      s.write(".githooks/pre-commit", "#!/bin/sh\nexit 0\n");
    });
    const { out } = await r.bash(
      `printf '${HOOK}' > .githooks/pre-commit; printf '${HOOK}' > .githooks/post-checkout; echo END`,
    );
    expect(out.stdout).toBe("END\n");
    expect(out.stderr).toMatch(/\.githooks\/pre-commit: (Read-only file system|Permission denied)/);
    expect([r.read(".githooks/pre-commit"), r.has(".githooks/post-checkout")]).toEqual(["#!/bin/sh\nexit 0\n", false]);
    expect(await r.edit(join(r.s.root, ".githooks/pre-commit"), "exit 0", "touch /tmp/x")).toBe(
      `protected_path: path ${JSON.stringify(join(r.s.root, ".githooks/pre-commit"))} resolves to ${r.s.root}/.githooks/pre-commit, under ${r.s.root}/.githooks, which is read-only for the agent: git, an editor or a shell runs what it holds on the host, outside the sandbox, the next time a person works in this repository. file_view may read it; file_edit does not change it. A person can edit it outside the agent; the repository's git config names it for git to run or read on the host (core.hooksPath, include.path or a command), so it stays read-only while the config names it.`,
    );
  });

  it("core.hooksPath naming a folder that does not exist yet: one the command creates is removed", async () => {
    const r = repo("hookspath-absent", (s) => {
      committed(s);
      git(s.root, "config", "core.hooksPath", "tools/hooks");
    });
    const { out } = await r.bash(
      `mkdir -p tools/hooks && printf '${HOOK}' > tools/hooks/pre-commit && chmod +x tools/hooks/pre-commit; echo END`,
    );
    expect([r.has("tools/hooks"), r.has("tools")]).toEqual([false, true]);
    expect(codes(out)).toContain("protected_path");
  });

  it("core.hooksPath naming the workspace root itself: each hook name there is protected, the rest stays writable", async () => {
    const r = repo("hookspath-root", (s) => {
      committed(s);
      git(s.root, "config", "core.hooksPath", ".");
    });
    const { out } = await r.bash(`echo fine > notes.txt; printf '${HOOK}' > pre-commit; echo END`);
    expect([r.has("pre-commit"), r.read("notes.txt")]).toEqual([false, "fine\n"]);
    expect(codes(out)).toContain("protected_path");
  });

  it("include.path and includeIf: the included files are read-only, and what they set is followed", async () => {
    const r = repo("include", (s) => {
      committed(s);
      s.write("config/git.inc", "[include]\n\tpath = more.inc\n");
      s.write("config/more.inc", "[core]\n\thooksPath = config/hooks\n");
      s.write("config/hooks/pre-commit", "#!/bin/sh\n");
      s.write("local.inc", "[user]\n\tname = p\n");
      writeFileSync(
        join(s.root, ".git/config"),
        `${readFileSync(join(s.root, ".git/config"), "utf8")}[include]\n\tpath = ../config/git.inc\n[includeIf "gitdir:${s.root}/"]\n\tpath = "${s.root}/local.inc"\n`,
      );
    });
    const { out } = await r.bash(
      `printf '[core]\\n\\tfsmonitor = ./evil.sh\\n' >> config/git.inc; echo x >> config/more.inc; echo x >> local.inc; printf '${HOOK}' > config/hooks/pre-commit; echo ok > config/other; echo END`,
    );
    expect(out.stdout).toBe("END\n");
    for (const f of ["config/git.inc", "config/more.inc", "local.inc", "config/hooks/pre-commit"])
      expect(out.stderr).toMatch(new RegExp(`${f.replace(/\./g, "\\.")}: (Read-only file system|Permission denied)`));
    expect([
      r.read("config/git.inc"),
      r.read("config/more.inc"),
      r.read("config/hooks/pre-commit"),
      r.read("config/other"),
    ]).toEqual(["[include]\n\tpath = more.inc\n", "[core]\n\thooksPath = config/hooks\n", "#!/bin/sh\n", "ok\n"]);
  });

  it("command-valued keys: the workspace files a filter, textconv, fsmonitor or alias runs are read-only", async () => {
    const r = repo("commands", (s) => {
      committed(s);
      for (const f of ["scripts/clean.sh", "conv.sh", "fsmonitor.pl", "tools/run"]) s.write(f, "#!/bin/sh\ncat\n");
      writeFileSync(
        join(s.root, ".git/config"),
        readFileSync(join(s.root, ".git/config"), "utf8") +
          '[filter "x"]\n\tclean = ./scripts/clean.sh %f\n\tsmudge = cat\n[diff "bin"]\n\ttextconv = sh conv.sh\n[diff "later"]\n\ttextconv = python3 later.py\n[core]\n\tfsmonitor = "fsmonitor.pl"\n[alias]\n\tup = "!tools/run --all"\n',
      );
    });
    const { out } = await r.bash(
      "for f in scripts/clean.sh conv.sh fsmonitor.pl tools/run; do echo evil >> $f; done; echo free > scripts/other.sh; echo END",
    );
    expect(out.stdout).toBe("END\n");
    for (const f of ["scripts/clean.sh", "conv.sh", "fsmonitor.pl", "tools/run"])
      expect(r.read(f)).toBe("#!/bin/sh\ncat\n");
    expect(r.read("scripts/other.sh")).toBe("free\n");
    // A file the config names that does not exist yet is watched: one the command creates is removed.
    const later = await r.bash("echo 'import os' > later.py; echo END");
    expect(r.has("later.py")).toBe(false);
    expect(codes(later.out)).toContain("protected_path");
  });

  it("a gitfile naming a git folder inside the workspace: that folder is read-only as a whole", async () => {
    const r = repo("separate", (s) => {
      git(s.root, "init", "-q", "--separate-git-dir", join(s.root, ".repo"));
    });
    expect(r.read(".git")).toBe(`gitdir: ${join(r.s.root, ".repo")}\n`);
    const { out } = await r.bash(
      `printf '${HOOK}' > .repo/hooks/pre-commit; git config core.fsmonitor ./evil; echo END`,
    );
    expect(out.stdout).toBe("END\n");
    expect(r.has(".repo/hooks/pre-commit")).toBe(false);
    expect(git(r.s.root, "config", "--get", "core.fsmonitor").stdout).toBe("");
  });

  it("a config past the reader's bounds refuses the call (nothing run) and names the file and the fix", async () => {
    const r = repo("huge", (s) => {
      committed(s);
      writeFileSync(
        join(s.root, ".git/config"),
        readFileSync(join(s.root, ".git/config"), "utf8") + `# ${"x".repeat(300 * 1024)}\n`,
      );
    });
    const refused = await r.bash("touch ran").then(
      () => null,
      (e: unknown) => e,
    );
    expect(refused).toBeInstanceOf(NoEffectError);
    expect((refused as NoEffectError).code).toBe("git_config_too_large");
    expect((refused as Error).message).toMatch(
      new RegExp(
        `^the repository's git config ${r.s.root}/\\.git/config is \\d+ bytes, more than the 262144 read, past what toolgate reads .*; nothing was run or changed\\. Make the config smaller, or the operator takes \\.git and \\.git/config out of the catalog's protectedPaths option$`,
      ),
    );
    expect(r.has("ran")).toBe(false);
  });
});

describe.runIf(ready && asRoot)("escape suite: the repository's .git, toolgate as an unprivileged user", () => {
  it("the same holds where bwrap mounts in a user namespace of its own: a gitfile, and the hooks folder core.hooksPath names", async () => {
    const t = makeWorkspace("escape-git-nobody");
    const u = makeWorkspace("escape-git-nobody-file");
    made.push(t, u);
    committed(t);
    git(t.root, "config", "core.hooksPath", ".githooks");
    t.write(".githooks/pre-commit", "#!/bin/sh\nexit 0\n");
    git(u.outside, "init", "-q", "--bare", "repo.git");
    writeFileSync(join(u.root, ".git"), `gitdir: ${join(u.outside, "repo.git")}\n`);
    for (const w of [t, u]) {
      spawnSync("chown", ["-R", `${NOBODY}:${NOBODY}`, w.root]);
      handToNobody(w.base, w.root);
    }
    const hooks = await bashAsNobody(t.root, `printf '${HOOK}' > .githooks/pre-commit; git status --short; echo END`);
    expect(hooks.error).toBeUndefined();
    expect(hooks.output!.stdout).toBe(" M a.txt\n?? .githooks/\nEND\n");
    expect(readFileSync(join(t.root, ".githooks/pre-commit"), "utf8")).toBe("#!/bin/sh\nexit 0\n");
    const gitfile = await bashAsNobody(u.root, "echo 'gitdir: elsewhere' > .git; echo END");
    expect(gitfile.output!.stdout).toBe("END\n");
    expect(readFileSync(join(u.root, ".git"), "utf8")).toBe(`gitdir: ${join(u.outside, "repo.git")}\n`);
  });
});
