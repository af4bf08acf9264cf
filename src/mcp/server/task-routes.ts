/**
 * Where a 2025-11-25 task's questions go (the requests naming the task that `call-ask.ts` sends
 * for a task-augmented tools/call, answered at once with its task). In that revision a client that
 * sees its task `input_required` calls `tasks/result`, and the server sends the task's requests on
 * that request's stream: over Streamable HTTP the one stream sure to be the client's, since the
 * tools/call was answered. So a question of a task goes, in this order:
 *
 * - on the stream of a `tasks/result` of the task waiting in this session (the latest one);
 * - else on the connection's stream for requests outside any request: over stdio the one stream,
 *   over HTTP the session's GET stream while one is open;
 * - else it waits for either to appear: a `tasks/result` of the task, or a GET stream.
 *
 * None goes before the client has named the task back (a tasks/get or tasks/result of it): a
 * request naming a task the client does not track yet is one it cannot place, and the call may ask
 * before its tools/call answer has even been read.
 *
 * A question that waits fails, naming what to do, as soon as the client shows it will not take it:
 * it read the task `input_required` with `tasks/get` while the question waited, and read it so
 * again once it had had time to call `tasks/result` (`resultGrace`: the task's pollInterval, at least
 * `MIN_RESULT_GRACE_MS`) and sent none. The revision tells a requestor that encounters
 * `input_required` to call `tasks/result` preemptively, and to poll no faster than pollInterval: an
 * honest client's reads in that grace (a poll already in flight, two quick reads before its
 * tasks/result) never fail it, while one that goes on polling instead fails at its first poll after
 * it. It also fails when the session closes, or after `timeoutMs` (the bound a question has, its
 * wait for the client to name the task included; `call-ask.ts` gives the request it sends only what
 * is left of it). A client that does none of these keeps it waiting until then. A question once
 * sent stays where it was sent: should the client drop that stream before it answers, the
 * question's own timeout ends it.
 */
import type { RequestId } from "@modelcontextprotocol/server";

/** The send option that puts a request on a waiting request's stream; empty: the stream outside any request. */
export type Route = { relatedRequestId?: RequestId };

interface Waiting {
  go: (route: Route) => void;
  fail: (why: string) => void;
}

/** The least time a client that read its task `input_required` has to call `tasks/result`, ms. */
export const MIN_RESULT_GRACE_MS = 1000;

/** How long after a client first read its task `input_required` a read of it so fails the question waiting, ms. */
export const resultGrace = (pollMs: number): number => Math.max(pollMs, MIN_RESULT_GRACE_MS);

/** The routes of one session's tasks (one per MCP server, so per 2025-11-25 session or stdio connection). */
export class TaskRoutes {
  /** The `tasks/result` requests waiting, by task id, latest last. */
  private readonly results = new Map<string, RequestId[]>();
  /**
   * Questions waiting for a route, by task id, with when the client first read the task
   * input_required while they waited (epoch ms, null before) and how many reads so since.
   */
  private readonly queued = new Map<string, { waiting: Set<Waiting>; shown: number | null; reads: number }>();
  /** Tasks started here that the client has not yet named in a tasks/get or tasks/result, and who waits for that. */
  private readonly unannounced = new Map<string, { sent: Promise<void>; done: () => void }>();
  /** GET streams open, or null when the connection has its one stream always (stdio). */
  private standalone: number | null = null;
  private closed = false;

  /** Task `taskId` started here: its questions wait until the client names it (`announced`). */
  created(taskId: string): void {
    let done!: () => void;
    const sent = new Promise<void>((resolve) => (done = resolve));
    this.unannounced.set(taskId, { sent, done });
  }

  /** The client named `taskId` in a request: it tracks the task its questions name. */
  private announced(taskId: string): void {
    this.unannounced.get(taskId)?.done();
    this.unannounced.delete(taskId);
  }

  /** The connection's stream outside any request exists only while a GET opens it (a Streamable HTTP session). */
  needsGetStream(): void {
    this.standalone ??= 0;
  }

  /** A GET stream opened; call the function returned when it ends. Questions waiting go there now. */
  getStreamOpened(): () => void {
    if (this.standalone === null) return () => {};
    this.standalone++;
    for (const [id, q] of [...this.queued]) this.release(id, q.waiting, {});
    let ended = false;
    return () => {
      if (ended || this.standalone === null) return;
      ended = true;
      this.standalone--;
    };
  }

