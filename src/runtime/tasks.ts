/**
 * Calls that run as tasks: started by one request, run on in this process after it, their status
 * and result kept in the store's tasks (`idempotency/tasks.ts`), so a client that reconnects, or
 * asks another replica on the same store, reads them. A task runs the proposal through
 * `gateway.call` like any call; the task adds only where its answer waits.
 *
 * - An A3 call answered `approval_required` waits as `input_required` for the approval (read
 *   from the store, so a person may approve it through any replica or the CLI), then is proposed
 *   again with its approval id; the answer, whatever it is, completes the task.
 * - Cancelling (by its owner, on any replica) marks the task cancelled in the store; the process
 *   running it sees that within one poll and aborts the call through its signal, whose answer
 *   (stopped, or in doubt) becomes the cancelled task's result.
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
import type { JsonValue } from "../core/json.js";
import type { Observation } from "../core/observation.js";
import { AUTHORITY, type CallLog, type ProgressUpdate } from "../core/tool.js";
import { ToolgateError } from "../core/errors.js";
import { shownValue } from "../observation/escape.js";
import type { ApprovalRecord, Store } from "../idempotency/store.js";
import { isFinalStatus, type TaskRecord, type TaskStatus } from "../idempotency/tasks.js";
import type { CallOptions, Gateway, Proposal } from "./types.js";
import type { TraceContextInput } from "./trace-context.js";

export interface TaskRunnerOptions {
  /** The gateway's store: its tasks, and its approvals for the A3 wait. */
  store: Store;
  /** Epoch ms. Default Date.now. */
  clock?: () => number;
  /** How long a task is kept from its start, ms. Default one hour. */
  ttl_ms?: number;
  /** How often status is written and read back (and a client is told to poll), ms. Default 1000. */
  poll_ms?: number;
  /** A working task not written for this long belonged to a process that stopped, ms. Default 60,000. */
  stale_ms?: number;
  /**
   * Tasks one owner may have running in this process at once (each holds a call and a poll); one
   * more is refused (`invalid_task`) until one ends. Default 128. A task answers its tools/call at
   * once, so without this one client could start calls without end past any per-request bound.
   */
  max_live_per_owner?: number;
  /**
   * How long `run` lets a call answer in its own request before it goes on as a task, ms. Default
   * 1000 (DEFAULT_TASK_AFTER_MS): a quick call (`echo hi`) is answered as any call, and only one
   * that runs longer costs the client a task to poll. 0 makes every `run` a task at once.
   */
  task_after_ms?: number;
}

export interface StartTask {
  /** Who may read and cancel the task (the transport's principal: a bearer's holder, a peer). */
  owner: string;
  /** Lower than the runner's ttl_ms only (a client's requested ttl). */
  ttl_ms?: number;
  /** Receives the call's progress while the task runs (see `CallOptions.progress`). */
  progress?: (update: ProgressUpdate) => void;
  /**
   * Told each status this process gives the task (input_required, working again, its final
   * status; a cancel through this runner), once per change. A status another replica writes
   * (its cancel) is told when this process sees it, at the next poll.
   */
  onStatus?: (task: TaskRecord) => void;
  /** The caller's trace context, handed to the gateway with the call (see `CallOptions.trace`). */
  trace?: TraceContextInput;
}

export interface RunTask extends StartTask {
  /** The request's going away (its client cancelled it): aborts the call while it is answered inline; a task's is `cancel`. */
  signal?: AbortSignal;
  /** How long the call may answer inline, ms; default the runner's `task_after_ms`; 0: a task at once. */
  task_after_ms?: number;
  /** The call's log messages while it is answered inline (see `CallOptions.log`); a task's call has none. */
  log?: CallLog;
}

/** What `run` answered: the call's own observation (it ended in time), or the task it goes on as. */
export type RunOutcome = { answer: Observation } | { task: TaskRecord };

