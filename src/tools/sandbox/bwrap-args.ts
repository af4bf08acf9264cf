/**
 * The bwrap arguments of the envelope, built from the host's layout once per launcher
 * (bubblewrap.ts documents what they amount to). Two modes:
 * - toolgate not root: bwrap runs unprivileged in a user namespace of its own, with
 *   `--disable-userns` (the command cannot create user namespaces of its own);
 * - toolgate root: bwrap runs as root without a user namespace (it mounts as root, so it also
 *   reaches a workspace under a folder only root may enter, such as /root or a 0700 temp folder),
 *   keeps only CAP_SETUID, CAP_SETGID, CAP_SETPCAP and CAP_DAC_READ_SEARCH (to enter the
 *   workspace when it is 0700), all dropped by the uid switch: the command is started through setpriv,
 *   which drops to the sandbox user, clears supplementary groups, the inheritable and bounding
 *   capability sets, and sets no-new-privs. `--disable-userns` needs bwrap's own user namespace,
 *   so there the seccomp filter alone refuses new namespaces.
 */
import { existsSync, lstatSync, readlinkSync } from "node:fs";
import { dirname } from "node:path";
import { sandboxEnv } from "./launcher.js";
import type { SandboxUser } from "./user.js";

export const HOME = "/home/sandbox";
const SYSTEM_DIRS = ["/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"];
const ETC_FILES = [
  "/etc/ld.so.cache",
  "/etc/ld.so.conf",
  "/etc/ld.so.conf.d",
  "/etc/alternatives",
  "/etc/passwd",
  "/etc/group",
  "/etc/localtime",
  "/etc/nsswitch.conf",
  "/etc/gitconfig",
];

/** `safe.directory=*` as command-line git config (git honours that setting only from there, the system or the global
 * file). */
const SAFE_DIRECTORY = { GIT_CONFIG_COUNT: "1", GIT_CONFIG_KEY_0: "safe.directory", GIT_CONFIG_VALUE_0: "*" };

/** The fd bwrap reads the seccomp program from (`--seccomp 3`); the child's first extra descriptor. */
export const SECCOMP_FD = 3;

/** Namespaces, privileges, environment and the read-only system: everything that does not depend on the run. */
export function systemArgs(readOnlyPaths: readonly string[], asRoot: boolean): string[] {
  const namespaces = asRoot
    ? [
        "--unshare-ipc",
        "--unshare-pid",
        "--unshare-net",
        "--unshare-uts",
        "--unshare-cgroup",
        "--cap-drop",
        "ALL",
        "--cap-add",
        "CAP_SETUID",
        "--cap-add",
        "CAP_SETGID",
        "--cap-add",
        "CAP_SETPCAP",
        "--cap-add",
        "CAP_DAC_READ_SEARCH",
      ]
    : ["--unshare-all", "--unshare-user", "--disable-userns", "--cap-drop", "ALL"];
  const args = [...namespaces, "--die-with-parent", "--new-session", "--clearenv"];
  for (const [k, v] of Object.entries(sandboxEnv(HOME))) args.push("--setenv", k, v);
  // git refuses a repository another user owns ("dubious ownership"): inside the envelope the
  // sandbox user's git may use the workspace's repository whoever owns it (a root-owned .git kept
  // from the handover, chownWorkspace false). What that check guards against, a repository's
  // hooks and config run by another user, runs here inside the sandbox only.
  args.push(...Object.entries(SAFE_DIRECTORY).flatMap(([k, v]) => ["--setenv", k, v]));
  args.push("--ro-bind", "/usr", "/usr");
  for (const dir of SYSTEM_DIRS) {
    const stat = lstatOrNull(dir);
    if (stat?.isSymbolicLink()) args.push("--symlink", readlinkSync(dir), dir);
    else if (stat?.isDirectory()) args.push("--ro-bind", dir, dir);
  }
  const made = new Set<string>();
  const bind = (path: string) => {
    // A root bwrap creates missing mount points' folders 0700 (owned by root): make them traversable first.
    for (const d of asRoot ? ancestors(path) : []) {
      if (made.has(d) || provided(d)) continue;
      args.push("--perms", "0755", "--dir", d);
      made.add(d);
    }
    args.push("--ro-bind", path, path);
  };
  for (const file of ETC_FILES) if (existsSync(file)) bind(file);
  for (const dir of readOnlyPaths) bind(dir);
  // The sandbox's own /proc, with the kernel's settings read-only over it.
  args.push(
    "--proc",
    "/proc",
    "--ro-bind",
    "/proc/sys",
    "/proc/sys",
    "--ro-bind-try",
    "/proc/sysrq-trigger",
    "/proc/sysrq-trigger",
    "--dev",
    "/dev",
  );
  return args;
}

/**
 * Fresh, sized tmpfs mounts at /tmp and HOME (sticky and writable by all when root mounts them:
 * the sandbox user is the only one inside). They come before the workspace bind, so a workspace
 * under /tmp stays visible.
 */
export function tmpArgs(bytes: number, asRoot: boolean): string[] {
  const size = String(Math.max(4096, Math.floor(bytes)));
  const perms = asRoot ? ["--perms", "1777"] : [];
  return [...perms, "--size", size, "--tmpfs", "/tmp", ...perms, "--size", size, "--tmpfs", HOME];
}

/**
 * The folders leading to the workspace, made traversable (0755) inside the sandbox: bwrap would
 * otherwise copy each host folder's mode, and a 0700 one (owned by root) would lock the sandbox
 * user out of its own workspace. Needed only when root mounts.
 */
export function pathArgs(workspace: string, asRoot: boolean): string[] {
  if (!asRoot) return [];
  return ancestors(workspace)
    .filter((d) => !provided(d))
    .flatMap((d) => ["--perms", "0755", "--dir", d]);
}

/** The folders above `path`, outermost first, "/" excluded. */
function ancestors(path: string): string[] {
  const dirs: string[] = [];
  for (let d = dirname(path); d !== "/" && d !== "."; d = dirname(d)) dirs.unshift(d);
  return dirs;
}

/** Folders a mount of the system already provides (a workspace under /usr/src keeps the host's modes), or a tmpfs does.
 * */
const provided = (d: string) =>
  d === "/tmp" || d === HOME || ["/usr", "/proc", "/dev", ...SYSTEM_DIRS].some((s) => d === s || d.startsWith(s + "/"));

/** The switch to the sandbox user inside a root sandbox, just before the command. */
export function setprivArgs(setpriv: string, user: SandboxUser): string[] {
  return [
    setpriv,
    `--reuid=${user.uid}`,
    `--regid=${user.gid}`,
    "--clear-groups",
    "--inh-caps=-all",
    "--bounding-set=-all",
    "--no-new-privs",
    "--",
  ];
}

function lstatOrNull(path: string) {
  try {
    return lstatSync(path);
  } catch {
    return null;
  }
}
