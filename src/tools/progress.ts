/**
 * A long-running tool's progress ticker: once the work has run for `every_ms` (one second by
 * default), it samples what the work has done so far and reports it, then again every `every_ms`
 * until stopped. The timer is unref'd (it never keeps the process alive) and a report that throws
 * is ignored, so reporting never holds or fails the work.
 */
import type { ProgressUpdate } from "../core/tool.js";

export const PROGRESS_EVERY_MS = 1000;

/** Starts reporting `sample()` to `report`; returns the function that stops it. No `report`: nothing starts. */
export function progressTicker(
  report: ((update: ProgressUpdate) => void) | undefined,
  sample: (elapsed_ms: number) => Omit<ProgressUpdate, "elapsed_ms">,
  every_ms = PROGRESS_EVERY_MS,
): () => void {
  if (!report) return () => {};
  const started = performance.now();
  let due = every_ms;
  let stopped = false;
  // A timer may fire a moment before its time by the clock that measures elapsed time, so each
  // tick checks and waits out the rest: no report says less than the time it is due at.
  const tick = (): void => {
    if (stopped) return;
    const elapsed = performance.now() - started;
    if (elapsed >= due) {
      const elapsed_ms = Math.floor(elapsed);
      try {
        report({ elapsed_ms, ...sample(elapsed_ms) });
      } catch {
        // A receiver that fails does not stop the work.
      }
      // The next whole multiple of every_ms: a loop that was held reports once, not in a burst.
      due = (Math.floor(elapsed / every_ms) + 1) * every_ms;
    }
    schedule(due - (performance.now() - started));
  };
  let timer: NodeJS.Timeout;
  const schedule = (ms: number): void => {
    timer = setTimeout(tick, Math.max(1, Math.ceil(ms)));
    timer.unref();
  };
  schedule(every_ms);
  return () => {
    stopped = true;
    clearTimeout(timer);
  };
}

/** `n` bytes as a person reads them: 812 B, 3.1 KiB, 12.0 MiB. */
export function byteSize(n: number): string {
  if (n < 1024) return `${n} B`;
  if (n < 1024 ** 2) return `${(n / 1024).toFixed(1)} KiB`;
  if (n < 1024 ** 3) return `${(n / 1024 ** 2).toFixed(1)} MiB`;
  return `${(n / 1024 ** 3).toFixed(1)} GiB`;
}

/** Whole seconds of `ms`, for a progress line. */
export const seconds = (ms: number): string => `${Math.floor(ms / 1000)} s`;
