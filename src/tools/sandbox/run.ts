/**
 * Runs one command through a launcher. `startInEnvelope` spawns the plan (extra descriptors,
 * readiness channel), enforces the time bound and the caller's abort by killing the whole process
 * tree, lets the launcher watch and stop the run, and reports how it ended. `runInEnvelope` is
 * bash_execute's use of it: stdout and stderr captured separately and bounded.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { constants } from "node:os";
import type { Duplex, Readable, Writable } from "node:stream";
import { boundCapture, HeadTailCapture, shareTokens, type BoundedText } from "./capture.js";
import {
  EMPTY_REPORT,
  type EnvelopeReport,
  type EnvelopeRun,
  type SandboxLauncher,
  type StopReason,
} from "./launcher.js";
import type { ProgressUpdate } from "../../core/tool.js";
import { byteSize, progressTicker, seconds } from "../progress.js";

export interface StartBounds {
  timeout_ms: number;
  /** Aborts the run like a timeout (the gateway's own bound, or the caller going away). */
  signal?: AbortSignal;
}

export interface EnvelopeExit {
  /** The launcher's exit status; null when it was killed by a signal. */
  code: number | null;
  signal: NodeJS.Signals | null;
  timed_out: boolean;
  aborted: boolean;
  /** Why the launcher stopped the run early, if it did. */
  stopped: StopReason | null;
  /** False when the plan had a readiness channel and the command never started: nothing ran. */
  ran: boolean;
  report: EnvelopeReport;
}

export interface EnvelopeProcess {
  child: ChildProcess;
  stdout: Readable;
  stderr: Readable;
  /** Kills the whole tree now (idempotent). */
  kill(): void;
  done: Promise<EnvelopeExit>;
}

/** Spawns `run` through `launcher`. Rejects (NoEffectError from the plan, or a spawn error) when nothing could start.
 * */
export async function startInEnvelope(
  launcher: SandboxLauncher,
  run: EnvelopeRun,
  bounds: StartBounds,
): Promise<EnvelopeProcess> {
  const plan = await launcher.plan(run);
  const extra = plan.extraFds ?? [];
  // detached: the launcher leads its own process group, so one kill reaches all of it; for
  // bubblewrap, killing bwrap kills its PID namespace (--die-with-parent), orphans included.
  let child: ChildProcess;
  try {
    child = spawn(plan.file, plan.args, {
      env: plan.env,
      cwd: plan.cwd,
      stdio: ["ignore", "pipe", "pipe", ...extra.map((e) => ("fd" in e ? e.fd : "pipe"))],
      detached: true,
    });
  } catch (err) {
    await plan.finish?.({ stopped: null, ran: false });
    throw err;
  }

  let ran = !extra.some((e) => "ready" in e);
  extra.forEach((e, i) => {
    const stream = child.stdio[3 + i] as (Readable & Writable) | null;
    if (!stream) return;
    stream.on("error", () => {}); // EPIPE when the child died before reading: the exit tells the rest
    if ("input" in e) stream.end(e.input, () => stream.destroy());
    else if ("ready" in e)
      stream.once("data", () => {
        ran = true;
        stream.destroy();
      });
  });

  let timedOut = false;
  let aborted = false;
  let stopped: StopReason | null = null;
  let gone = false;
  const kill = () => {
    if (gone) return;
    try {
      if (child.pid !== undefined) process.kill(-child.pid, "SIGKILL");
    } catch {
      // ESRCH: already gone.
    }
  };
  const timer = setTimeout(() => {
    timedOut = true;
    kill();
  }, bounds.timeout_ms);
  const onAbort = () => {
    aborted = true;
    kill();
  };
  bounds.signal?.addEventListener("abort", onAbort, { once: true });
  if (bounds.signal?.aborted) onAbort();
  if (child.pid !== undefined) {
    const pipes = extra.map((e, i) => ("pipe" in e ? ((child.stdio[3 + i] as Duplex | null) ?? null) : null));
    plan.started?.(
      child.pid,
      (reason) => {
        stopped ??= reason;
        kill();
      },
      pipes,
    );
  }

  const done = new Promise<EnvelopeExit>((resolve, reject) => {
    let settled = false;
    const end = async (code: number | null, signal: NodeJS.Signals | null, error?: Error) => {
      if (settled) return;
      settled = true;
      gone = true;
      clearTimeout(timer);
      bounds.signal?.removeEventListener("abort", onAbort);
      const found = plan.finish ? await plan.finish({ stopped, ran: ran && !error }) : {};
      if (error) return reject(error);
      resolve({ code, signal, timed_out: timedOut, aborted, stopped, ran, report: { ...EMPTY_REPORT, ...found } });
    };
    child.on("error", (err) => void end(null, null, err));
    child.on("exit", () => {
      // Without an envelope, background children may still hold the pipes: end them too.
      if (!launcher.isolated) kill();
    });
    child.on("close", (code, signal) => void end(code, signal));
  });
  return { child, stdout: child.stdout!, stderr: child.stderr!, kill, done };
}

