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

/** The most tasks one sweep marks failed; more wait for the next. */
const SWEEP_BATCH = 100;

/** Marks `t` failed when it has not been written for its stale bound (`staleBound`); null when the fence did not hold. */
function failStale(ctx: StaleContext, t: TaskRecord, now: number): Promise<TaskRecord | null> {
  return ctx.tasks.update(
    t.id,
    [t.status],
    {
      status: "failed",
      status_message: `the toolgate process running this task stopped writing it ${Math.round((now - t.updated_at) / 1000)} s ago; whether the call finished is unknown: ask for its record (toolgate records) before running it again`,
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
  /** Stops the timer. */
  stop(): void;
}

/**
 * Sweeps every `stale_ms / 2` (so a task is failed at most 1.5 × `stale_ms` after its last write),
 * on a timer that keeps no process alive; a sweep still running when the next is due is not doubled,
 * and a store that fails one sweep is tried again at the next.
 */
export function staleSweeper(ctx: StaleContext): StaleSweeper {
  async function sweep(): Promise<number> {
    const now = ctx.clock();
    const found = await ctx.tasks.stale({ before: now - ctx.stale_ms + 1, now, limit: SWEEP_BATCH });
    let failed = 0;
    for (const t of found) if (!ctx.runsHere(t.id) && (await failStale(ctx, t, now)) !== null) failed++;
    return failed;
  }
  let inFlight = false;
  const timer = setInterval(
    () => {
      if (inFlight) return;
      inFlight = true;
      sweep()
        .catch(() => 0)
        .finally(() => (inFlight = false));
    },
    Math.max(1, Math.floor(ctx.stale_ms / 2)),
  );
  timer.unref();
  return { sweep, stop: () => clearInterval(timer) };
}
