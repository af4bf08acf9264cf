/**
 * The whole file system and the system folders are never a workspace: the tools may change
 * anything in theirs, and a root toolgate hands the workspace's root-owned files to the sandbox
 * user at its first run (sandbox/handover.ts), which for `/` would give the system away. An MCP
 * client that starts `toolgate serve` without `--workspace` starts it in `/` or the home folder,
 * so the refusal names the flag, and comes before any state is made.
 */
import { chmodSync, existsSync, mkdirSync, readdirSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { NoEffectError } from "../../src/core/errors.js";
import { openWorkspace } from "../../src/tools/workspace.js";
import { systemWorkspace } from "../../src/tools/workspace-places.js";
import { createCodingCatalog } from "../../src/tools/catalog.js";
import { register } from "../../src/cli/commands/serve.js";
import { register as registerCost } from "../../src/cli/commands/cost.js";
import { runCommand } from "../cli/commands/runtime-cli.js";
import { tempDir } from "../mcp/support.js";

const FIX =
  "the tools may change anything in their workspace, and a root toolgate hands its root-owned files to the sandbox user; pass the project's own folder (an MCP client starts its servers in / or the home folder, so name the folder in the server's arguments: serve --workspace /path/to/project)";

const refusal = (f: () => unknown) => {
  try {
    f();
  } catch (err) {
    return err as NoEffectError;
  }
  throw new Error("not refused");
};

afterEach(() => {
  vi.unstubAllEnvs();
});

describe("a workspace that is the file system or a system folder", () => {
  it("is refused by openWorkspace and createCodingCatalog, naming why and what to pass", () => {
    const root = refusal(() => openWorkspace("/"));
    expect(root).toBeInstanceOf(NoEffectError);
    expect(root.code).toBe("invalid_path");
    expect(root.message).toBe(`workspace root "/" is the whole file system: ${FIX}`);
    expect(refusal(() => createCodingCatalog({ workspace: "/etc" })).message).toBe(
      `workspace root "/etc" is the system folder /etc: ${FIX}`,
    );
    expect(refusal(() => openWorkspace("/usr/share")).message).toBe(
      `workspace root "/usr/share" is inside the system folder /usr: ${FIX}`,
    );
  });

  it("is judged by its real path: a link to / is refused, a project folder and /usr-like names are not", () => {
    const dir = tempDir("system-ws");
    symlinkSync("/", join(dir, "everything"));
    expect(refusal(() => openWorkspace(join(dir, "everything"))).message).toBe(
      `workspace root "${join(dir, "everything")}" (/) is the whole file system: ${FIX}`,
    );
    mkdirSync(join(dir, "usr"));
    expect(openWorkspace(join(dir, "usr")).root).toBe(join(dir, "usr"));
    expect(["/usrlocal", "/etcetera", "/home/ada/project", "/srv/agent/ws"].map((p) => systemWorkspace(p))).toEqual([
      undefined,
      undefined,
      undefined,
      undefined,
    ]);
  });

  it("toolgate serve refuses it before making any state, naming --workspace (or its absence)", async () => {
    const home = tempDir("system-ws-home");
    vi.stubEnv("HOME", home);
    vi.stubEnv("XDG_STATE_HOME", join(home, "state"));
    const given = await runCommand(register, ["serve", "--workspace", "/", "--state-dir", ".toolgate"]);
    expect(given.error?.message).toBe(`the workspace / (--workspace) is the whole file system: ${FIX}`);
    expect(existsSync("/.toolgate")).toBe(false);
    const cwd = vi.spyOn(process, "cwd").mockReturnValue("/");
    try {
      const started = await runCommand(register, ["serve"]);
      expect(started.error?.message).toBe(
        `the workspace / (the folder toolgate serve was started in; no --workspace) is the whole file system: ${FIX}`,
      );
    } finally {
      cwd.mockRestore();
    }
    expect(existsSync(join(home, "state"))).toBe(false);
  });

  it("refuses a home folder and a shared folder itself, but not a project inside either", () => {
    const home = tempDir("system-ws-own-home");
    const HOME_WHY = "is a home folder (its keys and credentials: .ssh, .aws, .netrc)";
    expect(["/root", "/home/ada", home].map((p) => systemWorkspace(p, home))).toEqual([HOME_WHY, HOME_WHY, HOME_WHY]);
    expect(
      ["/home", "/tmp", "/var", "/var/tmp", "/srv", "/opt", "/mnt", "/media"].map((p) => systemWorkspace(p)),
    ).toEqual(
      ["/home", "/tmp", "/var", "/var/tmp", "/srv", "/opt", "/mnt", "/media"].map(
        (p) => `is the shared folder ${p} itself, not a project inside it`,
      ),
    );
    expect(
      ["/root/app", "/home/ada/project", join(home, "project"), "/var/www/site", "/tmp/ws", "/opt/agent"].map((p) =>
        systemWorkspace(p, home),
      ),
    ).toEqual([undefined, undefined, undefined, undefined, undefined, undefined]);
    vi.stubEnv("HOME", home);
    expect(refusal(() => openWorkspace(home)).message).toBe(`workspace root "${home}" ${HOME_WHY}: ${FIX}`);
  });

  it("knows the home folder by its real path, whatever HOME spells it (a trailing slash, a link to it)", () => {
    const dir = tempDir("system-ws-home-link");
    const home = join(dir, "data-ada");
    mkdirSync(home);
    symlinkSync(home, join(dir, "ada"));
    const HOME_WHY = "is a home folder (its keys and credentials: .ssh, .aws, .netrc)";
    expect([home + "/", join(dir, "ada"), join(dir, "ada") + "/"].map((h) => systemWorkspace(home, h))).toEqual([
      HOME_WHY,
      HOME_WHY,
      HOME_WHY,
    ]);
    vi.stubEnv("HOME", join(dir, "ada") + "/");
    expect(refusal(() => openWorkspace(home)).message).toBe(`workspace root "${home}" ${HOME_WHY}: ${FIX}`);
  });

  it("takes a project in /usr/src or /usr/local/src (a container's WORKDIR /usr/src/app), not those folders", () => {
    expect(["/usr/src/app", "/usr/local/src/tool/sub"].map((p) => systemWorkspace(p))).toEqual([undefined, undefined]);
    expect(["/usr/src", "/usr/local/src", "/usr/local", "/usr/local/bin"].map((p) => systemWorkspace(p))).toEqual([
      "is inside the system folder /usr",
      "is inside the system folder /usr",
      "is inside the system folder /usr",
      "is inside the system folder /usr",
    ]);
  });

  it("refuses the spool, mail and log trees of /var and /var/lib itself, not a project in /var/lib or /var/www", () => {
    expect(
      ["/var/spool/cron/crontabs", "/var/mail", "/var/log/app", "/var/lib"].map((p) => systemWorkspace(p)),
    ).toEqual([
      "is inside the system folder /var/spool",
      "is the system folder /var/mail",
      "is inside the system folder /var/log",
      "is the shared folder /var/lib itself, not a project inside it",
    ]);
    expect(["/var/lib/jenkins/workspace/job", "/var/www/site", "/var/spoolish"].map((p) => systemWorkspace(p))).toEqual(
      [undefined, undefined, undefined],
    );
  });

  it("toolgate serve started in the home folder without --workspace is refused before making any state", async () => {
    const home = tempDir("system-ws-started-home");
    vi.stubEnv("HOME", home);
    vi.stubEnv("XDG_STATE_HOME", join(home, "state"));
    const cwd = vi.spyOn(process, "cwd").mockReturnValue(home);
    try {
      const started = await runCommand(register, ["serve"]);
      expect(started.error?.message).toBe(
        `the workspace ${home} (the folder toolgate serve was started in; no --workspace) is a home folder (its keys and credentials: .ssh, .aws, .netrc): ${FIX}`,
      );
    } finally {
      cwd.mockRestore();
    }
    expect(existsSync(join(home, "state"))).toBe(false);
    expect(existsSync(join(home, ".toolgate"))).toBe(false);
  });

  it("toolgate serve says whether --workspace does not exist or is a file", async () => {
    const dir = tempDir("system-ws-missing");
    const missing = await runCommand(register, ["serve", "--workspace", join(dir, "nope")]);
    expect(missing.error?.message).toBe(
      `--workspace ${join(dir, "nope")} does not exist; pass the project root, e.g. --workspace /path/to/project (or create it first: mkdir -p ${join(dir, "nope")})`,
    );
    writeFileSync(join(dir, "file.txt"), "x");
    const file = await runCommand(register, ["serve", "--workspace", join(dir, "file.txt")]);
    expect(file.error?.message).toBe(
      `--workspace ${join(dir, "file.txt")} is not a directory; pass the project root, e.g. --workspace /path/to/project`,
    );
    // The mkdir it suggests makes that one folder, a space or quote in its name included.
    const spaced = await runCommand(register, ["serve", "--workspace", join(dir, "my 'proj'")]);
    expect(spaced.error?.message).toBe(
      `--workspace ${join(dir, "my 'proj'")} does not exist; pass the project root, e.g. --workspace /path/to/project (or create it first: mkdir -p '${dir}/my '\\''proj'\\''')`,
    );
    // Under a file no mkdir can make it: it says which is the file.
    const under = await runCommand(register, ["serve", "--workspace", join(dir, "file.txt", "sub")]);
    expect(under.error?.message).toBe(
      `--workspace ${join(dir, "file.txt", "sub")} does not exist: a folder on its path is a file; pass the project root, e.g. --workspace /path/to/project`,
    );
  });

  // Root reaches every folder: this case is seen only as another user (`setpriv --reuid=nobody --regid=nogroup --clear-groups npx vitest run …`).
  it.skipIf(process.getuid?.() === 0)(
    "toolgate serve says a --workspace behind a folder this user may not enter cannot be reached",
    async () => {
      const dir = tempDir("system-ws-closed");
      mkdirSync(join(dir, "closed", "proj"), { recursive: true });
      chmodSync(join(dir, "closed"), 0o000);
      try {
        const r = await runCommand(register, ["serve", "--workspace", join(dir, "closed", "proj")]);
        expect(r.error?.message).toBe(
          `--workspace ${join(dir, "closed", "proj")} cannot be reached by this user (a folder on its path denies it); pass the project root, e.g. --workspace /path/to/project`,
        );
      } finally {
        chmodSync(join(dir, "closed"), 0o700);
      }
    },
  );

  it("toolgate cost run from / still costs the built-in definitions, which do not depend on the workspace", async () => {
    // The empty folder they are built over is gone once they are: this worker, like a process a
    // signal ends, never runs its exit handlers.
    const tmp = tempDir("system-ws-tmp");
    vi.stubEnv("TMPDIR", tmp);
    const cwd = vi.spyOn(process, "cwd").mockReturnValue("/");
    try {
      const r = await runCommand(registerCost, ["cost"]);
      expect(r.error).toBeNull();
      expect(r.stdout).toContain("K·S = 559 tokens per turn");
      expect(r.stdout).not.toContain("toolgate-definitions-");
    } finally {
      cwd.mockRestore();
    }
    expect(readdirSync(tmp)).toEqual([]);
  });
});
