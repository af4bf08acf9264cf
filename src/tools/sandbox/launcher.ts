/**
 * The isolation envelope for bash_execute and grep_search (docs/envelope.md;
 * ARCHITECTURE.md, tools/sandbox). A launcher turns "run this command in this
 * workspace" into the process that does it inside its envelope; `startInEnvelope` (run.ts)
 * spawns it, watches it and kills the whole tree. One file per launcher beside this.
 */
import type { Duplex } from "node:stream";

/** Bounds of one run (bash `ulimit` inside, and the run's cgroups where there are some). */
export interface EnvelopeLimits {
  /** Processes (threads count too) the command may have at once: pids cgroup and RLIMIT_NPROC. Bounds a fork bomb. */
  max_processes: number;
  /** RLIMIT_FSIZE in bytes: the largest file the command may write (SIGXFSZ past it); at most max_write_bytes. */
  max_file_bytes: number;
  /**
   * Memory of the whole run, tmpfs pages included: the memory cgroup's limit (no swap on top).
   * Without a memory cgroup, RLIMIT_AS per process at 4× this (address space is not memory:
   * runtimes reserve far more than they use, Node's WebAssembly alone about 10 GiB).
   */
  max_memory_bytes: number;
  /** CPU time of the whole run (every process together), and RLIMIT_CPU of each process. */
  max_cpu_seconds: number;
  /** Bytes the run may write to disk-backed files (the workspace) in all; the run is stopped past it. */
  max_write_bytes: number;
  /** Size of each of the fresh tmpfs mounts at /tmp and HOME. */
  max_tmp_bytes: number;
}

/** One command to run. */
export interface EnvelopeRun {
  /** The shell command line, run with `bash -c` (with the limits applied first). */
  command: string;
  /** Instead of `bash -c command`: this argv, run directly (grep_search's ripgrep). */
  argv?: readonly string[];
  /** The real workspace root: bound at its own path and used as the working directory. */
  workspace: string;
  /** Bind the workspace read-only (a reading tool). Default false. */
  readOnlyWorkspace?: boolean;
  /** Paths inside the workspace hidden from the command (an empty read-only tmpfs over each that exists). */
  hidden?: readonly string[];
  /** Paths inside the workspace the command may read but never change (they may not exist yet). */
  readOnly?: readonly string[];
  limits: EnvelopeLimits;
  /**
   * The host-side egress proxy of this run (egress/server.ts): its unix sockets are bound into the
   * envelope and a forwarder inside carries the command's proxy ports to them. Absent: no network.
   */
  egress?: { httpSocket: string; socksSocket: string };
}

/** What the envelope itself stopped or refused during a run. */
export interface EnvelopeReport {
  process_limit_hit: boolean;
  memory_limit_hit: boolean;
  cpu_limit_hit: boolean;
  disk_limit_hit: boolean;
  /** Bytes written to disk-backed files as last seen (0 when the run was too short to be polled). */
  written_bytes: number;
  /** Protected or hidden paths the command created or replaced: put back after the run. */
  protected_changed: string[];
  /** Of those, the ones that could not be put back (with why). */
  protected_unrestored: string[];
  /** Why the envelope could not be completed before the command started (then nothing ran), or null. */
  setup_error: string | null;
}

export const EMPTY_REPORT: EnvelopeReport = {
  process_limit_hit: false,
  memory_limit_hit: false,
  cpu_limit_hit: false,
  disk_limit_hit: false,
  written_bytes: 0,
  protected_changed: [],
  protected_unrestored: [],
  setup_error: null,
};

/**
 * A descriptor the child gets from fd 3 on: bytes written to it then closed, a readiness channel
 * (the command's shell writes one byte just before the command starts), a pipe the launcher itself
 * reads or writes (given to `started`), or an open descriptor.
 */
export type ExtraFd = { input: Buffer } | { ready: true } | { pipe: true } | { fd: number };

/** Why the launcher stops a run early ("setup": its envelope could not be completed; nothing ran). */
export type StopReason = "cpu_limit" | "disk_limit" | "protected_path" | "setup";

/** The process to spawn for one run. */
export interface LaunchPlan {
  file: string;
  args: string[];
  /** The complete environment of the spawned process (nothing is inherited). */
  env: Record<string, string>;
  /** Working directory of the spawned process. */
  cwd: string;
  /** The child's fds 3, 4, … in order. With a `ready` channel, a run that never writes it ran nothing. */
  extraFds?: ExtraFd[];
  /**
   * Called once the child is spawned: its pid, `stop` to kill the tree for a reason, and the
   * child's extra descriptors as streams (`pipes[i]` for `extraFds[i]`, null where not a pipe).
   */
  started?(pid: number, stop: (reason: StopReason) => void, pipes: (Duplex | null)[]): void;
  /** Called once the process tree is gone (or never started): releases per-run resources and reports. */
  finish?(outcome: { stopped: StopReason | null; ran: boolean }): Promise<Partial<EnvelopeReport>>;
}

