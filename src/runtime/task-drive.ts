/**
 * A task's call from its first answer to its final status: the heartbeat (the latest progress
 * line written once a poll, and another replica's cancel or stale fail seen), an A3 call's wait as
 * `input_required` for its approval and its second proposal, and the final write, fenced so a
 * task cancelled meanwhile stays cancelled.
 */
import type { JsonValue } from "../core/json.js";
import type { Observation } from "../core/observation.js";
import type { CallAsk, CallLog, ProgressUpdate } from "../core/tool.js";
import type { Store } from "../idempotency/store.js";
import { LIVE_STATUSES, type TaskRecord, type TaskStatus } from "../idempotency/tasks.js";
import type { CallOptions, Gateway, Proposal } from "./types.js";
import type { StartTask } from "./task-types.js";

/** The statuses of a task not yet final. */
export const LIVE: readonly TaskStatus[] = LIVE_STATUSES;

/** What driving a task reads: the runner's gateway, store, clock and poll, and its close. */
export interface DriveContext {
  gateway: Gateway;
  store: Store;
  clock: () => number;
  poll_ms: number;
  /** Aborted when the runner closes: ends the approval waits of this process. */
  closing: AbortSignal;
}

/** A task's call: its options for the gateway, and its latest progress line (written into the task once a poll). */
export interface TaskCall {
  state: { line: string | null };
  options: CallOptions;
}

/** While `relay()` holds, the call's progress and log reach the caller's receivers; `ask` puts its questions (`task-ask.ts`). */
export function taskCall(
  abort: AbortController,
  opts: StartTask,
  log?: CallLog,
  relay: () => boolean = () => true,
  ask?: CallAsk,
): TaskCall {
  const state = { line: null as string | null };
  const options: CallOptions = {
    signal: abort.signal,
    abandoned: abort.signal,
    principal: opts.owner,
    progress: (u: ProgressUpdate) => {
      state.line = u.message;
      if (relay()) opts.progress?.(u);
    },
    ...(log ? { log: { level: log.level, send: (entry) => void (relay() && log.send(entry)) } } : {}),
    ...(opts.trace ? { trace: opts.trace } : {}),
    ...(ask ? { ask } : {}),
  };
  return { state, options };
}

/** Drives a task from the call's first answer (`first`, already under way) to its final status; `told` hears each status. */
export async function drive(
  ctx: DriveContext,
  task: TaskRecord,
  proposal: Proposal,
  abort: AbortController,
  call: TaskCall,
  first: Promise<Observation>,
  told: (t: TaskRecord | null) => void,
): Promise<void> {
  const { tasks } = ctx.store;
  const { clock } = ctx;
  const options = call.options;
  let lastWritten: string | null = null;
  // Once a poll: the latest progress line (and a heartbeat), and whether another replica cancelled it.
  const tick = setInterval(() => {
    void (async () => {
      const current = await tasks.get(task.id, clock());
      // Cancelled by another replica, or failed by one's stale read or sweep (it took this process
      // for stopped): the task is over for everyone, and nobody can cancel it any more, so its call stops.
      if (current && !LIVE.includes(current.status)) {
        told(current);
        return abort.abort();
      }
      if (!current) return;
      const line = call.state.line;
      const message = current.status === "working" && line !== lastWritten ? line : current.status_message;
      if (
        (await tasks.update(task.id, [current.status], {
          status: current.status,
          status_message: message,
          now: clock(),
        })) !== null
      )
        lastWritten = message;
    })().catch(() => {
      // A store that failed this once is tried again at the next poll.
    });
  }, ctx.poll_ms);
  tick.unref();
  let answer: Observation | null = null;
  let failure: string | null = null;
  try {
    answer = await first;
    for (;;) {
      const approvalId = pendingApproval(answer);
      if (approvalId === null || abort.signal.aborted) break;
      const decided = await waitForApproval(
        ctx,
        task.id,
        answer,
        approvalId,
        AbortSignal.any([abort.signal, ctx.closing]),
        told,
      );
      if (!decided && ctx.closing.aborted && !abort.signal.aborted)
        failure = `toolgate shut down while this task waited for approval ${approvalId}; nothing was run, and the approval stays: propose the same call again with approval_id "${approvalId}"`;
      if (!decided) break;
      answer = await ctx.gateway.call({ ...proposal, approval_id: approvalId }, options);
    }
  } catch (err) {
    failure = `the call could not be completed: ${(err as Error)?.message ?? String(err)}`;
  } finally {
    clearInterval(tick);
  }
  const result = answer as unknown as JsonValue;
  const now = clock();
  const final =
    failure !== null
      ? { status: "failed" as const, status_message: failure, result: null, now }
      : {
          status: "completed" as const,
          status_message: answer!.ok ? null : `the call answered ${answer!.error?.code}`,
          result,
          now,
        };
  const ended = await tasks.update(task.id, LIVE, final);
  if (ended === null) {
    // Cancelled meanwhile: the task keeps that status and carries what the call left (stopped, or in
    // doubt) — unless it was still waiting for its approval: what it waited on is no answer of the
    // call's (nothing ran), so it keeps none, as the cancel left it.
    const left = failure === null && pendingApproval(answer!) === null ? result : null;
    told(await tasks.update(task.id, ["cancelled"], { status: "cancelled", result: left, now }));
  } else told(ended);
}

/**
 * Marks the task input_required until the approval is decided (its result meanwhile the
 * `approval_required` observation, which names the approval); false when it expired or the task
 * was cancelled.
 */
async function waitForApproval(
  ctx: DriveContext,
  id: string,
  asking: Observation,
  approvalId: string,
  signal: AbortSignal,
  told: (t: TaskRecord | null) => void,
): Promise<boolean> {
  const { tasks, approvals } = ctx.store;
  told(
    await tasks.update(id, ["working"], {
      status: "input_required",
      status_message: `waits for a person to decide approval ${approvalId} (toolgate approvals approve ${approvalId}, or deny)`,
      result: asking as unknown as JsonValue,
      now: ctx.clock(),
    }),
  );
  for (;;) {
    if (signal.aborted) return false;
    const a = await approvals.get(approvalId);
    if (!a || a.expires_at <= ctx.clock()) break;
    if (a.state !== "pending") break;
    await sleep(ctx.poll_ms, signal);
  }
  const resumed = await tasks.update(id, ["input_required"], {
    status: "working",
    status_message: null,
    result: null,
    now: ctx.clock(),
  });
  told(resumed);
  return resumed !== null;
}

/** The approval an answer waits for, when it is `approval_required` for a pending one. */
export function pendingApproval(o: Observation): string | null {
  if (o.error?.code !== "approval_required") return null;
  const id = o.error.detail?.approval_id;
  return typeof id === "string" ? id : null;
}

/** Resolves after `ms` (an unref'd timer), or as soon as `signal` aborts. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((done) => {
    const timer = setTimeout(finish, ms);
    timer.unref();
    function finish() {
      clearTimeout(timer);
      signal?.removeEventListener("abort", finish);
      done();
    }
    signal?.addEventListener("abort", finish, { once: true });
  });
}
