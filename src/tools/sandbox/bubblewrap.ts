/**
 * The bubblewrap launcher: the default envelope for bash_execute.
 *
 * What the command sees (decided here, documented for operators):
 * - `/usr` read-only, and `/bin`, `/sbin`, `/lib*` as on the host (symlinks recreated,
 *   directories bound read-only);
 * - from `/etc` only what bash and common tools need to start: the dynamic linker cache,
 *   `/etc/alternatives` (Debian's tool symlinks), `passwd`/`group` (names for `ls -l`, git),
 *   `localtime`, `nsswitch.conf`, `gitconfig`. Nothing else: `/etc` may hold secrets;
 * - the workspace read-write at its own path (the working directory), except toolgate's own
 *   state folder (`.toolgate/`), covered by an empty read-only tmpfs; nothing else writable
 *   but fresh tmpfs mounts at `/tmp` and HOME (`/home/sandbox`), both gone after the call;
 * - the root made read-only, so writes anywhere else fail with EROFS;
 * - new user, PID, network, IPC, UTS and cgroup namespaces (`--unshare-all`): no network at
 *   all, only a loopback of its own; no host process visible;
 * - at most `max_processes` processes: a pids cgroup per run where one can be created (pids.ts),
 *   and `ulimit -u` always;
 * - every capability dropped, `--die-with-parent` (killing bwrap kills the tree), `--new-session`
 *   (no TIOCSTI into the caller's terminal), and the allowlisted environment only.
 */
import { spawn } from "node:child_process";
import { existsSync, lstatSync, readlinkSync } from "node:fs";
import { createRunCgroup, findPidsCgroupBase } from "./pids.js";
import { limitedBash, sandboxEnv, type EnvelopeRun, type LaunchPlan, type SandboxLauncher } from "./launcher.js";

export interface BubblewrapOptions {
  /** The bwrap binary. Default "bwrap" (from PATH). */
  binary?: string;
  /** Extra host directories bound read-only at the same path (e.g. "/opt/toolchain"). Default none. */
  readOnlyPaths?: string[];
  /**
   * Folder for per-run pids cgroups (pids.ts), null for none. Default: found from
   * /proc/self/mountinfo where writable. Without one, only `ulimit -u` bounds processes,
   * and the kernel does not apply that to root.
   */
  pidsCgroup?: string | null;
}

const HOME = "/home/sandbox";
const SYSTEM_DIRS = ["/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"];
const ETC_FILES = ["/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/ld.so.conf.d", "/etc/alternatives", "/etc/passwd", "/etc/group", "/etc/localtime", "/etc/nsswitch.conf", "/etc/gitconfig"];

/** Creates the bubblewrap launcher. The host layout is read once, here. */
export function createBubblewrap(options: BubblewrapOptions = {}): SandboxLauncher {
  const binary = options.binary ?? "bwrap";
  const base = baseArgs(options.readOnlyPaths ?? []);
  let probed: Promise<string | null> | undefined;

  const cgroupBase = options.pidsCgroup === undefined ? findPidsCgroupBase() : options.pidsCgroup;

  const plan = (run: EnvelopeRun): LaunchPlan => {
    const hide = (run.hidden ?? []).filter((p) => existsSync(p)).flatMap((p) => ["--tmpfs", p, "--remount-ro", p]);
    const args = [...base, "--bind", run.workspace, run.workspace, ...hide, "--remount-ro", "/", "--chdir", run.workspace, "--", ...limitedBash(run)];
    const common = { env: sandboxEnv(HOME), cwd: run.workspace };
    if (cgroupBase === null) return { file: binary, args, ...common };
    // bwrap, its init and the shell count too: room for them on top of the command's limit.
    const cgroup = createRunCgroup(cgroupBase, run.limits.max_processes + 4);
    // The shell joins the cgroup, then becomes bwrap: nothing starts outside the limit.
    return {
      file: "/bin/sh",
      args: ["-c", 'echo $$ > "$1" || exit 125; shift; exec "$@"', "toolgate-cgroup", cgroup.procsFile, binary, ...args],
      ...common,
      finish: async () => ({ process_limit_hit: await cgroup.finish() }),
    };
  };

  return {
    name: "bubblewrap",
    isolated: true,
    plan,
    probe() {
      probed ??= probe(binary, base);
      return probed;
    },
  };
}

function baseArgs(readOnlyPaths: string[]): string[] {
  const args = ["--unshare-all", "--die-with-parent", "--new-session", "--cap-drop", "ALL", "--clearenv"];
  for (const [k, v] of Object.entries(sandboxEnv(HOME))) args.push("--setenv", k, v);
  args.push("--ro-bind", "/usr", "/usr");
  for (const dir of SYSTEM_DIRS) {
    const stat = lstatOrNull(dir);
    if (stat?.isSymbolicLink()) args.push("--symlink", readlinkSync(dir), dir);
    else if (stat?.isDirectory()) args.push("--ro-bind", dir, dir);
  }
  for (const file of ETC_FILES) if (existsSync(file)) args.push("--ro-bind", file, file);
  for (const dir of readOnlyPaths) args.push("--ro-bind", dir, dir);
  // tmpfs mounts come before the workspace bind, so a workspace under /tmp stays visible.
  args.push("--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp", "--tmpfs", HOME);
  return args;
}

function lstatOrNull(path: string) {
  try {
    return lstatSync(path);
  } catch {
    return null;
  }
}

/** Starts `bwrap … true` once: the only reliable test that namespaces can be created here. */
function probe(binary: string, base: string[]): Promise<string | null> {
  return new Promise((done) => {
    const child = spawn(binary, [...base, "--remount-ro", "/", "--", "true"], { stdio: ["ignore", "ignore", "pipe"], env: sandboxEnv(HOME) });
    let stderr = "";
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString("utf8")));
    child.on("error", (err: NodeJS.ErrnoException) =>
      done(
        err.code === "ENOENT"
          ? `bash_execute needs bubblewrap, and ${binary} was not found on PATH; install it (Debian/Ubuntu: apt-get install -y bubblewrap; Fedora: dnf install bubblewrap; Alpine: apk add bubblewrap)`
          : `bash_execute could not start ${binary}: ${err.message}`,
      ),
    );
    child.on("close", (code) => {
      if (code === 0) return done(null);
      done(
        `bash_execute's sandbox (bubblewrap) could not start: ${stderr.trim() || `exit status ${code}`}. ` +
          "bubblewrap needs user namespaces: enable them (sysctl kernel.unprivileged_userns_clone=1 and user.max_user_namespaces>0; " +
          "on Ubuntu 24.04+ also kernel.apparmor_restrict_unprivileged_userns=0), or run toolgate where they are allowed",
      );
    });
  });
}
