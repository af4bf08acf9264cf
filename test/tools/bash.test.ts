import { existsSync, mkdirSync, readFileSync, rmdirSync } from "node:fs";
import { afterAll, describe, expect, it } from "vitest";
import { NoEffectError } from "../../src/core/errors.js";
import { DEFAULT_BASH_LIMITS, executeBash, launcherChooser, type BashLimits } from "../../src/tools/bash.js";
import { createBubblewrap } from "../../src/tools/sandbox/bubblewrap.js";
import { sandboxEnv, type SandboxLauncher } from "../../src/tools/sandbox/launcher.js";
import { markedTree, pollUntil } from "../support/procs.js";
import { binaryAvailable } from "../support/require.js";
import { makeWorkspace, stable } from "./fixtures.js";

const s = makeWorkspace("bash");
afterAll(() => s.cleanup());

const bwrap = launcherChooser(createBubblewrap(), false);
const run = (command: string, timeout_ms = 20_000, limits: BashLimits = DEFAULT_BASH_LIMITS) =>
  executeBash(bwrap, s.root, { command, timeout_ms }, limits);
type Out = {
  exit_code: number | null;
  signal: string | null;
  timed_out: boolean;
  duration_ms: number;
  stdout: string;
  stderr: string;
  stdout_omitted_bytes: number;
  sandbox_denied: { code: string }[];
};
const out = (r: { output: unknown }) => r.output as Out;

