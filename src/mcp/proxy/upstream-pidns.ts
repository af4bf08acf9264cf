/**
 * A stdio upstream's whole process tree dies with its proxy, not just the upstream's own process:
 * an `npx` upstream's node child, a shell's grandchildren, a daemon it forked. On Linux, where
 * util-linux `unshare` can make a PID namespace here, the upstream is started as the first child
 * of a tiny init, both in a namespace of their own, and the kernel SIGKILLs every process in a
 * namespace when its init ends. The spawned chain, all one process until the init:
 *
 *   setpriv --pdeathsig KILL -- unshare [--user --map-current-user] --pid -- sh -c FORWARDER …
 *     └ setpriv --pdeathsig KILL -- sh -c INIT …   (pid 1 of the namespace)
 *         └ the upstream                          (pid 2, with its stdin, stdout, stderr, env, cwd)
 *
 * The forwarder is the process the SDK's transport holds (it stays in the proxy's namespace, so a
 * SIGTERM to it acts as to any process); it passes SIGTERM on to the init, which passes it on to
 * the upstream, and each exits with the status of the one below. So a close is as before: stdin's
 * end, then SIGTERM (which the upstream gets, with its default action if it has no handler: as
 * pid 2 it is no namespace init, which would ignore it), then SIGKILL, now of the forwarder, whose
 * death kills the init (its parent-death signal) and so the namespace. An upstream that exits, by
 * itself or signalled, ends its init and with it whatever it left; the init (sh, waiting) reaps
 * what is orphaned meanwhile. A proxy SIGKILLed kills the forwarder (its parent-death signal), the
 * init, then the namespace. (A parent-death signal is set just after its fork: a forwarder killed
 * in that instant, while the proxy starts the upstream, would leave the init.)
 *
 * As root the namespace is a PID namespace alone: same uid, groups and capabilities. Unprivileged
 * it is made inside a user namespace that maps the upstream's own uid and gid to themselves (never
 * root: it runs as its real uid and groups, with no capability, and reaches exactly the files it
 * did); its supplementary groups then read as unmapped (65534, `getgroups`), so do the owners of
 * other users' files in `stat`, `setgroups` is denied, and a set-user-ID or file-capability
 * program it runs gains nothing (no `sudo` there).
 * There is no mount namespace: the upstream sees the host's files and `/proc`, so `/proc/self` is
 * itself while its `getpid()` counts in its namespace (2): `/proc/<getpid()>` is another process.
 *
 * Which applies when: whether the chain runs here is asked once per process (it is started with
 * `sh -c :` for the upstream; a container without CAP_SYS_ADMIN, or user namespaces turned off,
 * says no). Where it cannot, where `unshare`, `sh` or `env` (GNU, with `--default-signal`) is not
 * on PATH, where the environment holds a name sh would drop or act on (`shellKeeps`: SHELLOPTS, BASH*),
 * or off Linux, the upstream is started by `upstream-pdeathsig.ts` (`setpriv --pdeathsig KILL` alone:
 * its own process dies with a SIGKILLed proxy, not what it starts; without setpriv, plainly, with
 * `upstream-reaper.ts` alone).
 * Root never takes the user namespace: its capabilities there would not reach other users' files.
 */
import { spawnSync } from "node:child_process";
import { onPath, withParentDeathSignal, type Spawned } from "./upstream-pdeathsig.js";

/**
 * What sh puts in the environment of the commands it starts: PWD (dash, bash), SHLVL and `_`
 * (bash as sh); and what it sets itself (PPID, OPTIND, IFS: never read from the environment) or,
 * as bash as sh (Fedora, Arch), rewrites, drops or fills in for them (OLDPWD, which every shell
 * exports after a `cd`, PS1, LINENO, RANDOM…) without acting on it. The relay takes them all out;
 * the init's `NAME=value` arguments put back those given.
 */
const ADDED_BY_SH = [
  "PWD",
  "SHLVL",
  "_",
  "PPID",
  "OPTIND",
  "IFS",
  "POSIXLY_CORRECT",
  "OLDPWD",
  "OPTERR",
  "PS1",
  "PS2",
  "PS4",
  "LINENO",
  "HISTCMD",
  "RANDOM",
  "SRANDOM",
  "EPOCHSECONDS",
  "EPOCHREALTIME",
  "COMP_WORDBREAKS",
] as const;

/*
 * Both scripts are POSIX sh (dash on Debian; bash as sh too). Their variables are named
 * toolgate_*: an environment variable of such a name would be rewritten in what the upstream
 * inherits (`shellKeeps` refuses it). SIGTERM is passed on (a TERM that comes before the child exists is kept and sent once it does).
 * SIGINT, SIGHUP and SIGQUIT, which a terminal sends its whole process group (the upstream among
 * it, as before), are ignored, so the chain stays while the upstream decides; passed on, the
 * upstream would have them twice more. A background job's stdin would be /dev/null, so it gets the
 * script's own through fd 3, and it starts through `env --default-signal` (every signal at its
 * default, as Node's spawn leaves it: sh leaves a background job's SIGINT ignored), which also
 * takes out what sh adds to its children's environment (`ADDED_BY_SH`; the init's arguments put
 * back the values given, where there were). `wait` ends early at a trapped signal, so it is
 * waited on until the child is gone (`kill -0`), then its status is the script's.
 */