export interface TaskRunner {
  /** Starts `proposal` as a task; refuses (ToolgateError `invalid_task`) a tool that may not run as one. */
  start(proposal: Proposal, options: StartTask): Promise<TaskRecord>;
  /**
   * Starts `proposal` and answers with its observation when it ends within `task_after_ms`,
   * else (or as soon as it waits for an approval) with the task it goes on as, once the store
   * holds it. Refuses as `start` does. Should the store fail to create the task, the call is
   * answered when it ends, as an ordinary call.
   */
  run(proposal: Proposal, options: RunTask): Promise<RunOutcome>;
  /** The task, or null when unknown, expired or another owner's. */
  get(id: string, owner: string): Promise<TaskRecord | null>;
  /** Waits until the task is final (or `signal` aborts: then its current state); null as for `get`. */
  result(id: string, owner: string, signal?: AbortSignal): Promise<TaskRecord | null>;
  list(owner: string, page?: { after?: string; limit?: number }): Promise<TaskRecord[]>;
  /** Cancels a task not yet final; a final one is returned unchanged (`already_final`). */
  cancel(id: string, owner: string): Promise<{ task: TaskRecord; already_final: boolean } | null>;
  /**
   * The approval an `input_required` task waits for (while it waits, its `result` is the call's
   * `approval_required` observation), read from the store; null when it waits for nothing pending.
   */
  awaiting(task: TaskRecord): Promise<ApprovalRecord | null>;
  /** Stops watching; calls still running end with the gateway's close. */
  close(): void;
}

const DEFAULT_TTL_MS = 60 * 60_000;
const DEFAULT_POLL_MS = 1000;
const DEFAULT_STALE_MS = 60_000;
const LIVE: readonly TaskStatus[] = ["working", "input_required"];
const MAX_PAGE = 100;
const DEFAULT_MAX_LIVE_PER_OWNER = 128;
/** How long a call `run` starts may answer inline before it becomes a task, ms. */
export const DEFAULT_TASK_AFTER_MS = 1000;

/** The tools `gateway` lets run as tasks: those that say so, and A3 ones (their approval wait). */
export const mayRunAsTask = (tool: { effect: string; runsAsTask?: boolean | "required" }): boolean =>
  tool.runsAsTask === true ||
  tool.runsAsTask === "required" ||
  AUTHORITY[tool.effect as keyof typeof AUTHORITY] === "A3";

/**
 * How a tool takes tasks, as MCP's `execution.taskSupport` names it: "required" (only as a task,
 * `runsAsTask: "required"`), "optional" (as a task or not), or null (never: "forbidden").
 */
export function taskSupport(tool: {
  effect: string;
  runsAsTask?: boolean | "required";
}): "required" | "optional" | null {
  if (tool.runsAsTask === "required") return "required";
  return mayRunAsTask(tool) ? "optional" : null;
}

