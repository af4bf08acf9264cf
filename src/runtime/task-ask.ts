/**
 * A task's questions: what a tool asks its caller (`ToolContext.ask`, a proxied upstream task's
 * input requests) while its call runs as a task `run` started. The runner cannot reach the caller
 * mid-call (the 2026-07-28 tasks extension has no server-to-client request), so a question is
 * held: the task goes `input_required` with the questions in its record (`result` is
 * `{ input_requests }` while it waits, so `tasks/get` on any replica shows them), the caller reads
 * them and answers through the runner (`TaskRunner.answer`, only the task's owner, only in the
 * process running it), and once every question of the round is answered the task is `working`
 * again and the tool gets the answers. One round at a time; a cancel, the call's time limit or
 * the runner's close ends the wait (the ask rejects with the call's abort).
 *
 * A question asked while `run` still lets the call answer in its request makes the call go on
 * as a task at once (`asked`), as an approval wait does; should no task be stored for it, the
 * ask rejects saying so.
 */
import type { JsonValue } from "../core/json.js";
import { isPlainObject } from "../core/json.js";
import type { CallAsk, InputRequest } from "../core/tool.js";
import { ToolgateError } from "../core/errors.js";
import type { TaskRecord, TaskStore } from "../idempotency/tasks.js";

/** Where a waiting task's record keeps its questions (the `result` of an `input_required` task). */
const REQUESTS_FIELD = "input_requests";

/**
 * Beside them, `true` when they were sent to the client as requests naming the task (`directAsk`,
 * answered by the client's responses to them in the process that sent them), rather than held for
 * `TaskRunner.answer`.
 */
const SENT_FIELD = "sent_to_client";

/** A waiting task's questions, and whether they were sent to its client (else held for its owner's answers). */
function recordedQuestions(t: TaskRecord): { requests: Record<string, InputRequest>; sent: boolean } | null {
  if (t.status !== "input_required" || !isPlainObject(t.result)) return null;
  const requests = t.result[REQUESTS_FIELD];
  if (!isPlainObject(requests)) return null;
  return { requests: requests as unknown as Record<string, InputRequest>, sent: t.result[SENT_FIELD] === true };
}

/** The questions a task holds for its owner to answer (`TaskRunner.answer`), from its record; null when it waits on none. */
export function heldQuestions(t: TaskRecord): Record<string, InputRequest> | null {
  const q = recordedQuestions(t);
  return q !== null && !q.sent ? q.requests : null;
}

/** The questions a task's call sent its client as requests naming the task (`directAsk`), from its record; null when none wait. */
export function sentQuestions(t: TaskRecord): Record<string, InputRequest> | null {
  const q = recordedQuestions(t);
  return q !== null && q.sent ? q.requests : null;
}

/** Why a caller cannot be asked a question (a method, in its params' mode), or null when it can. */
export type CannotAsk = (request: InputRequest) => string | null;

interface Round {
  requests: Readonly<Record<string, InputRequest>>;
  answers: Record<string, JsonValue>;
  done: (answers: Record<string, JsonValue>) => void;
}

export interface TaskAskContext {
  tasks: TaskStore;
  clock: () => number;
  /** Why the caller cannot be asked a question; absent: it can be asked anything. */
  cannotAsk?: CannotAsk;
}

/** The questions of one task's call: its `ask`, and the answers its owner sends. */
export class TaskQuestions {
  private round: Round | null = null;
  /** An ask waiting for its task to be stored: a second ask meanwhile is the second round at once. */
  private asking = false;
  private stored: Promise<TaskRecord | null>;
  private store!: (t: TaskRecord | null) => void;
  private told: (t: TaskRecord | null) => void = () => {};
  private signalAsked!: () => void;
  /** Resolves when the call first asks (while `run` waits inline: go on as a task now). */
  readonly asked: Promise<void>;

  constructor(private readonly ctx: TaskAskContext) {
    this.stored = new Promise((done) => (this.store = done));
    this.asked = new Promise((done) => (this.signalAsked = done));
  }

  /** The task is stored and runs here; `told` hears each status a round gives it. */
  attach(task: TaskRecord, told: (t: TaskRecord | null) => void): void {
    this.told = told;
    this.store(task);
  }

  /** No task will be stored for this call (it answered in its request): a question cannot be held. */
  detach(): void {
    this.store(null);
  }

