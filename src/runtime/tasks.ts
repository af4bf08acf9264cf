/**
 * Calls that run as tasks: started by one request, run on in this process after it, their status
 * and result kept in the store's tasks (`idempotency/tasks.ts`), so a client that reconnects, or
 * asks another replica on the same store, reads them. A task runs the proposal through
 * `gateway.call` like any call; the task adds only where its answer waits.
 *
 * - An A3 call answered `approval_required` waits as `input_required` for the approval (read
 *   from the store, so a person may approve it through any replica or the CLI), then is proposed
 *   again with its approval id; the answer, whatever it is, completes the task.
 * - A question the call asks goes to the caller's own `ask` (`StartTask.ask`), the task
 *   `input_required` while it waits; for a call `run` starts, it is held in the task (`task-ask.ts`).
 * - Cancelling (by its owner, on any replica) marks the task cancelled in the store; the process
 *   running it sees that within one poll and aborts the call through its signal, whose answer
 *   (stopped, or in doubt) becomes the cancelled task's result; one cancelled while it waited for
 *   its approval has none (nothing ran, and the approval it waited on is no answer).
 * - While it runs, the runner writes the call's latest progress line into the task once a poll
 *   (`status_message`), which also tells readers the process is alive: a task not written for
 *   `stale_ms` belonged to a process that stopped, and reads as failed.
 *
 * - `run` is for a caller that decides itself whether a call becomes a task (the 2026-07-28 tasks
 *   extension): the call starts at once, and one that answers within `task_after_ms` is answered
 *   as an ordinary call, no task ever written; one still running then, or one waiting for an
 *   approval, goes on as a task, created in the store before `run` returns it. Either way the
 *   call is proposed once: the answer is that one call's.
 *
 * Only the owner (a principal the transport names) reads, lists or cancels a task; to anyone else
 * it does not exist.
 */
import { randomBytes } from "node:crypto";
import type { Observation } from "../core/observation.js";
import { ToolgateError } from "../core/errors.js";
import { shownValue } from "../observation/escape.js";
import { isFinalStatus, type TaskRecord, type TaskStatus } from "../idempotency/tasks.js";
import type { Gateway, Proposal } from "./types.js";
import type { RunOutcome, StartTask, TaskRunner, TaskRunnerOptions } from "./task-types.js";
import { drive, LIVE, pendingApproval, sleep, taskCall, type DriveContext } from "./task-drive.js";
import { ownerBound } from "./task-owners.js";
import { staleSweeper, staleView, type StaleContext } from "./task-stale.js";
import { directAsk, heldQuestions, notRunningHere, sentQuestions, sentToClient, TaskQuestions } from "./task-ask.js";
import type { CallAsk } from "../core/tool.js";
import { refuseUnlessTaskTool, repeatable } from "./task-tools.js";

export type { RunOutcome, RunTask, StartTask, TaskRunner, TaskRunnerOptions } from "./task-types.js";
export { mayRunAsTask, taskSupport } from "./task-tools.js";

const DEFAULT_TTL_MS = 60 * 60_000;
const DEFAULT_POLL_MS = 1000;
const DEFAULT_STALE_MS = 60_000;
const MAX_PAGE = 100;
const DEFAULT_MAX_LIVE_PER_OWNER = 128;
/** How long a call `run` starts may answer inline before it becomes a task, ms. */
export const DEFAULT_TASK_AFTER_MS = 1000;

/** A value that arrived, for a message. */
const shown = (v: unknown) => (typeof v === "number" ? String(v) : shownValue(v));

/** Why a read stopped at the owner's bound was refused, from its `cancelled` answer. */
function stoppedAtBound(answer: Observation, within: number): string {
  const detail = answer.error?.detail;
  const left =
    detail?.cancelled === "before_start"
      ? "before it started: nothing was run"
      : detail?.cancelled === "in_doubt"
        ? `after it had started, so it may have done part of its work: its record is in doubt (key ${String(detail.key)}) and repeating it is refused until it is settled (toolgate records)`
        : "(it only reads or is idempotent, so calling again is safe)";
  return `this call did not end within task_after_ms (${within} ms), so it would have had to go on as one, and was stopped ${left}`;
}

