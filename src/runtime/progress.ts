/**
 * The gateway's side of a call's progress: the caller's receiver, guarded. A tool may report as
 * often as it likes; the receiver gets at most one report per `min_ms` (the latest one waits for
 * the next report, not for a timer, so nothing outlives the call), never one after the call has
 * answered, and whatever the receiver throws or rejects with is dropped: progress is a courtesy to
 * the caller and can neither slow nor fail the call.
 */
import type { CallLog, LogEntry, LogLevel, ProgressUpdate } from "../core/tool.js";

/** Reports closer together than this are dropped (a tool ticking every few ms would flood a transport). */
export const PROGRESS_MIN_MS = 250;

export interface ProgressRelay {
  /** What the tool's `ctx.progress` calls. */
  report(update: ProgressUpdate): void;
  /** The call answered: later reports are dropped. */
  end(): void;
}

/** A relay to `receiver`; `now` is a monotonic clock in ms (performance.now by default). */
export function progressRelay(
  receiver: (update: ProgressUpdate) => void,
  min_ms = PROGRESS_MIN_MS,
  now: () => number = () => performance.now(),
): ProgressRelay {
  let ended = false;
  let last = -Infinity;
  return {
    report(update) {
      if (ended) return;
      const t = now();
      if (t - last < min_ms) return;
      last = t;
      try {
        const answer = receiver(update) as unknown;
        if (typeof (answer as { catch?: unknown } | null)?.catch === "function")
          (answer as Promise<unknown>).catch(() => {});
      } catch {
        // The receiver's failure is its own: the call goes on.
      }
    },
    end() {
      ended = true;
    },
  };
}

export interface LogRelay {
  /** What the tool's `ctx.log` is. */
  log: CallLog;
  /** The call answered: later entries are dropped. */
  end(): void;
}

/**
 * A relay's `ctx.log`. A class, its `level` a getter on the prototype: an object literal with a getter is built in
 * dictionary mode, a property table of its own for every call that has a log (`call-context.ts` says more); `send`
 * is its own function, so it still works taken off the object.
 */
class RelayedLog implements CallLog {
  readonly #receiver: CallLog;
  #ended = false;
  readonly send: (entry: LogEntry) => void;

  constructor(receiver: CallLog) {
    this.#receiver = receiver;
    this.send = (entry) => {
      if (this.#ended) return;
      try {
        const answer = receiver.send(entry) as unknown;
        if (typeof (answer as { catch?: unknown } | null)?.catch === "function")
          (answer as Promise<unknown>).catch(() => {});
      } catch {
        // The receiver's failure is its own: the call goes on.
      }
    };
  }

  /** The receiver's, read at each use: a receiver may change the level it wants while the call runs. */
  get level(): LogLevel {
    return this.#receiver.level;
  }

  end(): void {
    this.#ended = true;
  }
}

/**
 * The caller's log, guarded like progress: nothing after the call has answered, and whatever the
 * receiver throws or rejects with is dropped. How much a tool may send is the tool's bound (a
 * proxied upstream's: `mcp/proxy/upstream-notices.ts`).
 */
export function logRelay(receiver: CallLog): LogRelay {
  const log = new RelayedLog(receiver);
  return { log, end: () => log.end() };
}
