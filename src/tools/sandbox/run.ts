/**
 * Runs one command through a launcher: stdout and stderr captured separately and bounded,
 * a time bound that kills the whole process tree, and the exit status, signal and duration.
 */
import { spawn } from "node:child_process";
import { constants } from "node:os";
import { boundCapture, HeadTailCapture, shareTokens, type BoundedText } from "./capture.js";
import type { EnvelopeRun, SandboxLauncher } from "./launcher.js";

export interface RunBounds {
  timeout_ms: number;
  /** Bytes kept per stream while reading (head + tail). */
  output_bytes: number;
  /** o200k tokens kept per stream in the observation (head + tail). */
  output_tokens: number;
  /** When set, o200k tokens of both streams together, cut markers included (a stream needing less leaves the rest to the other). */
  total_tokens?: number;
  /** Aborts the run like a timeout (the gateway's own bound, or the caller going away). */
  signal?: AbortSignal;
  /** Clock for duration_ms; default performance.now. */
  now?: () => number;
}

export interface RunOutcome {
  /** The command's exit status; null when it was killed by a signal from outside (timeout). */
  exit_code: number | null;
  /** Signal that ended the command, e.g. "SIGKILL" or "SIGXFSZ"; null when it exited normally. */
  signal: string | null;
  timed_out: boolean;
  /** The caller aborted the run (not the timeout). */
  aborted: boolean;
  /** The envelope's process limit refused a fork (known from the pids cgroup, where there is one). */
  process_limit_hit: boolean;
  duration_ms: number;
  stdout: BoundedText;
  stderr: BoundedText;
}

const SIGNAL_NAMES = new Map(Object.entries(constants.signals).map(([name, n]) => [n, name]));

export function runInEnvelope(launcher: SandboxLauncher, run: EnvelopeRun, bounds: RunBounds): Promise<RunOutcome> {
  const now = bounds.now ?? (() => performance.now());
  const plan = launcher.plan(run);
  const started = now();
  const stdout = new HeadTailCapture(bounds.output_bytes);
  const stderr = new HeadTailCapture(bounds.output_bytes);
  // detached: the launcher leads its own process group, so one kill reaches all of it; for
  // bubblewrap, killing bwrap kills its PID namespace (--die-with-parent), orphans included.
  const child = spawn(plan.file, plan.args, { env: plan.env, cwd: plan.cwd, stdio: ["ignore", "pipe", "pipe"], detached: true });
  child.stdout.on("data", (c: Buffer) => stdout.push(c));
  child.stderr.on("data", (c: Buffer) => stderr.push(c));

  let timedOut = false;
  let aborted = false;
  const killTree = () => {
    try {
      if (child.pid !== undefined) process.kill(-child.pid, "SIGKILL");
    } catch {
      // ESRCH: already gone.
    }
  };
  const timer = setTimeout(() => {
    timedOut = true;
    killTree();
  }, bounds.timeout_ms);
  const onAbort = () => {
    aborted = true;
    killTree();
  };
  bounds.signal?.addEventListener("abort", onAbort, { once: true });
  if (bounds.signal?.aborted) onAbort();

  return new Promise((done, fail) => {
    child.on("error", (err) => {
      clearTimeout(timer);
      fail(err);
    });
    child.on("exit", () => {
      // Without an envelope, background children may still hold the pipes: end them too.
      if (!launcher.isolated) killTree();
    });
    child.on("close", async (code, signal) => {
      clearTimeout(timer);
      bounds.signal?.removeEventListener("abort", onAbort);
      const duration_ms = Math.round(now() - started);
      const finished = plan.finish ? await plan.finish() : { process_limit_hit: false };
      // bash reports a child killed by signal N as exit status 128+N (and bwrap passes it on).
      const fromShell = code !== null && code > 128 && code < 128 + 65 ? (SIGNAL_NAMES.get(code - 128) ?? null) : null;
      const [outTokens, errTokens] = bounds.total_tokens === undefined ? [bounds.output_tokens, bounds.output_tokens] : shareTokens(stdout, stderr, bounds.total_tokens, bounds.output_tokens);
      done({
        exit_code: code,
        signal: signal ?? fromShell,
        timed_out: timedOut,
        aborted,
        process_limit_hit: finished.process_limit_hit,
        duration_ms,
        stdout: boundCapture(stdout, outTokens, "stdout"),
        stderr: boundCapture(stderr, errTokens, "stderr"),
      });
    });
  });
}