export interface RunBounds extends StartBounds {
  /** Bytes kept per stream while reading (head + tail). */
  output_bytes: number;
  /** o200k tokens kept per stream in the observation (head + tail). */
  output_tokens: number;
  /** When set, o200k tokens of both streams together, cut markers included (a stream needing less leaves the rest to
   * the other). */
  total_tokens?: number;
  /** Clock for duration_ms; default performance.now. */
  now?: () => number;
  /** Receives, every second after the first, how long the command has run and the bytes of output it wrote so far. */
  progress?: (update: ProgressUpdate) => void;
}

export interface RunOutcome {
  /** The command's exit status; null when it was killed by a signal from outside (timeout). */
  exit_code: number | null;
  /** Signal that ended the command, e.g. "SIGKILL" or "SIGXFSZ"; null when it exited normally. */
  signal: string | null;
  timed_out: boolean;
  /** The caller aborted the run (not the timeout). */
  aborted: boolean;
  /** False when the envelope could not start the command (its setup failed): nothing ran. */
  ran: boolean;
  /** Why the envelope stopped the command early, if it did. */
  stopped: StopReason | null;
  /** The envelope's process limit refused a fork (known from the pids cgroup, where there is one). */
  process_limit_hit: boolean;
  report: EnvelopeReport;
  duration_ms: number;
  stdout: BoundedText;
  stderr: BoundedText;
}

const SIGNAL_NAMES = new Map(Object.entries(constants.signals).map(([name, n]) => [n, name]));

export async function runInEnvelope(
  launcher: SandboxLauncher,
  run: EnvelopeRun,
  bounds: RunBounds,
): Promise<RunOutcome> {
  const now = bounds.now ?? (() => performance.now());
  const started = now();
  const proc = await startInEnvelope(launcher, run, bounds);
  const stdout = new HeadTailCapture(bounds.output_bytes);
  const stderr = new HeadTailCapture(bounds.output_bytes);
  proc.stdout.on("data", (c: Buffer) => stdout.push(c));
  proc.stderr.on("data", (c: Buffer) => stderr.push(c));
  const stopTicker = progressTicker(bounds.progress, (elapsed) => ({
    message: `running for ${seconds(elapsed)}; ${byteSize(stdout.total)} of stdout and ${byteSize(stderr.total)} of stderr so far`,
    counts: { stdout_bytes: stdout.total, stderr_bytes: stderr.total },
  }));
  const exit = await proc.done.finally(stopTicker);
  const duration_ms = Math.round(now() - started);
  // bash reports a child killed by signal N as exit status 128+N (and bwrap passes it on).
  const code = exit.code;
  const fromShell = code !== null && code > 128 && code < 128 + 65 ? (SIGNAL_NAMES.get(code - 128) ?? null) : null;
  const [outTokens, errTokens] =
    bounds.total_tokens === undefined
      ? [bounds.output_tokens, bounds.output_tokens]
      : shareTokens(stdout, stderr, bounds.total_tokens, bounds.output_tokens);
  return {
    exit_code: code,
    signal: exit.signal ?? fromShell,
    timed_out: exit.timed_out,
    aborted: exit.aborted,
    ran: exit.ran,
    stopped: exit.stopped,
    process_limit_hit: exit.report.process_limit_hit,
    report: exit.report,
    duration_ms,
    stdout: boundCapture(stdout, outTokens, "stdout"),
    stderr: boundCapture(stderr, errTokens, "stderr"),
  };
}