  /** The call's `ask` (`CallOptions.ask`). */
  readonly ask: CallAsk = async (requests, signal) => {
    for (const r of Object.values(requests)) {
      const why = this.ctx.cannotAsk?.(r) ?? null;
      if (why !== null) throw new Error(`this client cannot be asked ${r.method}: ${why}`);
    }
    if (this.round !== null || this.asking) throw new Error("this task already waits for answers; one round at a time");
    this.asking = true;
    let task: Awaited<typeof this.stored>;
    try {
      this.signalAsked();
      task = await this.stored;
    } finally {
      this.asking = false;
    }
    if (task === null)
      throw new Error("this call could not go on as a task, so its question cannot be held for its caller");
    signal.throwIfAborted();
    const { tasks, clock } = this.ctx;
    return new Promise<Record<string, JsonValue>>((resolve, reject) => {
      const end = (err?: unknown) => {
        signal.removeEventListener("abort", aborted);
        this.round = null;
        if (err !== undefined) reject(err);
      };
      const aborted = () => end(signal.reason ?? new Error("the call was stopped"));
      signal.addEventListener("abort", aborted, { once: true });
      const round: Round = {
        requests,
        answers: {},
        done: (answers) => {
          end();
          // Working again before the tool goes on: a poll never shows answered questions.
          void tasks
            .update(task.id, ["input_required"], {
              status: "working",
              status_message: null,
              result: null,
              now: clock(),
            })
            .then(
              (t) => (this.told(t), resolve(answers)),
              (err: unknown) => reject(err),
            );
        },
      };
      this.round = round;
      tasks
        .update(task.id, ["working"], {
          status: "input_required",
          status_message: waitingMessage(requests, "tasks/get shows them as inputRequests, tasks/update answers them"),
          result: { [REQUESTS_FIELD]: requests as unknown as JsonValue },
          now: clock(),
        })
        .then(
          (t) => {
            // Cancelled, or failed by another replica, meanwhile: the call's abort follows.
            if (t === null) return end(new Error("the task is no longer running, so its question was not asked"));
            this.told(t);
          },
          (err: unknown) => end(err),
        );
    });
  };

  /**
   * Records `answers` (checked by the caller's protocol) to the questions of the round under way;
   * keys not asked, or answered before, are ignored. Returns the keys recorded; the round ends
   * (the task working again, the tool answered) once each of its questions has an answer.
   */
  answer(answers: Readonly<Record<string, JsonValue>>): string[] {
    const round = this.round;
    if (round === null) return [];
    const recorded = Object.keys(answers).filter((k) => k in round.requests && !(k in round.answers));
    for (const k of recorded) round.answers[k] = answers[k]!;
    if (Object.keys(round.requests).every((k) => k in round.answers)) round.done(round.answers);
    return recorded;
  }
}

/** What a waiting task's status message says of a round of `requests`, and where its answers come from. */
function waitingMessage(requests: Readonly<Record<string, InputRequest>>, where: string): string {
  const n = Object.keys(requests).length;
  const methods = [...new Set(Object.values(requests).map((r) => r.method))].join(", ");
  return `waits for its caller to answer ${n === 1 ? "1 question" : `${n} questions`} (${methods}): ${where}`;
}

/**
 * A task's questions put to its caller by the caller's own `ask` (`StartTask.ask`: a 2025-11-25
 * client, sent requests naming the task): the task is `input_required` while a round waits, with
 * the round's questions in its record as a held round's are (`sentQuestions` reads them, so every
 * replica shows what is asked; only this process, which sent them, takes the answers), and
 * `working` again, the questions gone, once it is answered or once the ask rejects (the client
 * refused or did not answer: the tool may go on, and ask again); `told` hears both. One round at a time.
 */
export function directAsk(
  ctx: Omit<TaskAskContext, "cannotAsk">,
  task: TaskRecord,
  ask: CallAsk,
  told: (t: TaskRecord | null) => void,
): CallAsk {
  let asking = false;
  return async (requests, signal) => {
    if (asking) throw new Error("this task already waits for answers; one round at a time");
    asking = true;
    try {
      const waiting = await ctx.tasks.update(task.id, ["working"], {
        status: "input_required",
        status_message: waitingMessage(requests, "sent to its client as requests of this task"),
        result: { [REQUESTS_FIELD]: requests as unknown as JsonValue, [SENT_FIELD]: true },
        now: ctx.clock(),
      });
      // Cancelled, or failed by another replica, meanwhile: the call's abort follows.
      if (waiting === null) throw new Error("the task is no longer running, so its question was not asked");
      told(waiting);
      // Answered or not, the round is over and the task runs on (a cancel meanwhile: it stays cancelled).
      const working = async () =>
        told(
          await ctx.tasks.update(task.id, ["input_required"], {
            status: "working",
            status_message: null,
            result: null,
            now: ctx.clock(),
          }),
        );
      let answers: Record<string, JsonValue>;
      try {
        answers = await ask(requests, signal);
      } catch (err) {
        // The ask's own failure is the one to tell, not the store's.
        await working().catch(() => {});
        throw err;
      }
      await working();
      return answers;
    } finally {
      asking = false;
    }
  };
}

/** The runner's refusal of answers to a task whose questions went to its client as requests (`directAsk`). */
export function sentToClient(id: string): ToolgateError {
  return new ToolgateError(
    "invalid_task",
    `task ${id} sent its questions to its client as requests naming the task (a 2025-11-25 task), so they are answered by responding to those requests, not here: call tasks/result of the task in the session that started it, on the toolgate process that runs it, to be sent them`,
  );
}

/** The runner's refusal of answers to a task that is not running in this process. */
export function notRunningHere(id: string): ToolgateError {
  return new ToolgateError(
    "invalid_task",
    `task ${id} does not run in this process, which holds no question of it: send its answers to the toolgate process that runs it (over HTTP, set the Mcp-Name header to the task id so a balancer routes them there)`,
  );
}