  /**
   * A `tasks/result` of `taskId` waits on request `requestId`: questions of the task go on its
   * stream from now (those waiting at once). Call the function returned when it ends.
   */
  resultWaits(taskId: string, requestId: RequestId): () => void {
    this.announced(taskId);
    const ids = this.results.get(taskId) ?? [];
    ids.push(requestId);
    this.results.set(taskId, ids);
    const q = this.queued.get(taskId);
    if (q) this.release(taskId, q.waiting, { relatedRequestId: requestId });
    return () => {
      const now = this.results.get(taskId);
      const i = now?.indexOf(requestId) ?? -1;
      if (now && i >= 0) now.splice(i, 1);
      if (now?.length === 0) this.results.delete(taskId);
    };
  }

  /**
   * A `tasks/get` of this session answered `taskId` with `status`; `pollMs` is the task's
   * pollInterval. A read of it input_required a question waiting outlasts within `resultGrace` of
   * the first; one later fails it.
   */
  polled(taskId: string, status: string, pollMs: number): void {
    this.announced(taskId);
    const q = this.queued.get(taskId);
    if (!q || status !== "input_required") return;
    const now = Date.now();
    q.reads++;
    if (q.shown === null) q.shown = now;
    const grace = resultGrace(pollMs);
    if (now - q.shown < grace) return;
    const why = `it read task ${taskId} input_required with tasks/get ${q.reads} times in ${now - q.shown} ms but sent no tasks/result (where a 2025-11-25 task's requests are sent) within ${grace} ms of the first and has no GET stream open: call tasks/result once tasks/get shows a task input_required, or keep the session's GET stream open`;
    for (const w of [...q.waiting]) w.fail(why);
  }

  /** The session closed: questions waiting fail, and none waits from now. */
  close(): void {
    this.closed = true;
    for (const id of [...this.unannounced.keys()]) this.announced(id);
    for (const q of [...this.queued.values()]) for (const w of [...q.waiting]) w.fail("its session closed");
  }

  /**
   * Where the next question of `taskId` goes: at once when there is a way, else once one appears.
   * Rejects with why the client cannot be asked (the session closed, the client polls without
   * tasks/result, within `timeoutMs` it named the task nowhere or nothing appeared), or with
   * `signal`'s reason.
   */
  async route(taskId: string, signal: AbortSignal, timeoutMs: number): Promise<Route> {
    // Not before the client tracks the task: a request naming a task it does not know yet is one it cannot place.
    // The bound is for the whole wait, this part of it too.
    const deadline = Date.now() + timeoutMs;
    const unannounced = this.unannounced.get(taskId);
    if (unannounced)
      await bounded(
        abortable(unannounced.sent, signal),
        timeoutMs,
        `in ${timeoutMs} ms it named task ${taskId} in no tasks/get or tasks/result (a 2025-11-25 task's requests go once its client tracks it): read the task a task-augmented tools/call answered with tasks/get, or call tasks/result`,
      );
    signal.throwIfAborted();
    if (this.closed) throw new Error("its session closed");
    const latest = this.results.get(taskId)?.at(-1);
    if (latest !== undefined) return { relatedRequestId: latest };
    if (this.standalone === null || this.standalone > 0) return {};
    const q = this.queued.get(taskId) ?? { waiting: new Set<Waiting>(), shown: null, reads: 0 };
    this.queued.set(taskId, q);
    return new Promise<Route>((resolve, reject) => {
      const end = () => {
        clearTimeout(timer);
        signal.removeEventListener("abort", aborted);
        q.waiting.delete(w);
        if (q.waiting.size === 0 && this.queued.get(taskId) === q) this.queued.delete(taskId);
      };
      const w: Waiting = {
        go: (route) => (end(), resolve(route)),
        fail: (why) => (end(), reject(new Error(why))),
      };
      const aborted = () => (end(), reject(signal.reason));
      const timer = setTimeout(
        () =>
          w.fail(
            `in ${timeoutMs} ms it sent no tasks/result of task ${taskId} (where a 2025-11-25 task's requests are sent) and opened no GET stream`,
          ),
        Math.max(0, deadline - Date.now()),
      );
      timer.unref();
      signal.addEventListener("abort", aborted, { once: true });
      q.waiting.add(w);
    });
  }

  private release(taskId: string, waiting: Set<Waiting>, route: Route): void {
    for (const w of [...waiting]) w.go(route);
    this.queued.delete(taskId);
  }
}

/** `p`, or a rejection saying `why` once `ms` pass first. */
function bounded(p: Promise<void>, ms: number, why: string): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(why)), ms);
    timer.unref();
    p.then(
      () => (clearTimeout(timer), resolve()),
      (err: unknown) => (clearTimeout(timer), reject(err as Error)),
    );
  });
}

/** `p`, or `signal`'s reason once it aborts. */
function abortable(p: Promise<void>, signal: AbortSignal): Promise<void> {
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<void>((resolve, reject) => {
    const aborted = () => reject(signal.reason);
    signal.addEventListener("abort", aborted, { once: true });
    void p.then(() => (signal.removeEventListener("abort", aborted), resolve()));
  });
}