export function createTaskRunner(gateway: Gateway, options: TaskRunnerOptions): TaskRunner {
  const tasks = options.store.tasks;
  const approvals = options.store.approvals;
  const clock = options.clock ?? Date.now;
  const poll_ms = options.poll_ms ?? DEFAULT_POLL_MS;
  const stale_ms = options.stale_ms ?? DEFAULT_STALE_MS;
  const owners = ownerBound(options.max_live_per_owner ?? DEFAULT_MAX_LIVE_PER_OWNER);
  const taskAfter = options.task_after_ms ?? DEFAULT_TASK_AFTER_MS;
  if (!Number.isSafeInteger(taskAfter) || taskAfter < 0)
    throw new ToolgateError(
      "invalid_config",
      `task_after_ms must be a whole number of milliseconds, 0 or more (how long a call may answer in its request before it becomes a task), e.g. ${DEFAULT_TASK_AFTER_MS}; received ${shown(taskAfter)}`,
    );
  if (!Number.isSafeInteger(poll_ms) || poll_ms < 1)
    throw new ToolgateError(
      "invalid_config",
      `poll_ms must be a whole number of milliseconds, 1 or more (how often a running task is written and read back), e.g. ${DEFAULT_POLL_MS}; received ${shown(poll_ms)}`,
    );
  // A heartbeat lands a poll after the last plus the store's latency, and replicas' clocks differ:
  // a bound of one poll and a bit fails the live tasks of other replicas as a matter of course.
  if (!Number.isSafeInteger(stale_ms) || stale_ms < 2 * poll_ms)
    throw new ToolgateError(
      "invalid_config",
      `stale_ms must be a whole number of milliseconds at least twice poll_ms (a running task is written once a poll, so one not written for stale_ms belonged to a process that stopped; the rest is room for the store's latency and the replicas' clock skew); received stale_ms ${shown(stale_ms)} with poll_ms ${poll_ms}: set stale_ms to ${2 * poll_ms} or more (default ${DEFAULT_STALE_MS}), or lower poll_ms`,
    );
  /** Tasks running here: their abort, and who waits for their end. */
  const running = new Map<
    string,
    {
      abort: AbortController;
      ended: Promise<void>;
      told: (t: TaskRecord | null) => void;
      questions: TaskQuestions | null;
    }
  >();
  let closed = false;
  // Ends the approval waits of this process when the runner closes (a call that runs ends with the gateway's close).
  const closing = new AbortController();
  const driving: DriveContext = { gateway, store: options.store, clock, poll_ms, closing: closing.signal };

  const owned = (t: TaskRecord | null, owner: string) => (t !== null && t.owner === owner ? t : null);
  const staleness: StaleContext = { tasks, clock, stale_ms, runsHere: (id) => running.has(id) };
  const view = (t: TaskRecord | null) => staleView(staleness, t);
  const sweeper = staleSweeper(staleness);

  async function get(id: string, owner: string): Promise<TaskRecord | null> {
    return owned(await view(owned(await tasks.get(id, clock()), owner)), owner);
  }

  /** Refuses what may not start as a task (see `start`); the owner's bound is the caller's to check. */
  function admit(proposal: Proposal): void {
    if (closed) throw new ToolgateError("invalid_task", "the task runner is closed; nothing was started");
    refuseUnlessTaskTool(gateway, proposal);
  }

  /** A new task's record, as of now. */
  function newTask(proposal: Proposal, opts: StartTask): TaskRecord {
    const now = clock();
    const ttl_ms = Math.min(
      options.ttl_ms ?? DEFAULT_TTL_MS,
      opts.ttl_ms !== undefined && opts.ttl_ms > 0 ? opts.ttl_ms : Infinity,
    );
    return {
      id: `tk_${now.toString(36).padStart(9, "0")}_${randomBytes(16).toString("base64url")}`,
      tool: String(proposal.tool),
      owner: opts.owner,
      status: "working",
      status_message: null,
      result: null,
      created_at: now,
      updated_at: now,
      ttl_ms,
      expires_at: now + ttl_ms,
      poll_ms,
      stale_ms,
    };
  }

  /** Keeps a stored task as running here while `drive` runs it; `release` frees its owner's place after. */
  function track(
    task: TaskRecord,
    abort: AbortController,
    opts: StartTask,
    release: () => void,
    driven: (told: (t: TaskRecord | null) => void) => Promise<void>,
    questions: TaskQuestions | null = null,
  ): void {
    let last: TaskStatus = task.status;
    // Each status once: the poll that sees another replica's cancel and the final write may both report it.
    const told = (t: TaskRecord | null) => {
      if (t === null || t.status === last) return;
      last = t.status;
      try {
        opts.onStatus?.(t);
      } catch {
        // A listener's failure is its own; the task runs on.
      }
    };
    const here = { abort, ended: Promise.resolve(), told, questions };
    running.set(task.id, here);
    questions?.attach(task, told);
    here.ended = driven(told)
      .catch(() => {
        // The store failed on the final write: the task reads failed once stale.
      })
      .finally(() => {
        running.delete(task.id);
        release();
      });
  }
  return {
    get,
    async start(proposal, opts) {
      admit(proposal);
      const release = owners.take(opts.quota ?? opts.owner, true);
      const task = newTask(proposal, opts);
      try {
        await tasks.create(task);
      } catch (err) {
        release();
        throw err;
      }
      const abort = new AbortController();
      // The caller's own ask, set (with the task's status listener) before the call starts.
      let ask: CallAsk | undefined;
      const call = taskCall(abort, opts, undefined, undefined, opts.ask ? (r, signal) => ask!(r, signal) : undefined);
      track(task, abort, opts, release, (told) => {
        if (opts.ask) ask = directAsk({ tasks, clock }, task, opts.ask(task), told);
        return drive(driving, task, proposal, abort, call, gateway.call(proposal, call.options), told);
      });
      return task;
    },
    async run(proposal, opts) {
      admit(proposal);
      const within = opts.task_after_ms ?? taskAfter;
      // The caller did not ask for a task (the server decides), so "call without one" is no advice.
      const bound = opts.quota ?? opts.owner;
      let release = owners.tryTake(bound);
      // At the owner's bound a call that is a task at once is refused before it starts, and so is a
      // write: stopped past task_after_ms it would be left in doubt. A read runs in its request,
      // holding no place, and is refused only should it need to go on as a task (stopped: safe to repeat).
      if (release === null && (within <= 0 || !repeatable(gateway, proposal))) throw owners.refusal(bound, false);
      const abort = new AbortController();
      // While the call answers in its request, the request's going away is its cancel.
      const requestGone = () => abort.abort();
      if (opts.signal?.aborted) abort.abort();
      else opts.signal?.addEventListener("abort", requestGone, { once: true });
      let inline = true;
      // A question asked while the call answers inline makes it a task at once (its caller answers through it).
      const questions = opts.cannotAsk ? new TaskQuestions({ tasks, clock, cannotAsk: opts.cannotAsk }) : null;
      const call = taskCall(abort, opts, opts.log, () => inline, questions?.ask);
      const first = gateway.call(proposal, call.options);
      // Awaited below, inline or by the task; a failure meanwhile is not left unhandled.
      first.catch(() => {});
      // 0: a task at once, whatever the call does meanwhile.
      const early =
        within <= 0
          ? null
          : await new Promise<{ obs: Observation } | { error: unknown } | null>((done) => {
              const timer = setTimeout(() => done(null), within);
              void questions?.asked.then(() => (clearTimeout(timer), done(null)));
              first.then(
                (obs) => (clearTimeout(timer), done({ obs })),
                (error: unknown) => (clearTimeout(timer), done({ error })),
              );
            });
      const answerInline = async (): Promise<RunOutcome> => {
        opts.signal?.removeEventListener("abort", requestGone);
        questions?.detach();
        try {
          return { answer: await first };
        } finally {
          release?.();
        }
      };
      // Ended in time (an approval wait is no end: a person may take long), or its request is gone.
      if ((early !== null && !("obs" in early && pendingApproval(early.obs) !== null)) || abort.signal.aborted)
        return answerInline();
      // A place may have come free while the call ran in its request.
      release ??= owners.tryTake(bound);
      if (release === null) {
        // At the bound, a read (see above): it cannot go on as a task, so it stops here and is refused.
        const refuse = owners.stopped(bound);
        opts.signal?.removeEventListener("abort", requestGone);
        questions?.detach();
        abort.abort();
        const answer = await first;
        // It ended as it was stopped: its answer is as good as any.
        if (answer.error?.code !== "cancelled") return { answer };
        throw refuse(stoppedAtBound(answer, within));
      }
      const task = newTask(proposal, opts);
      try {
        await tasks.create(task);
      } catch {
        // No task could be stored: the call answers in its request, as it would without tasks.
        return answerInline();
      }
      // The request is answered with the task: from here only tasks/cancel stops the call.
      opts.signal?.removeEventListener("abort", requestGone);
      inline = false;
      track(task, abort, opts, release, (told) => drive(driving, task, proposal, abort, call, first, told), questions);
      return { task };
    },
    async result(id, owner, signal) {
      for (;;) {
        const t = await get(id, owner);
        if (t === null || isFinalStatus(t.status) || signal?.aborted) return t;
        const here = running.get(id);
        await (here ? Promise.race([here.ended, sleep(poll_ms, signal)]) : sleep(poll_ms, signal));
      }
    },
    async list(owner, page = {}) {
      // A page is at most 100 tasks, whatever a caller asks for.
      const limit = Math.max(1, Math.min(page.limit ?? MAX_PAGE, MAX_PAGE));
      const found = await tasks.list({
        owner,
        now: clock(),
        limit,
        ...(page.after !== undefined ? { after: page.after } : {}),
      });
      return Promise.all(found.map(async (t) => (await view(t)) ?? t));
    },
    async cancel(id, owner) {
      const t = await get(id, owner);
      if (t === null) return null;
      if (isFinalStatus(t.status)) return { task: t, already_final: true };
      // The questions or approval it waited on go with it (the process running it writes what the call left).
      const cancelled = await tasks.update(id, LIVE, {
        status: "cancelled",
        status_message: "cancelled by its owner",
        result: null,
        now: clock(),
      });
      const here = running.get(id);
      here?.told(cancelled);
      here?.abort.abort();
      if (cancelled === null) return { task: (await tasks.get(id, clock())) ?? t, already_final: true };
      return { task: cancelled, already_final: false };
    },
    async awaiting(t) {
      if (t.status !== "input_required" || t.result === null) return null;
      const approvalId = pendingApproval(t.result as unknown as Observation);
      if (approvalId === null) return null;
      const a = await approvals.get(approvalId);
      return a !== null && a.state === "pending" && a.expires_at > clock() ? a : null;
    },
    questions: heldQuestions,
    sent(t) {
      const requests = sentQuestions(t);
      return requests === null ? null : { requests, here: running.has(t.id) };
    },
    async answer(id, owner, answers) {
      const t = await get(id, owner);
      if (t === null) return null;
      if (sentQuestions(t) !== null) throw sentToClient(id);
      const here = running.get(id);
      if (!here) {
        if (heldQuestions(t) === null) return [];
        throw notRunningHere(id);
      }
      return here.questions?.answer(answers) ?? [];
    },
    sweep: () => sweeper.sweep(),
    close() {
      closed = true;
      closing.abort();
      sweeper.stop();
    },
  };
}