const RELAY =
  `toolgate_sig=; toolgate_child=; trap '' INT HUP QUIT; ` +
  `trap 'toolgate_sig=TERM; [ -z "$toolgate_child" ] || kill -TERM $toolgate_child 2>/dev/null' TERM; ` +
  `exec 3<&0; "$toolgate_env" --default-signal ${ADDED_BY_SH.map((name) => `-u${name}`).join(" ")} -- "$@" <&3 3<&- & toolgate_child=$!; exec 3<&-; ` +
  `[ -z "$toolgate_sig" ] || kill -TERM $toolgate_child 2>/dev/null; ` +
  `while :; do wait $toolgate_child 2>/dev/null; toolgate_status=$?; kill -0 $toolgate_child 2>/dev/null || exit $toolgate_status; done`;

/** The init, pid 1 of the namespace (`$1` env, then env's operands: the `NAME=value`s of ADDED_BY_SH given, the upstream). */
export const INIT_SCRIPT = `toolgate_env=$1; shift; ${RELAY}`;

/**
 * The forwarder (`$1` setpriv, `$2` sh, `$3` env, `$4` the init's script, then the init's
 * arguments): its first child is the first process of the namespace, its init, so nothing may
 * fork before it (no `$(…)`).
 */
export const FORWARDER_SCRIPT =
  `toolgate_setpriv=$1; toolgate_sh=$2; toolgate_env=$3; toolgate_init=$4; shift 4; ` +
  `set -- "$toolgate_setpriv" --pdeathsig KILL -- "$toolgate_sh" -c "$toolgate_init" toolgate-init "$@"; ` +
  RELAY;

/**
 * Whether sh hands `env` on unchanged and runs the scripts as written: every name one it keeps (a
 * name like `A-B` it drops), and none it acts on (`SHELL_SETS`, BASH*; those it adds, sets or
 * rewrites are put back by the init, `ADDED_BY_SH`) or the scripts set (toolgate_*).
 */
export function shellKeeps(env: Record<string, string | undefined>): boolean {
  return shellAlters(env) === undefined;
}

/** The first name of `env` sh would drop or act on (so `shellKeeps` is false), or undefined. */
export function shellAlters(env: Record<string, string | undefined>): string | undefined {
  return Object.entries(env).find(
    ([name, value]) =>
      value !== undefined &&
      (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name) ||
        SHELL_SETS.has(name) ||
        name.startsWith("BASH") ||
        name.startsWith("toolgate_")),
  )?.[0];
}
/**
 * What bash as sh (Fedora, Arch) reads as its own options, as it reads BASH* (BASHOPTS, exported
 * functions): SHELLOPTS=noexec would run neither script (nor so the upstream), xtrace would trace
 * them to the upstream's stderr. (OLDPWD, PS1 and the like were refused too, so a proxy started
 * from a shell that had run `cd` gave its upstream no namespace: what it started outlived the proxy.)
 */
const SHELL_SETS = new Set(["SHELLOPTS"]);

/** The programs of the chain, as found on PATH. */
export interface Chain {
  setpriv: string;
  unshare: string;
  sh: string;
  env: string;
  /** `unshare`'s flags: a PID namespace, inside a user namespace unless root. */
  flags: string[];
}

/** The `unshare` flags that make the namespace for a process of effective uid `uid`. */
export function namespaceFlags(uid: number): string[] {
  return uid === 0 ? ["--pid"] : ["--user", "--map-current-user", "--pid"];
}

function spawnedIn(chain: Chain, target: Spawned, given: Record<string, string | undefined>): Spawned {
  const { setpriv, unshare, sh, env, flags } = chain;
  const restored = ADDED_BY_SH.flatMap((name) => (given[name] === undefined ? [] : [`${name}=${given[name]}`]));
  const init = [env, ...restored, target.command, ...target.args];
  const forwarder = [setpriv, sh, env, INIT_SCRIPT, ...init];
  return {
    command: setpriv,
    args: [
      "--pdeathsig",
      "KILL",
      "--",
      unshare,
      ...flags,
      "--",
      sh,
      "-c",
      FORWARDER_SCRIPT,
      "toolgate-upstream",
      ...forwarder,
    ],
  };
}

const probed = new Map<string, boolean>();

/** Whether the chain runs here: `sh -c :` started through it exits 0 (asked once per chain: a few ms). */
export function chainWorks(chain: Chain): boolean {
  const key = JSON.stringify(chain);
  let works = probed.get(key);
  if (works === undefined) {
    const probe = spawnedIn(chain, { command: chain.sh, args: ["-c", ":"] }, {});
    works = spawnSync(probe.command, probe.args, { stdio: "ignore", timeout: 5_000 }).status === 0;
    probed.set(key, works);
  }
  return works;
}

/**
 * `target` as spawned so that it and every process it starts die with the proxy (the chain
 * above), where the namespace can be made; else `withParentDeathSignal`'s (setpriv, or as given).
 */
export function inOwnPidNamespace(
  target: Spawned,
  env: Record<string, string | undefined>,
  cwd: string = process.cwd(),
  platform: NodeJS.Platform = process.platform,
  uid: number = process.geteuid?.() ?? -1,
  works: (chain: Chain) => boolean = chainWorks,
): Spawned {
  const marked = withParentDeathSignal(target, env, cwd, platform);
  // Not wrapped by setpriv: off Linux, no setpriv, or a command that does not resolve (its spawn fails naming it).
  // A command with `=` would be taken by `env` for a variable; an environment sh would alter is kept by setpriv alone.
  if (marked === target || uid < 0 || target.command.includes("=") || !shellKeeps(env)) return marked;
  const [unshare, sh, envPath] = ["unshare", "sh", "env"].map((name) => onPath(name, env.PATH, cwd));
  if (unshare === undefined || sh === undefined || envPath === undefined) return marked;
  const chain = { setpriv: marked.command, unshare, sh, env: envPath, flags: namespaceFlags(uid) };
  return works(chain) ? spawnedIn(chain, target, env) : marked;
}