export function createTaskRunner(gateway: Gateway, options: TaskRunnerOptions): TaskRunner {
  const tasks = options.store.tasks;
  const approvals = options.store.approvals;
  const clock = options.clock ?? Date.now;
  const poll_ms = options.poll_ms ?? DEFAULT_POLL_MS;
  const stale_ms = options.stale_ms ?? DEFAULT_STALE_MS;
  const maxLive = options.max_live_per_owner ?? DEFAULT_MAX_LIVE_PER_OWNER;
  const taskAfter = options.task_after_ms ?? DEFAULT_TASK_AFTER_MS;
  if (!Number.isSafeInteger(taskAfter) || taskAfter < 0)
    throw new ToolgateError(
      "invalid_config",
      `task_after_ms must be a whole number of milliseconds, 0 or more (how long a call may answer in its request before it becomes a task), e.g. ${DEFAULT_TASK_AFTER_MS}; received ${typeof taskAfter === "number" ? String(taskAfter) : shownValue(taskAfter)}`,
    );
  /** Tasks running here, by owner (an owner's entry goes when its last task ends). */
  const liveByOwner = new Map<string, number>();
  /** Tasks running here: their abort, and who waits for their end. */
  const running = new Map<
    string,
    { abort: AbortController; ended: Promise<void>; told: (t: TaskRecord | null) => void }
  >();
  let closed = false;
  // Ends the approval waits of this process when the runner closes (a call that runs ends with the gateway's close).
  const closing = new AbortController();

  const owned = (t: TaskRecord | null, owner: string) => (t !== null && t.owner === owner ? t : null);

  /** The task as readers see it: one whose process stopped writing it is failed (written so, once). */
  async function view(t: TaskRecord | null): Promise<TaskRecord | null> {
    if (t === null || isFinalStatus(t.status) || running.has(t.id)) return t;
    const now = clock();
    if (now - t.updated_at < stale_ms) return t;
    const failed = await tasks.update(t.id, [t.status], {
      status: "failed",
      status_message: `the toolgate process running this task stopped writing it ${Math.round((now - t.updated_at) / 1000)} s ago; whether the call finished is unknown: ask for its record (toolgate records) before running it again`,
      now,
    });
    return failed ?? (await tasks.get(t.id, now));
  }

  /**
   * A task's call: its options for the gateway, and its latest progress line (written into the
   * task once a poll). While `relay()` holds, its progress and log reach the caller's receivers.
   */
  function taskCall(abort: AbortController, opts: StartTask, log?: CallLog, relay: () => boolean = () => true) {
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
    };
    return { state, options };
  }

  /** Drives a task from the call's first answer (`first`, already under way) to its final status. */
  async function drive(
    task: TaskRecord,
    proposal: Proposal,
    abort: AbortController,
    call: ReturnType<typeof taskCall>,
    first: Promise<Observation>,
  ) {
    const told = running.get(task.id)!.told;
    const options = call.options;
    let lastWritten: string | null = null;
    // Once a poll: the latest progress line (and a heartbeat), and whether another replica cancelled it.
    const tick = setInterval(() => {
      void (async () => {
        const current = await tasks.get(task.id, clock());
        if (current?.status === "cancelled") {
          told(current);
          return abort.abort();
        }
        if (!current || !LIVE.includes(current.status)) return;
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
    }, poll_ms);
    tick.unref();
    let answer: Observation | null = null;
    let failure: string | null = null;
    try {
      answer = await first;
      for (;;) {
        const approvalId = pendingApproval(answer);
        if (approvalId === null || abort.signal.aborted) break;
        const decided = await waitForApproval(
          task.id,
          answer,
          approvalId,
          AbortSignal.any([abort.signal, closing.signal]),
          told,
        );
        if (!decided && closing.signal.aborted && !abort.signal.aborted)
          failure = `toolgate shut down while this task waited for approval ${approvalId}; nothing was run, and the approval stays: propose the same call again with approval_id "${approvalId}"`;
        if (!decided) break;
        answer = await gateway.call({ ...proposal, approval_id: approvalId }, options);
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
      // Cancelled meanwhile: the task keeps that status and carries what the call left (stopped, or in doubt).
      told(
        await tasks.update(task.id, ["cancelled"], {
          status: "cancelled",
          result: failure === null ? result : null,
          now,
        }),
      );
    } else told(ended);
  }

  /**
   * Marks the task input_required until the approval is decided (its result meanwhile the
   * `approval_required` observation, which names the approval); false when it expired or the task
   * was cancelled.
   */
  async function waitForApproval(
    id: string,
    asking: Observation,
    approvalId: string,
    signal: AbortSignal,
    told: (t: TaskRecord | null) => void,
  ): Promise<boolean> {
    told(
      await tasks.update(id, ["working"], {
        status: "input_required",
        status_message: `waits for a person to decide approval ${approvalId} (toolgate approvals approve ${approvalId}, or deny)`,
        result: asking as unknown as JsonValue,
        now: clock(),
      }),
    );
    for (;;) {
      if (signal.aborted) return false;
      const a = await approvals.get(approvalId);
      if (!a || a.expires_at <= clock()) break;
      if (a.state !== "pending") break;
      await sleep(poll_ms, signal);
    }
    const resumed = await tasks.update(id, ["input_required"], {
      status: "working",
      status_message: null,
      result: null,
      now: clock(),
    });
    told(resumed);
    return resumed !== null;
  }

  async function get(id: string, owner: string): Promise<TaskRecord | null> {
    return owned(await view(owned(await tasks.get(id, clock()), owner)), owner);
  }

  /** Refuses what may not start (see `start`); else counts the owner's new live call and returns its release. */
  function admit(proposal: Proposal, opts: StartTask, asked = true): () => void {
    if (closed) throw new ToolgateError("invalid_task", "the task runner is closed; nothing was started");
    const tool = gateway.tools.get(String(proposal.tool));
    if (tool && !mayRunAsTask(tool)) {
      const allowed = [...gateway.tools.values()].filter(mayRunAsTask).map((t) => t.name);
      throw new ToolgateError(
        "invalid_task",
        `${tool.name} cannot run as a task: only tools that may run long or wait for an approval can (${allowed.join(", ") || "none in this catalog"}); call it without a task`,
      );
    }
    if (typeof opts.owner !== "string" || opts.owner === "")
      throw new ToolgateError(
        "invalid_task",
        `owner must be a non-empty string naming the caller (a bearer's holder, a peer address); received ${JSON.stringify(opts.owner)}; pass the principal the transport authenticated`,
      );
    const live = liveByOwner.get(opts.owner) ?? 0;
    if (live >= maxLive)
      throw new ToolgateError(
        "invalid_task",
        `${opts.owner.slice(0, 100)} already has ${live} tasks running, the most one caller may (max_live_per_owner ${maxLive}); nothing was started: wait for one to end (tasks/get), cancel one (tasks/cancel)${asked ? ", or call without a task" : ", then call again"}`,
      );
    // Counted before the store is awaited, so a burst of starts cannot all pass the check at once.
    liveByOwner.set(opts.owner, live + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const left = (liveByOwner.get(opts.owner) ?? 1) - 1;
      if (left <= 0) liveByOwner.delete(opts.owner);
      else liveByOwner.set(opts.owner, left);
    };
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
    };
  }

  /** Keeps a stored task as running here while `drive` runs it; `release` frees its owner's place after. */
  function track(
    task: TaskRecord,
    abort: AbortController,
    opts: StartTask,
    release: () => void,
    driven: () => Promise<void>,
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
    const here = { abort, ended: Promise.resolve(), told };
    running.set(task.id, here);
    here.ended = driven()
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
      const release = admit(proposal, opts);
      const task = newTask(proposal, opts);
      try {
        await tasks.create(task);
      } catch (err) {
        release();
        throw err;
      }
      const abort = new AbortController();
      const call = taskCall(abort, opts);
      track(task, abort, opts, release, () => drive(task, proposal, abort, call, gateway.call(proposal, call.options)));
      return task;
    },
    async run(proposal, opts) {
      // The caller did not ask for a task (the server decides), so "call without one" is no advice.
      const release = admit(proposal, opts, false);
      const abort = new AbortController();
      // While the call answers in its request, the request's going away is its cancel.
      const requestGone = () => abort.abort();
      if (opts.signal?.aborted) abort.abort();
      else opts.signal?.addEventListener("abort", requestGone, { once: true });
      let inline = true;
      const call = taskCall(abort, opts, opts.log, () => inline);
      const first = gateway.call(proposal, call.options);
      // Awaited below, inline or by the task; a failure meanwhile is not left unhandled.
      first.catch(() => {});
      const within = opts.task_after_ms ?? taskAfter;
      // 0: a task at once, whatever the call does meanwhile.
      const early =
        within <= 0
          ? null
          : await new Promise<{ obs: Observation } | { error: unknown } | null>((done) => {
              const timer = setTimeout(() => done(null), within);
              first.then(
                (obs) => (clearTimeout(timer), done({ obs })),
                (error: unknown) => (clearTimeout(timer), done({ error })),
              );
            });
      const answerInline = async (): Promise<RunOutcome> => {
        opts.signal?.removeEventListener("abort", requestGone);
        try {
          return { answer: await first };
        } finally {
          release();
        }
      };
      // Ended in time (an approval wait is no end: a person may take long), or its request is gone.
      if ((early !== null && !("obs" in early && pendingApproval(early.obs) !== null)) || abort.signal.aborted)
        return answerInline();
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
      track(task, abort, opts, release, () => drive(task, proposal, abort, call, first));
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
      const cancelled = await tasks.update(id, LIVE, {
        status: "cancelled",
        status_message: "cancelled by its owner",
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
    close() {
      closed = true;
      closing.abort();
    },
  };
}

/** The approval an answer waits for, when it is `approval_required` for a pending one. */
function pendingApproval(o: Observation): string | null {
  if (o.error?.code !== "approval_required") return null;
  const id = o.error.detail?.approval_id;
  return typeof id === "string" ? id : null;
}

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
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
