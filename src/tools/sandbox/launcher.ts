/**
 * The isolation envelope for bash_execute (seed 000, "A reference catalog for coding agents";
 * DESIGN.md "General tools need an envelope"). A launcher turns "run this command in this
 * workspace" into the argv that does it inside its envelope; `runInEnvelope` (run.ts) spawns
 * it, bounds its output and time, and kills the whole tree. One file per launcher beside this.
 */

/** Resource limits applied inside the envelope (bash `ulimit`, so they hold for every child). */
export interface EnvelopeLimits {
  /** RLIMIT_NPROC: processes (threads count too) the command may have at once. Bounds a fork bomb. */
  max_processes: number;
  /** RLIMIT_FSIZE in bytes: the largest file the command may write (SIGXFSZ past it). */
  max_file_bytes: number;
}

/** One command to run. */
export interface EnvelopeRun {
  /** The shell command line, run with `bash -c`. */
  command: string;
  /** The real workspace root: bound read-write at its own path and used as the working directory. */
  workspace: string;
  /** Folders inside the workspace hidden from the command (an empty read-only tmpfs over each that exists). */
  hidden?: readonly string[];
  limits: EnvelopeLimits;
}

/** The process to spawn for one run. */
export interface LaunchPlan {
  file: string;
  args: string[];
  /** The complete environment of the spawned process (nothing is inherited). */
  env: Record<string, string>;
  /** Working directory of the spawned process. */
  cwd: string;
  /** Called once the process tree is gone: releases per-run resources, says whether the process limit refused a fork. */
  finish?: () => Promise<{ process_limit_hit: boolean }>;
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
  plan(run: EnvelopeRun): LaunchPlan;
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
  };
}

/**
 * `bash -c` with the limits applied first: `ulimit` sets them in the shell, and every process
 * the command starts inherits them. The command is passed as `$1`, never spliced into a script.
 */
export function limitedBash(run: EnvelopeRun): string[] {
  const blocks = Math.max(1, Math.floor(run.limits.max_file_bytes / 1024)); // ulimit -f counts 1024-byte blocks
  const script = `ulimit -u ${Math.floor(run.limits.max_processes)} -f ${blocks} || exit 126; exec bash -c "$1"`;
  return ["bash", "-c", script, "toolgate-sandbox", run.command];
}
