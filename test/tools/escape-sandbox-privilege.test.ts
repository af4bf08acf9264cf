/**
 * The escape suite, host privilege: a sandbox started by a root toolgate holds none of root's
 * power on the host (its uid, kernel settings, setuid files, namespaces), and the same holds for
 * an unprivileged toolgate (a child under setpriv) where the answer differs. Each case checks the
 * host afterwards. Probes of kernel settings write back the value already there, so a failure on
 * an unprotected envelope changes nothing.
 */
import { spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { chmodSync, chownSync, linkSync, lstatSync, readdirSync, readFileSync, symlinkSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import type { ToolContext, ToolSpec } from "../../src/core/tool.js";
import { DEFAULT_BASH_LIMITS, executeBash, launcherChooser } from "../../src/tools/bash.js";
import { createCodingCatalog } from "../../src/tools/catalog.js";
import { createBubblewrap } from "../../src/tools/sandbox/bubblewrap.js";
import { binaryAvailable } from "../support/require.js";
import { makeWorkspace } from "./fixtures.js";
import { asRoot, bashAsNobody, handToNobody, NOBODY } from "./sandbox/unprivileged.js";

const s = makeWorkspace("escape-priv");
afterAll(() => s.cleanup());
const tag = randomBytes(4).toString("hex");
const ready = binaryAvailable("bwrap");
const warnings: string[] = [];
const tools = ready
  ? new Map(
      createCodingCatalog({
        workspace: s.root,
        sandbox: { warn: (m) => warnings.push(m) },
        limits: { bash: { max_processes: 64 } },
      }).map((t) => [t.name, t]),
    )
  : new Map<string, ToolSpec>();
const ctx = (signal = new AbortController().signal): ToolContext => ({
  signal,
  trajectory_id: "t-priv",
  turn: 0,
  call_id: "c",
  now: Date.now,
  budget_tokens: 100_000,
});

interface BashOut {
  exit_code: number | null;
  stdout: string;
  stderr: string;
  sandbox_denied: { code: string }[];
}
async function bash(command: string, signal?: AbortSignal): Promise<BashOut> {
  return (
    (await tools.get("bash_execute")!.handler({ command, timeout_ms: 20_000 }, ctx(signal))) as { output: BashOut }
  ).output;
}

/** Every entry under `dir` (symlinks not followed), with its owner and its setuid/setgid bits. */
function entries(dir: string): { path: string; uid: number; special: number }[] {
  const out: { path: string; uid: number; special: number }[] = [];
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    const st = lstatSync(p);
    out.push({ path: p.slice(dir.length + 1), uid: st.uid, special: st.mode & 0o6000 });
    if (st.isDirectory()) for (const e of entries(p)) out.push({ ...e, path: `${name}/${e.path}` });
  }
  return out;
}

/** The probes whose answer must be "refused", run in one command; each prints its marker only if it got through. */
const PROBES = [
  // Writing the value already there: on an unprotected envelope this succeeds and changes nothing.
  'v=$(cat /proc/sys/kernel/core_pattern); printf "%s\\n" "$v" > /proc/sys/kernel/core_pattern && echo WROTE-SYSCTL',
  // Opened for appending, never written: nothing is triggered even where it opens.
  "(exec 3>>/proc/sysrq-trigger) 2>/dev/null && echo OPENED-SYSRQ",
  "unshare -U true && echo NEW-USERNS",
  "unshare -Ur true && echo NEW-USERNS-ROOT",
  "cp /usr/bin/true t1 && chmod 4755 t1; chmod u+s t1; chmod g+s t1; install -m 6755 /usr/bin/true t2",
  `python3 -c 'import os; os.close(os.open("t3", os.O_CREAT | os.O_WRONLY, 0o4755))'`,
  "mkdir -p d/e && echo x > d/e/f && echo WROTE-FILES",
].join("; ");

describe.runIf(ready && asRoot)("escape suite: host privilege, toolgate as root", () => {
  it("/proc/sys and /proc/sysrq-trigger are read-only, new user namespaces are refused, and the host's kernel settings stay", async () => {
    const before = readFileSync("/proc/sys/kernel/core_pattern", "utf8");
    const out = await bash(PROBES);
    expect(out.stdout).not.toMatch(/WROTE-SYSCTL|OPENED-SYSRQ|NEW-USERNS/);
    expect(out.stdout).toContain("WROTE-FILES");
    expect(out.stderr).toContain("/proc/sys/kernel/core_pattern: Read-only file system");
    expect(out.stderr).toContain("unshare: unshare failed: Operation not permitted");
    expect(readFileSync("/proc/sys/kernel/core_pattern", "utf8")).toBe(before);
  });

  it("no setuid or setgid file can be made, and everything the sandbox wrote belongs to the sandbox user, not root", async () => {
    const out = await bash("rm -rf t1 t2 t3 d; " + PROBES);
    expect(out.stderr).toContain("chmod: changing permissions of 't1': Operation not permitted");
    expect(out.sandbox_denied.map((d) => d.code)).toContain("not_permitted");
    const written = entries(s.root).filter((e) => /^(t[123]|d)(\/|$)/.test(e.path));
    // t3 was never created: an open that would make it setuid is refused whole.
    expect(written.map((e) => e.path).sort()).toEqual(["d", "d/e", "d/e/f", "t1", "t2"]);
    for (const e of written) expect(e).toEqual({ path: e.path, uid: NOBODY, special: 0 });
  });

  it("the host sees the sandbox's processes as an unprivileged user: no groups, no capabilities, no new privileges, the filter on", async () => {
    const marker = `1003.${parseInt(tag, 16)}`;
    const abort = new AbortController();
    const running = bash(`sleep ${marker}`, abort.signal).catch(() => null);
    let pid = "";
    // Poll (yielding, so the call can start) until the sandbox's sleep is there.
    while (pid === "") {
      await new Promise((r) => setTimeout(r, 20));
      pid = spawnSync("pgrep", ["-f", `^sleep ${marker}$`], { encoding: "utf8" })
        .stdout.trim()
        .split("\n")[0]!;
    }
    const status = Object.fromEntries(
      readFileSync(`/proc/${pid}/status`, "utf8")
        .split("\n")
        .map((l) => l.split(":\t"))
        .filter((kv) => kv.length === 2),
    ) as Record<string, string>;
    abort.abort();
    await running;
    expect(status.Uid!.split("\t")).toEqual([String(NOBODY), String(NOBODY), String(NOBODY), String(NOBODY)]);
    expect(status.Gid!.split("\t")).toEqual([String(NOBODY), String(NOBODY), String(NOBODY), String(NOBODY)]);
    expect(status.Groups!.trim()).toBe("");
    expect([status.CapEff, status.CapPrm, status.CapBnd, status.CapAmb]).toEqual([
      "0000000000000000",
      "0000000000000000",
      "0000000000000000",
      "0000000000000000",
    ]);
    expect([status.NoNewPrivs, status.Seccomp]).toEqual(["1", "2"]);
  });

  it("hands a root-owned workspace to the sandbox user once: hidden and read-only paths keep root, symlinks are not followed", async () => {
    const t = makeWorkspace("escape-priv-handover");
    try {
      t.write("src/a.ts", "a\n");
      t.write(".toolgate/state.db", "state\n");
      t.write(".git/config", "[core]\n");
      t.write(".git/HEAD", "ref: refs/heads/main\n");
      const outsideFile = t.write("../outside/root-file", "root's\n");
      symlinkSync(outsideFile, join(t.root, "link-out"));
      const told: string[] = [];
      const launcher = launcherChooser(createBubblewrap({ warn: (m) => told.push(m) }), false);
      const ws = { root: t.root, hidden: [join(t.root, ".toolgate")], readOnly: [join(t.root, ".git/config")] };
      const first = await executeBash(
        launcher,
        ws,
        { command: "echo x >> src/a.ts && echo y > .git/HEAD && touch new" },
        DEFAULT_BASH_LIMITS,
      );
      expect((first.output as unknown as BashOut).exit_code).toBe(0);
      const owner = (rel: string) => lstatSync(join(t.root, rel)).uid;
      expect([".", "src", "src/a.ts", ".git", ".git/HEAD", "new"].map(owner)).toEqual(Array(6).fill(NOBODY));
      expect([".toolgate", ".toolgate/state.db", ".git/config", "link-out"].map(owner)).toEqual([0, 0, 0, 0]);
      expect(lstatSync(outsideFile).uid).toBe(0);
      expect(told).toHaveLength(1);
      expect(told[0]).toMatch(
        /^\[toolgate\] toolgate runs as root, so its sandbox runs as uid 65534:65534 .* 5 entries owned by root now belong to 65534:65534 \(hidden and protected paths keep their owner, the repository's \.git folder only for the entries listed under it\)/,
      );
      await executeBash(launcher, ws, { command: "true" }, DEFAULT_BASH_LIMITS);
      expect(told).toHaveLength(1);
    } finally {
      t.cleanup();
    }
  });

  it("the handover leaves a hard-linked file alone: a second name of a root-owned file outside the workspace keeps root its owner", async () => {
    const t = makeWorkspace("escape-priv-hardlink");
    try {
      // On the same file system as the workspace, as /etc/shadow would be; root's, 0600.
      const secret = t.write("../outside/shadow", "root:secret:\n");
      chmodSync(secret, 0o600);
      linkSync(secret, join(t.root, "innocent.txt"));
      t.write("src/a.ts", "a\n");
      const told: string[] = [];
      const r = await executeBash(
        launcherChooser(createBubblewrap({ warn: (m) => told.push(m) }), false),
        t.root,
        { command: "cat innocent.txt; echo evil > innocent.txt; echo END" },
        DEFAULT_BASH_LIMITS,
      );
      const out = r.output as unknown as BashOut;
      expect(out.stdout).toBe("END\n");
      expect(out.stderr).toContain("innocent.txt: Permission denied");
      expect([lstatSync(secret).uid, lstatSync(secret).gid, lstatSync(secret).mode & 0o777]).toEqual([0, 0, 0o600]);
      expect(readFileSync(secret, "utf8")).toBe("root:secret:\n");
      expect([lstatSync(join(t.root, "src/a.ts")).uid, lstatSync(join(t.root, "src")).uid]).toEqual([NOBODY, NOBODY]);
      expect(told[0]).toContain(
        "; 1 files with more than one hard link keep theirs, since another of their names may be outside the workspace",
      );
    } finally {
      t.cleanup();
    }
  });

  it("grep_search runs as the sandbox user too: a workspace only root could read is handed over at its first search", async () => {
    const t = makeWorkspace("escape-priv-grep");
    try {
      t.write("a.txt", "needle\n");
      chmodSync(t.root, 0o700);
      chmodSync(join(t.root, "a.txt"), 0o600);
      const tools = new Map(
        createCodingCatalog({ workspace: t.root, sandbox: { warn: () => {} } }).map((x) => [x.name, x]),
      );
      const out = (
        (await tools.get("grep_search")!.handler({ pattern: "needle", path: t.root }, ctx())) as {
          output: { total: number };
        }
      ).output;
      expect(out.total).toBe(1);
      expect([lstatSync(t.root).uid, lstatSync(join(t.root, "a.txt")).uid]).toEqual([NOBODY, NOBODY]);
    } finally {
      t.cleanup();
    }
  });

  it("runs as the workspace's owner when that is not root, and as the uid given; never as root", async () => {
    const t = makeWorkspace("escape-priv-owner");
    try {
      chownSync(t.root, 4242, 4343);
      const own = await executeBash(
        launcherChooser(createBubblewrap({ warn: () => {} }), false),
        t.root,
        { command: "id -u; id -g; id -G; touch mine" },
        DEFAULT_BASH_LIMITS,
      );
      expect((own.output as unknown as BashOut).stdout).toBe("4242\n4343\n4343\n");
      expect(lstatSync(join(t.root, "mine")).uid).toBe(4242);
      const given = await executeBash(
        launcherChooser(createBubblewrap({ user: { uid: 5151, gid: 5252 }, warn: () => {} }), false),
        t.root,
        { command: "id -u; id -g" },
        DEFAULT_BASH_LIMITS,
      );
      expect((given.output as unknown as BashOut).stdout).toBe("5151\n5252\n");
      expect(() => createBubblewrap({ user: { uid: 0, gid: 0 } })).toThrow(
        'sandbox user must be { uid, gid } with both integers from 1 to 4294967294 (0 is root, which would give the sandbox host privilege); received {"uid":0,"gid":0}; example { uid: 65534, gid: 65534 }',
      );
      expect(() =>
        createCodingCatalog({ workspace: t.root, sandbox: { launcher: createBubblewrap(), user: { uid: 1, gid: 1 } } }),
      ).toThrow(
        "sandbox.user configure the default launcher, and sandbox.launcher replaces it; pass them to createBubblewrap({ ... }) instead",
      );
    } finally {
      t.cleanup();
    }
  });
});

describe.runIf(ready && asRoot)("escape suite: host privilege, toolgate as an unprivileged user", () => {
  it("no setuid file, no nested user namespace, /proc/sys read-only; the files are the user's", async () => {
    const t = makeWorkspace("escape-priv-nobody");
    try {
      handToNobody(t.base, t.root);
      const r = await bashAsNobody(t.root, PROBES);
      expect(r.error).toBeUndefined();
      expect(r.output!.stdout).not.toMatch(/WROTE-SYSCTL|OPENED-SYSRQ|NEW-USERNS/);
      expect(r.output!.stdout).toContain("WROTE-FILES");
      expect(r.output!.stderr).toContain("chmod: changing permissions of 't1': Operation not permitted");
      for (const e of entries(t.root)) expect(e).toEqual({ path: e.path, uid: NOBODY, special: 0 });
    } finally {
      t.cleanup();
    }
  });
});
