/**
 * The task runner's contract (`createTaskRunner` in `tasks.ts` implements it): its options, what a
 * start and a run take, and what each method answers.
 */
import type { Observation } from "../core/observation.js";
import type { CallAsk, CallLog, InputRequest, ProgressUpdate } from "../core/tool.js";
import type { JsonValue } from "../core/json.js";
import type { ApprovalRecord, Store } from "../idempotency/store.js";
import type { TaskRecord } from "../idempotency/tasks.js";
import type { Proposal } from "./types.js";
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
  /**
   * A working task not written for this long belonged to a process that stopped, ms: it is failed
   * when read, and by the runner's sweep every `stale_ms / 2`. At least twice `poll_ms` (the rest
   * is room for the store's latency and the replicas' clock skew; less is `invalid_config`).
   * Each task keeps the bound of the runner that started it (`TaskRecord.stale_ms`), and is failed
   * only once both that and the reader's have passed. Default 60,000.
   */
  stale_ms?: number;
  /**
   * Tasks one owner may have running in this process at once (each holds a call and a poll); one
   * more is refused (`invalid_task`) until one ends — by `run` before it starts a write (A2/A3),
   * and a read (A0/A1, answered in its request holding no place) only once it would have to go
   * on as a task. Default 128. A task answers its
   * tools/call at once, so without this one client could start calls without end past any
   * per-request bound.
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
  /**
   * Whom `max_live_per_owner` counts the task against, when coarser than `owner` (over HTTP the grant
   * a bearer verifies as, else the peer: a client sending a new bearer string per call is one caller).
   * Default `owner`.
   */
  quota?: string;
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
  /**
   * For a task `start` runs: the caller's own way to put the call's questions to its client while
   * the task runs (a 2025-11-25 session's requests naming the task), given the task. While a round
   * waits the task is `input_required`, then `working` again; one round at a time. Absent: the
   * call cannot ask.
   */
  ask?: (task: TaskRecord) => CallAsk;
}

export interface RunTask extends Omit<StartTask, "ask"> {
  /** The request's going away (its client cancelled it): aborts the call while it is answered inline; a task's is `cancel`. */
  signal?: AbortSignal;
  /** How long the call may answer inline, ms; default the runner's `task_after_ms`; 0: a task at once. */
  task_after_ms?: number;
  /** The call's log messages while it is answered inline (see `CallOptions.log`); a task's call has none. */
  log?: CallLog;
  /**
   * Present when the caller can answer questions through the task (`TaskRunner.answer`): the call
   * gets an `ask` (`task-ask.ts`), and this says why the caller cannot be asked one (its client
   * declared no such capability), or null when it can. Absent: the call cannot ask.
   */
  cannotAsk?: (request: InputRequest) => string | null;
}

/** What `run` answered: the call's own observation (it ended in time), or the task it goes on as. */
export type RunOutcome = { answer: Observation } | { task: TaskRecord };

export interface TaskRunner {
  /** Starts `proposal` as a task; refuses (ToolgateError `invalid_task`) a tool that may not run as one. */
  start(proposal: Proposal, options: StartTask): Promise<TaskRecord>;
  /**
   * Starts `proposal` and answers with its observation when it ends within `task_after_ms`,
   * else (or as soon as it waits for an approval) with the task it goes on as, once the store
   * holds it. Refuses as `start` does, except at the owner's bound: there a write (A2/A3: stopped
   * midway it would be left in doubt), and any call with `task_after_ms` 0, is refused before it
   * starts; a read (A0/A1) that ends within `task_after_ms` is answered as any call, and one still
   * running then is stopped (safe to repeat) and refused (`invalid_task`, saying so). Should the store fail to create the task, the
   * call is answered when it ends, as an ordinary call.
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
  /** The questions an `input_required` task waits on its caller to answer (its call's `ask`), read from its record; null when none. */
  questions(task: TaskRecord): Record<string, InputRequest> | null;
  /**
   * The questions an `input_required` task's call sent its client (`StartTask.ask`: requests naming
   * the task), read from its record, so any replica shows them; `here` says whether this process
   * runs the task — only it sent them, and only it takes their answers (the client's responses).
   * Null when none wait.
   */
  sent(task: TaskRecord): { requests: Record<string, InputRequest>; here: boolean } | null;
  /**
   * Records its owner's answers to the questions the task waits on (each already checked by the
   * caller's protocol); keys not asked, or answered before, are ignored. The keys recorded, or
   * null for a task unknown, expired or another owner's; refuses (`invalid_task`) one that does
   * not run in this process, and one whose questions were sent to its client (`sent`).
   */
  answer(id: string, owner: string, answers: Readonly<Record<string, JsonValue>>): Promise<string[] | null>;
  /**
   * Marks failed, now, the tasks of any owner on the store that no process has written for
   * `stale_ms` (and for the task's own, when longer) and that do not run here (the runner does it every `stale_ms / 2` on its own, on a
   * timer that keeps no process alive); how many it marked. A task written meanwhile, or one that
   * reached a final status, is left as it is.
   */
  sweep(): Promise<number>;
  /** Stops watching and sweeping; calls still running end with the gateway's close. */
  close(): void;
}
