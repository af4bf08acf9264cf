/**
 * The bubblewrap launcher: the envelope of bash_execute and of grep_search's ripgrep.
 *
 * What the command sees (decided here, documented for operators):
 * - `/usr` read-only, and `/bin`, `/sbin`, `/lib*` as on the host (symlinks recreated,
 *   directories bound read-only);
 * - from `/etc` only what bash and common tools need to start: the dynamic linker cache,
 *   `/etc/alternatives` (Debian's tool symlinks), `passwd`/`group` (names for `ls -l`, git),
 *   `localtime`, `nsswitch.conf`, `gitconfig`. Nothing else: `/etc` may hold secrets;
 * - the workspace read-write at its own path (the working directory), hidden paths under an
 *   empty read-only tmpfs, read-only paths bound read-only with their ancestors pinned
 *   (protect.ts); nothing else writable but fresh, sized tmpfs mounts at `/tmp` and HOME
 *   (`/home/sandbox`), both gone after the call;
 * - its own `/proc`, with `/proc/sys` and `/proc/sysrq-trigger` read-only; the root read-only;
 * - new user, PID, network, IPC, UTS and cgroup namespaces: no network at all, only a loopback of
 *   its own; no host process visible; no further user namespaces (`--disable-userns`); with an
 *   egress proxy for the run, its two unix sockets at /run/toolgate and a forwarder from the
 *   loopback's proxy ports to them (egress/bridge.ts), the only way out;
 * - the seccomp filter of seccomp.ts; every capability dropped, no new privileges;
 *   `--die-with-parent` (killing bwrap kills the tree), `--new-session` (no TIOCSTI into the
 *   caller's terminal), and the allowlisted environment only;
 * - as an unprivileged host user: when toolgate is root, setpriv switches to the sandbox user
 *   (user.ts) before bwrap starts, and a root-owned workspace is handed to that user once
 *   (handover.ts);
 * - the run's bounds (launcher.ts EnvelopeLimits): per-run cgroups where they can be created
 *   (cgroup.ts; bwrap waits after its setup until toolgate has moved it in, so nothing the command
 *   starts is outside), `ulimit`
 *   always, and a watch on bytes written, CPU time and protected paths (monitor.ts).
 */
import { closeSync, existsSync, statSync } from "node:fs";
import { join } from "node:path";
import { NoEffectError } from "../../core/errors.js";
import { HOME, pathArgs, SECCOMP_FD, setprivArgs, systemArgs, tmpArgs } from "./bwrap-args.js";
import { admit, missingBinary, missingSetpriv, spawnOnce, unsupportedArch } from "./bwrap-process.js";
import { createRunCgroup, findCgroupBases, type CgroupBases } from "./cgroup.js";
import { handOver } from "./handover.js";
import { bridgeArgs, bridgePrelude, nodeInside } from "./egress/bridge.js";
import {
  limitedArgv,
  limitedBash,
  sandboxEnv,
  type EnvelopeRun,
  type ExtraFd,
  type LaunchPlan,
  type SandboxLauncher,
} from "./launcher.js";
import { diskUsed, startMonitor, type Monitor } from "./monitor.js";
import { changedPaths, openWorkspaceRoot, protect } from "./protect.js";
import { RESTORE_SCRIPT, restoreProtected } from "./restore.js";
import { seccompArch, seccompProgram } from "./seccomp.js";
import { checkUserOption, NOBODY, sandboxUser, type SandboxUser } from "./user.js";

export interface BubblewrapOptions {
  /** The bwrap binary. Default "bwrap" (from PATH). */
  binary?: string;
  /** setpriv, used to switch users when toolgate is root. Default "setpriv" (from PATH; util-linux). */
  setpriv?: string;
  /** Extra host directories bound read-only at the same path (e.g. "/opt/toolchain"). Default none. */
  readOnlyPaths?: string[];
  /**
   * The host user the sandbox runs as when toolgate is root (refused when it is not: the sandbox
   * then runs as toolgate's own user). Default: the workspace's owner when not root, else
   * nobody (65534:65534). Never 0.
   */
  user?: SandboxUser;
  /**
   * When toolgate is root and the workspace is not the sandbox user's: hand the entries root owns
   * to the sandbox user once (said once through `warn`). Default true; false leaves ownership alone
   * (the sandbox can then write only what that user may).
   */
  chownWorkspace?: boolean;
  /**
   * Per-run cgroups: "auto" (default) finds the usable ones once, "off" bounds runs by ulimit
   * alone, or pass bases found by `findCgroupBases`.
   */
  cgroups?: "auto" | "off" | CgroupBases;
  /** Where the one-time notices go (workspace handover, unusable cgroups). Default: process.stderr. */
  warn?: (message: string) => void;
}

