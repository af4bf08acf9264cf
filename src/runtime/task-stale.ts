/**
 * A task whose process stopped: the runner running a task writes it once a poll (a heartbeat), so
 * a live task not written for `stale_ms`, and not running in this process, belonged to a process
 * that stopped, and is failed (written so, once, fenced on the status it was read with).
 */
import { isFinalStatus, type TaskRecord, type TaskStore } from "../idempotency/tasks.js";

export interface StaleContext {
  tasks: TaskStore;
  clock: () => number;
  stale_ms: number;
  /** Whether this process runs the task (its heartbeat is then this process's own). */
  runsHere: (id: string) => boolean;
}

/** The task as readers see it: one whose process stopped writing it is failed (written so, once). */
export async function staleView(ctx: StaleContext, t: TaskRecord | null): Promise<TaskRecord | null> {
  if (t === null || isFinalStatus(t.status) || ctx.runsHere(t.id)) return t;
  const now = ctx.clock();
  if (now - t.updated_at < ctx.stale_ms) return t;
  const failed = await ctx.tasks.update(t.id, [t.status], {
    status: "failed",
    status_message: `the toolgate process running this task stopped writing it ${Math.round((now - t.updated_at) / 1000)} s ago; whether the call finished is unknown: ask for its record (toolgate records) before running it again`,
    now,
  });
  return failed ?? (await ctx.tasks.get(t.id, now));
}