export interface SandboxLauncher {
  /** Shown in observations and warnings, e.g. "bubblewrap" or "none". */
  readonly name: string;
  /** True when the plan isolates the command; false only for the explicit unsandboxed opt-out. */
  readonly isolated: boolean;
  /**
   * Checks once that the envelope can start here. Resolves to null when it can, else to a
   * message naming what is missing and how to install or enable it.
   */
  probe(): Promise<string | null>;
  /** The process for one run; throws NoEffectError when the envelope cannot be set up (nothing ran). */
  plan(run: EnvelopeRun): Promise<LaunchPlan>;
}

/**
 * The environment inside the envelope: a short allowlist, nothing from the host (so neither
 * `env` nor `/proc/1/environ` can show the operator's secrets).
 */
export function sandboxEnv(home: string): Record<string, string> {
  return {
    PATH: "/usr/local/bin:/usr/bin:/bin:/usr/local/sbin:/usr/sbin:/sbin",
    HOME: home,
    TMPDIR: "/tmp",
    LANG: "C.UTF-8",
    LC_ALL: "C.UTF-8",
    TERM: "dumb",
    // Tools that page or prompt must not wait for a person who is not there.
    PAGER: "cat",
    GIT_PAGER: "cat",
    GIT_TERMINAL_PROMPT: "0",
    // git status and diff skip refreshing the index (a write): the repository's .git may be read-only.
    GIT_OPTIONAL_LOCKS: "0",
  };
}

export interface BashOptions {
  /** The fd to write one byte to once the limits are set, just before the command starts. */
  readyFd?: number;
  /** Also bound address space (RLIMIT_AS), where no memory cgroup bounds the run. */
  addressSpace?: boolean;
  /** Bound processes with RLIMIT_NPROC (default true); a pids cgroup does it where RLIMIT_NPROC would count other
   * processes of the same user. */
  processes?: boolean;
  /** Shell lines run before the limits are set (the egress forwarder); the run stops with 126 when they fail. */
  prelude?: string;
}

/**
 * `bash -c` with the limits applied first: `ulimit` sets them in the shell, and every process
 * the command starts inherits them. The command is passed as `$1`, never spliced into a script.
 * The CPU limit is soft at max_cpu_seconds (SIGXCPU, which bash reports) and hard 5 s later.
 */
export function limitedBash(run: EnvelopeRun, options: BashOptions = {}): string[] {
  const l = run.limits;
  const kib = (bytes: number) => Math.max(1, Math.floor(bytes / 1024)); // ulimit -f and -v count 1024-byte blocks
  const cpu = Math.max(1, Math.ceil(l.max_cpu_seconds));
  const limits = [
    `ulimit -c 0${options.processes === false ? "" : ` -u ${Math.floor(l.max_processes)}`} -f ${kib(Math.min(l.max_file_bytes, l.max_write_bytes))}${options.addressSpace ? ` -v ${kib(4 * l.max_memory_bytes)}` : ""}`,
    // Soft first: a hard limit below the current (unlimited) soft one is refused.
    `ulimit -S -t ${cpu}`,
    `ulimit -H -t ${cpu + 5}`,
  ].join(" && ");
  const ready = options.readyFd === undefined ? "" : ` && printf x >&${options.readyFd} && exec ${options.readyFd}>&-`;
  const prelude = options.prelude ? `${options.prelude} || exit 126; ` : "";
  const script = `${prelude}${limits}${ready} || exit 126; exec bash -c "$1"`;
  return ["bash", "-c", script, "toolgate-sandbox", run.command];
}

/**
 * `argv` with the file, CPU and (without a memory cgroup) address-space limits set first by
 * /bin/sh, for a program run directly rather than through bash (grep_search's ripgrep).
 */
export function limitedArgv(run: EnvelopeRun, argv: readonly string[], options: BashOptions = {}): string[] {
  const l = run.limits;
  const kib = (bytes: number) => Math.max(1, Math.floor(bytes / 1024));
  const limits = [
    "ulimit -c 0",
    `ulimit -f ${kib(Math.min(l.max_file_bytes, l.max_write_bytes))}`,
    `ulimit -t ${Math.max(1, Math.ceil(l.max_cpu_seconds))}`,
  ];
  if (options.addressSpace) limits.push(`ulimit -v ${kib(4 * l.max_memory_bytes)}`);
  return ["/bin/sh", "-c", `${limits.join(" && ")} || exit 126; exec "$@"`, "toolgate-sandbox", ...argv];
}