/** Room on top of max_processes for bwrap, its init and the shell that sets the limits. */
const LAUNCHER_TASKS = 4;

/** Creates the bubblewrap launcher. The host layout is read once, here. */
export function createBubblewrap(options: BubblewrapOptions = {}): SandboxLauncher {
  const binary = options.binary ?? "bwrap";
  const setpriv = options.setpriv ?? "setpriv";
  const euid = process.geteuid?.() ?? 0;
  const asRoot = euid === 0;
  const chosenUser = checkUserOption(options.user, euid);
  const warn = options.warn ?? ((m: string) => void process.stderr.write(m + "\n"));
  const system = systemArgs(options.readOnlyPaths ?? [], asRoot);
  const arch = seccompArch();
  const filter = arch === null ? null : seccompProgram(arch);
  let bases: CgroupBases | undefined =
    typeof options.cgroups === "object" ? options.cgroups : options.cgroups === "off" ? {} : undefined;
  const cgroupBases = () => (bases ??= findCgroupBases({ warn }));
  const users = new Map<string, SandboxUser | null>();
  const userFor = (workspace: string) => {
    if (!users.has(workspace)) users.set(workspace, sandboxUser(workspace, chosenUser, euid));
    return users.get(workspace)!;
  };
  const handovers = new Map<string, Promise<void>>();
  let probed: Promise<string | null> | undefined;

  /** The process for bwrap `args` running `inner` (as `user` when root mounts). */
  const command = (
    args: string[],
    inner: readonly string[],
    user: SandboxUser | null,
  ): { file: string; args: string[] } => ({
    file: binary,
    args: [...args, "--", ...(user ? setprivArgs(setpriv, user) : []), ...inner],
  });

  // At the workspace's first run, reading or not: grep_search runs as the same user, which must be able to read it.
  const handoverOnce = (run: EnvelopeRun, user: SandboxUser | null): Promise<void> => {
    if (!user || options.chownWorkspace === false || euid !== 0) return Promise.resolve();
    let pending = handovers.get(run.workspace);
    if (!pending) {
      pending = (async () => {
        if (statSync(run.workspace).uid === user.uid) return;
        // The repository's .git is read-only as a whole, but its ordinary content (objects, refs,
        // index) is handed over like the rest, so that an operator who lets the agent commit
        // later finds it writable; the entries listed under it (hooks, config) keep their owner.
        const gitDir = join(run.workspace, ".git");
        const keep = [...(run.hidden ?? []), ...(run.readOnly ?? []).filter((p) => p !== gitDir)];
        const n = await handOver(run.workspace, user, keep);
        warn(
          `[toolgate] toolgate runs as root, so its sandbox runs as uid ${user.uid}:${user.gid} (nothing the sandbox makes can act as root on the host). ` +
            `The workspace ${run.workspace} was root's: ${n.changed} entries owned by root now belong to ${user.uid}:${user.gid} (hidden and protected paths keep their owner, the repository's .git folder only for the entries listed under it${n.linked ? `; ${n.linked} files with more than one hard link keep theirs, since another of their names may be outside the workspace` : ""}${n.failed ? `; ${n.failed} could not be changed` : ""}). ` +
            "Choose the uid with the sandbox user option, or keep ownership with chownWorkspace: false (the sandbox then writes only what that uid may).",
        );
      })();
      handovers.set(run.workspace, pending);
    }
    return pending;
  };

  /** Runs RESTORE_SCRIPT inside a bare envelope of the workspace, as the sandbox user. */
  const cleanup = (workspace: string, user: SandboxUser | null) => async (scriptArgs: string[]) => {
    const root = openWorkspaceRoot(workspace);
    const args = [
      ...system,
      ...tmpArgs(1 << 20, asRoot),
      ...pathArgs(workspace, asRoot),
      "--bind-fd",
      String(SECCOMP_FD + 1),
      workspace,
      "--remount-ro",
      "/",
      "--chdir",
      workspace,
      "--seccomp",
      String(SECCOMP_FD),
    ];
    const c = command(args, ["/bin/sh", "-c", RESTORE_SCRIPT, "toolgate-restore", ...scriptArgs], user);
    const { code, stderr } = await spawnOnce(c.file, c.args, filter!, [root], workspace).finally(() => closeSync(root));
    if (code !== 0) throw new Error(stderr.trim() || `exit status ${code}`);
  };

  const plan = async (run: EnvelopeRun): Promise<LaunchPlan> => {
    if (filter === null) throw new NoEffectError(unsupportedArch(), "sandbox_unavailable");
    const user = userFor(run.workspace);
    await handoverOnce(run, user);
    const writable = run.readOnlyWorkspace !== true;
    const found = cgroupBases();
    const cgroup =
      Object.keys(found).length > 0
        ? createRunCgroup(found, {
            maxTasks: run.limits.max_processes + LAUNCHER_TASKS,
            memoryBytes: run.limits.max_memory_bytes,
          })
        : null;
    const bash = run.argv === undefined;
    // The child's descriptors: 3 the filter, then the readiness channel (bash), bwrap's info and
    // block channels (with cgroups), the workspace root and the protected paths.
    const readyFd = SECCOMP_FD + 1;
    const infoFd = SECCOMP_FD + (bash ? 2 : 1);
    const blockFd = infoFd + 1;
    const rootFd = cgroup ? blockFd + 1 : infoFd;
    let root: number | undefined;
    let protection;
    try {
      root = openWorkspaceRoot(run.workspace);
      protection = protect(run.workspace, run.hidden ?? [], run.readOnly ?? [], writable, rootFd + 1);
    } catch (err) {
      if (root !== undefined) closeSync(root);
      cgroup?.finish();
      throw err;
    }
    const release = () => {
      protection.release();
      if (root !== undefined) closeSync(root);
      root = undefined;
    };
    // A root sandbox's user may have other processes on the host, all counted by RLIMIT_NPROC: there the pids cgroup
    // bounds processes.
    const addressSpace = found.memory === undefined;
    const node = nodeInside();
    const egress = bash && run.egress ? run.egress : null;
    const inner = bash
      ? limitedBash(run, {
          readyFd,
          addressSpace,
          processes: !(user && found.pids),
          ...(egress ? { prelude: bridgePrelude(node.path) } : {}),
        })
      : limitedArgv(run, run.argv!, { addressSpace });
    const args = [
      ...system,
      ...tmpArgs(run.limits.max_tmp_bytes, asRoot),
      ...pathArgs(run.workspace, asRoot),
      writable ? "--bind-fd" : "--ro-bind-fd",
      String(rootFd),
      run.workspace,
      ...protection.args,
      ...(egress ? bridgeArgs(egress, asRoot, node) : []),
      "--remount-ro",
      "/",
      "--chdir",
      run.workspace,
      "--seccomp",
      String(SECCOMP_FD),
      // With cgroups bwrap's child stops after its setup, before it forks the command, until toolgate has moved it in.
      ...(cgroup ? ["--info-fd", String(infoFd), "--block-fd", String(blockFd)] : []),
    ];
    const extraFds: ExtraFd[] = [
      { input: filter },
      ...(bash ? [{ ready: true } as const] : []),
      ...(cgroup ? [{ pipe: true } as const, { pipe: true } as const] : []),
      { fd: root! },
      ...protection.fds.map((fd) => ({ fd })),
    ];
    let monitor: Monitor | undefined;
    let setupError: string | null = null;
    return {
      ...command(args, inner, user),
      env: sandboxEnv(HOME),
      cwd: run.workspace,
      extraFds,
      started(pid, stop, pipes) {
        release();
        if (cgroup) {
          const [info, block] = [pipes[infoFd - SECCOMP_FD]!, pipes[blockFd - SECCOMP_FD]!];
          admit(cgroup, info, block, (why) => {
            setupError = why;
            stop("setup");
          });
        }
        monitor = startMonitor({
          rootPid: pid,
          membersFile: cgroup?.membersFile ?? null,
          cpuNanos: cgroup && found.cpu ? cgroup.cpuNanos : null,
          maxWriteBytes: run.limits.max_write_bytes,
          maxCpuSeconds: run.limits.max_cpu_seconds,
          watched: protection.watched,
          stop,
          diskUsed: writable ? () => diskUsed(run.workspace) : null,
        });
      },
      async finish({ stopped, ran }) {
        release();
        const seen = monitor?.end() ?? { written_bytes: 0, cpu_seconds: 0 };
        const kernel = cgroup?.finish() ?? { process_limit_hit: false, memory_limit_hit: false, cpu_nanos: null };
        const changed = ran && writable ? changedPaths(protection.watched) : [];
        const restored = changed.length
          ? await restoreProtected(changed, cleanup(run.workspace, user))
          : { changed: [], unrestored: [] };
        const cpuSeconds = kernel.cpu_nanos !== null ? kernel.cpu_nanos / 1e9 : seen.cpu_seconds;
        return {
          process_limit_hit: kernel.process_limit_hit,
          memory_limit_hit: kernel.memory_limit_hit,
          cpu_limit_hit: stopped === "cpu_limit" || cpuSeconds > run.limits.max_cpu_seconds,
          disk_limit_hit: stopped === "disk_limit",
          written_bytes: seen.written_bytes,
          protected_changed: restored.changed,
          protected_unrestored: restored.unrestored,
          setup_error: setupError,
        };
      },
    };
  };

  return {
    name: "bubblewrap",
    isolated: true,
    plan,
    probe() {
      probed ??= (async () => {
        if (filter === null) return unsupportedArch();
        // The uid switch as a run would do it (a root toolgate), with the filter loaded: the only reliable test that
        // all of it works here.
        const user = asRoot ? (chosenUser ?? NOBODY) : null;
        const c = command(
          [
            ...system,
            ...tmpArgs(1 << 20, asRoot),
            "--remount-ro",
            "/",
            "--chdir",
            "/",
            "--seccomp",
            String(SECCOMP_FD),
          ],
          ["true"],
          user,
        );
        const { code, stderr, error } = await spawnOnce(c.file, c.args, filter);
        if (error?.code === "ENOENT") return missingBinary(binary);
        if (error) return `bash_execute could not start ${c.file}: ${error.message}`;
        if (code === 0) return null;
        if (user && /setpriv/.test(stderr) && /No such file/.test(stderr)) return missingSetpriv(setpriv);
        const said = `bash_execute's sandbox (bubblewrap) could not start: ${stderr.trim() || `exit status ${code}`}. `;
        // A read-only path the operator named that is not there: bwrap cannot bind it, and that is the whole cause.
        const absent = (options.readOnlyPaths ?? []).filter((path) => !existsSync(path));
        if (absent.length > 0)
          return (
            said +
            `createBubblewrap's readOnlyPaths names ${absent.map((p) => JSON.stringify(p)).join(", ")}, which ${absent.length === 1 ? "does" : "do"} not exist on the host: create ${absent.length === 1 ? "it" : "them"}, or take ${absent.length === 1 ? "it" : "them"} out of readOnlyPaths`
          );
        // As root bwrap needs no user namespace; elsewhere it is the usual reason.
        if (asRoot)
          return (
            said +
            "Run as root, bwrap needs mount, PID and network namespaces and seccomp: check that the kernel allows them here (a container may need --privileged or a seccomp profile that lets bwrap start)"
          );
        return (
          said +
          "bubblewrap needs user namespaces: enable them (sysctl kernel.unprivileged_userns_clone=1 and user.max_user_namespaces>0; " +
          "on Ubuntu 24.04+ also kernel.apparmor_restrict_unprivileged_userns=0), or run toolgate where they are allowed"
        );
      })();
      return probed;
    },
  };
}