describe.runIf(binaryAvailable("bwrap"))("bash_execute", () => {
  it("captures stdout and stderr separately with exit status and duration", async () => {
    const r = await run("echo out; echo err >&2; exit 3");
    expect(out(r)).toMatchObject({
      exit_code: 3,
      signal: null,
      timed_out: false,
      stdout: "out\n",
      stderr: "err\n",
      sandbox_denied: [],
    });
    expect(out(r).duration_ms).toBeGreaterThanOrEqual(0);
    expect(r.text!.replace(/duration_ms \d+/, "duration_ms N")).toMatchInlineSnapshot(`
      "exit_code 3 · duration_ms N · sandbox bubblewrap
      [stdout]
      out
      [stderr]
      err"
    `);
  });

  it("runs in the workspace, and its writes there persist", async () => {
    const r = await run("pwd; echo made > made.txt");
    expect(out(r).stdout).toBe(`${s.root}\n`);
    expect(readFileSync(`${s.root}/made.txt`, "utf8")).toBe("made\n");
  });

  it("gives each call a fresh /tmp and HOME", async () => {
    await run("echo a > /tmp/left-behind; echo b > $HOME/left-behind");
    const r = await run("ls /tmp $HOME");
    expect(out(r).stdout).not.toContain("left-behind");
  });

  it("reports the signal that ended the command", async () => {
    const r = await run("kill -TERM $$");
    expect(out(r)).toMatchObject({ exit_code: 143, signal: "SIGTERM" });
  });

  it("bounds each stream, keeping head and tail with a marker", async () => {
    const r = await run("seq 1 100000", 20_000, { ...DEFAULT_BASH_LIMITS, output_bytes: 4096, output_tokens: 200 });
    const o = out(r);
    expect(o.stdout.startsWith("1\n2\n3\n")).toBe(true);
    expect(o.stdout.endsWith("99999\n100000\n")).toBe(true);
    expect(o.stdout).toMatch(/\n\[… \d+ bytes cut from the middle of stdout \(588895 bytes in all\) …\]\n/);
    expect(o.stdout_omitted_bytes).toBeGreaterThan(580_000);
    expect(r.truncated).toEqual({ omitted: o.stdout_omitted_bytes, unit: "bytes" });
  });

  it("stops a write past the file size limit and says the sandbox did it", async () => {
    const r = await run("head -c 3000000 /dev/zero > big.bin", 20_000, {
      ...DEFAULT_BASH_LIMITS,
      max_file_bytes: 1024 * 1024,
    });
    expect(out(r)).toMatchObject({ signal: "SIGXFSZ", sandbox_denied: [{ code: "file_size_limit" }] });
    expect(r.text).toContain(
      "[sandbox denied: the sandbox's file size limit (1048576 bytes per file) stopped a write]",
    );
  });

  it("kills the command at its timeout and says so; nothing it started outlives the call, not even a process in a session of its own", async () => {
    // 3 s, not the 1 s minimum: "started" must be printed before the kill even when bwrap is slow to start on a loaded
    // machine.
    const tree = markedTree();
    const pending = run(`echo started; ${tree.escapee} sleep 30`, 3000);
    const ns = await tree.running(pending);
    const r = await pending;
    expect(out(r)).toMatchObject({ timed_out: true, exit_code: null, signal: "SIGKILL", stdout: "started\n" });
    expect(r.text!.replace(/duration_ms \d+/, "duration_ms N")).toMatchInlineSnapshot(`
      "timed out after 3000 ms: the whole process tree was killed · duration_ms N · sandbox bubblewrap
      [stdout]
      started
      [raise timeout_ms (up to 300000) or run a smaller step; background processes do not outlive the call]"
    `);
    await tree.expectGone(ns);
  });

  it("refuses when bubblewrap is missing, naming what to install; nothing runs", async () => {
    const missing = launcherChooser(createBubblewrap({ binary: "/nonexistent/bwrap" }), false);
    const err = await executeBash(missing, s.root, { command: "touch ran.txt" }, DEFAULT_BASH_LIMITS).catch(
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(NoEffectError);
    expect(existsSync(`${s.root}/ran.txt`)).toBe(false);
    expect(`${(err as NoEffectError).code}: ${(err as Error).message}`).toMatchInlineSnapshot(
      `"sandbox_unavailable: bash_execute needs bubblewrap, and /nonexistent/bwrap was not found on PATH; install it (Debian/Ubuntu: apt-get install -y bubblewrap; Fedora: dnf install bubblewrap; Alpine: apk add bubblewrap). Nothing was run. (The operator can opt out of the sandbox explicitly with allowUnsandboxed, at the risk of running commands on the host.)"`,
    );
  });

  it("refuses when the envelope cannot create its namespaces", async () => {
    // /bin/false stands in for a bwrap that exits non-zero at start (user namespaces off).
    const broken = launcherChooser(createBubblewrap({ binary: "/bin/false" }), false);
    const err = await executeBash(broken, s.root, { command: "true" }, DEFAULT_BASH_LIMITS).catch((e: unknown) => e);
    // Run as root bwrap needs no user namespace, so the hint differs.
    const hint =
      process.geteuid?.() === 0
        ? "Run as root, bwrap needs mount, PID and network namespaces and seccomp: check that the kernel allows them here (a container may need --privileged or a seccomp profile that lets bwrap start)"
        : "bubblewrap needs user namespaces: enable them (sysctl kernel.unprivileged_userns_clone=1 and user.max_user_namespaces>0; on Ubuntu 24.04+ also kernel.apparmor_restrict_unprivileged_userns=0), or run toolgate where they are allowed";
    expect(stable((err as Error).message, s)).toBe(
      `bash_execute's sandbox (bubblewrap) could not start: exit status 1. ${hint}. Nothing was run. (The operator can opt out of the sandbox explicitly with allowUnsandboxed, at the risk of running commands on the host.)`,
    );
  });

  it("refuses when a read-only path it was given does not exist, naming it; nothing runs", async () => {
    const absent = `${s.root}-absent-toolchain`;
    const chooser = launcherChooser(createBubblewrap({ readOnlyPaths: ["/usr", absent] }), false);
    const err = await executeBash(chooser, s.root, { command: "touch ran.txt" }, DEFAULT_BASH_LIMITS).catch(
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(NoEffectError);
    expect(existsSync(`${s.root}/ran.txt`)).toBe(false);
    expect((err as Error).message).toBe(
      `bash_execute's sandbox (bubblewrap) could not start: bwrap: Can't find source path ${absent}: No such file or directory. createBubblewrap's readOnlyPaths names ${JSON.stringify(absent)}, which does not exist on the host: create it, or take it out of readOnlyPaths. Nothing was run. (The operator can opt out of the sandbox explicitly with allowUnsandboxed, at the risk of running commands on the host.)`,
    );
  });

  it("runs unsandboxed only with the explicit opt-out, and the observation says so", async () => {
    const optOut = launcherChooser(createBubblewrap({ binary: "/nonexistent/bwrap" }), true);
    const r = await executeBash(optOut, s.root, { command: "echo on-host" }, DEFAULT_BASH_LIMITS);
    expect(out(r)).toMatchObject({ stdout: "on-host\n", sandbox: "none" });
    expect(r.text).toContain("sandbox NONE (unsandboxed opt-out)");
  });

  it("an aborted call kills the tree and fails (effect unknown)", async () => {
    const tree = markedTree();
    const controller = new AbortController();
    const pending = executeBash(
      bwrap,
      s.root,
      { command: `${tree.escapee} sleep 30`, timeout_ms: 20_000 },
      DEFAULT_BASH_LIMITS,
      { signal: controller.signal },
    ).catch((e: unknown) => e);
    // Aborted once the command is seen running, not after a guessed delay.
    const ns = await tree.running(pending);
    controller.abort();
    const err = await pending;
    expect(err).toBeInstanceOf(Error);
    expect(err).not.toBeInstanceOf(NoEffectError);
    expect((err as Error).message).toMatch(
      /^bash_execute was aborted by the caller after \d+ ms; its whole process tree was killed, and it may have done part of its work$/,
    );
    await tree.expectGone(ns);
  });

  it("a sandbox whose setup fails before the command starts refuses (NoEffectError: nothing ran), even when it exits like a command", async () => {
    // The readiness channel is the only witness: the launcher's own stderr and exit status prove nothing.
    const fake = (script: string): SandboxLauncher => ({
      name: "fake",
      isolated: true,
      probe: () => Promise.resolve(null),
      plan: () =>
        Promise.resolve({
          file: "/bin/sh",
          args: ["-c", script],
          env: sandboxEnv("/tmp"),
          cwd: s.root,
          extraFds: [{ ready: true }],
        }),
    });
    const joinFailed =
      "echo 'toolgate-cgroup: 1: cannot create /sys/fs/cgroup/pids/toolgate/run-1-1/cgroup.procs: Permission denied' >&2; exit 125";
    const err = await executeBash(
      launcherChooser(fake(joinFailed), false),
      s.root,
      { command: "x" },
      DEFAULT_BASH_LIMITS,
    ).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(NoEffectError);
    expect(`${(err as NoEffectError).code}: ${(err as Error).message}`).toMatchInlineSnapshot(
      `"sandbox_unavailable: bash_execute's sandbox could not start the command: toolgate-cgroup: 1: cannot create /sys/fs/cgroup/pids/toolgate/run-1-1/cgroup.procs: Permission denied; nothing was run. Fix: let toolgate's user write that cgroup folder (or remove it if an earlier run as root created it), or create the catalog with sandbox cgroups "off" to bound runs by ulimit alone."`,
    );
    // A command that started (it wrote the byte) and then printed the same: its own exit status.
    const started = await executeBash(
      launcherChooser(fake(`printf x >&3; exec 3>&-; ${joinFailed}`), false),
      s.root,
      { command: "x" },
      DEFAULT_BASH_LIMITS,
    );
    expect(out(started).exit_code).toBe(125);
  });

  it.runIf(process.geteuid?.() === 0)(
    "a real cgroup the run cannot join refuses with the key released (an empty cpuset takes no tasks)",
    async () => {
      const base = `/sys/fs/cgroup/cpuset/toolgate-test-${process.pid}`;
      mkdirSync(base, { recursive: true });
      try {
        const launcher = launcherChooser(
          createBubblewrap({ cgroups: { cpu: { dir: base, version: 1 } }, warn: () => {} }),
          false,
        );
        const err = await executeBash(launcher, s.root, { command: "touch joined.txt" }, DEFAULT_BASH_LIMITS).catch(
          (e: unknown) => e,
        );
        expect(err).toBeInstanceOf(NoEffectError);
        expect((err as Error).message).toMatch(
          new RegExp(
            `^bash_execute's sandbox could not start the command: cannot join the cgroup: writing to ${base}/run-\\d+-\\d+/cgroup\\.procs failed \\(ENOSPC\\); nothing was run\\. Fix: `,
          ),
        );
        expect(existsSync(`${s.root}/joined.txt`)).toBe(false);
      } finally {
        // The run's folder is removed in the background; wait for it before the base.
        const removed = await pollUntil(() => {
          try {
            rmdirSync(base);
            return true;
          } catch {
            return false;
          }
        }, 10_000);
        expect(removed, `${base} and its run folder removed`).toBe(true);
      }
    },
  );
});
