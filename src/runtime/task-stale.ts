/**
 * A task whose process stopped: the runner running a task writes it once a poll (a heartbeat), so
 * a live task not written for `stale_ms`, and not running in this process, belonged to a process
 * that stopped, and is failed — when someone reads it (`staleView`) and, without a reader, by the
 * runner's sweep (`staleSweeper`). Either way through one update fenced on the status it was seen
 * with and on its updated_at (`TaskFence.updated_before`): a heartbeat or a final status another
 * process writes first wins, so a task still written, or one that ended meanwhile, keeps its status.
 */
import { isFinalStatus, staleBound, type TaskRecord, type TaskStore } from "../idempotency/tasks.js";

export interface StaleContext {
  tasks: TaskStore;
  clock: () => number;
  stale_ms: number;
  /** Whether this process runs the task (its heartbeat is then this process's own). */
  runsHere: (id: string) => boolean;
}

/** The most tasks one batch of a sweep marks failed; a full one is followed by the next soon. */
const SWEEP_BATCH = 100;

/** Marks `t` failed when it has not been written for its stale bound (`staleBound`); null when the fence did not hold. */
function failStale(ctx: StaleContext, t: TaskRecord, now: number): Promise<TaskRecord | null> {
  return ctx.tasks.update(
    t.id,
    [t.status],
    {
      status: "failed",
      status_message: `the toolgate process running this task stopped writing it ${Math.round((now - t.updated_at) / 1000)} s ago; whether the call finished is unknown: ask for its record (toolgate records) before running it again`,
      // What it waited on (questions, an approval) is no answer of the call's.
      result: null,
      now,
    },
    { updated_before: now - staleBound(t, ctx.stale_ms) + 1 },
  );
}

/** The task as readers see it: one whose process stopped writing it is failed (written so, once). */
export async function staleView(ctx: StaleContext, t: TaskRecord | null): Promise<TaskRecord | null> {
  if (t === null || isFinalStatus(t.status) || ctx.runsHere(t.id)) return t;
  const now = ctx.clock();
  if (now - t.updated_at < staleBound(t, ctx.stale_ms)) return t;
  return (await failStale(ctx, t, now)) ?? (await ctx.tasks.get(t.id, now));
}

export interface StaleSweeper {
  /** Marks failed the stale tasks of every owner not running here, a batch at most; how many it marked. */
  sweep(): Promise<number>;
  /** Stops the timer (and a batch due soon). */
  stop(): void;
}

/**
 * Sweeps every `stale_ms / 2` (so a task is failed at most 1.5 × `stale_ms` after its last write),
 * on timers that keep no process alive; a sweep still running when the next is due is not doubled,
 * and a store that fails one sweep is tried again at the next. A full batch that failed some is
 * followed by the next batch soon, as an immediate (one batch a turn of the event loop, its I/O
 * polled and calls served between them), not a period later; a batch that failed none waits for the period
 * (the tasks it found run here or were written meanwhile, and would be found again).
 */
export function staleSweeper(ctx: StaleContext): StaleSweeper {
  async function batch(): Promise<{ found: number; failed: number }> {
    const now = ctx.clock();
    const found = await ctx.tasks.stale({ before: now - ctx.stale_ms + 1, now, limit: SWEEP_BATCH });
    let failed = 0;
    for (const t of found) if (!ctx.runsHere(t.id) && (await failStale(ctx, t, now)) !== null) failed++;
    return { found: found.length, failed };
  }
  let inFlight = false;
  let stopped = false;
  let soon: NodeJS.Immediate | undefined;
  const tick = () => {
    if (inFlight || stopped) return;
    inFlight = true;
    batch()
      .then(
        ({ found, failed }) => found >= SWEEP_BATCH && failed > 0,
        () => false,
      )
      .then((more) => {
        inFlight = false;
        if (!more || stopped) return;
        // An immediate, not a 0 ms timeout: the event loop polls its I/O before it runs (a timeout due
        // meanwhile can run in the same timers phase as the batch before it).
        soon = setImmediate(tick);
        soon.unref();
      });
  };
  const timer = setInterval(tick, Math.max(1, Math.floor(ctx.stale_ms / 2)));
  timer.unref();
  return {
    sweep: async () => (await batch()).failed,
    stop: () => {
      stopped = true;
      clearInterval(timer);
      clearImmediate(soon);
    },
  };
}
