/**
 * `TaskRoutes` alone: where a 2025-11-25 task's question goes — a waiting tasks/result's stream
 * (the latest), else the stream outside any request (stdio always; HTTP while a GET stream is
 * open), else it waits; not before the client named the task; and each way a waiting
 * question fails (the client went on reading input_required with tasks/get past the time it had
 * for tasks/result, while an honest client's quick reads never fail it; the session closed, the
 * bound passed, the call stopped). The end-to-end proof with real clients is
 * `transports/tasks-result-stream.test.ts`.
 */
import { describe, expect, it, vi } from "vitest";
import { MIN_RESULT_GRACE_MS, TaskRoutes } from "../../../src/mcp/server/task-routes.js";

const never = new AbortController().signal;
const LONG = 600_000;

type State<T> = { ok: T } | { err: string } | "pending";

/** Watches `p` from now: what it did, or "pending", once the microtasks and I/O queued by then have run. */
function watch<T>(p: Promise<T>): () => Promise<State<T>> {
  let out: State<T> = "pending";
  p.then(
    (ok) => (out = { ok }),
    (e: unknown) => (out = { err: e instanceof Error ? e.message : String(e) }),
  );
  return async () => {
    await new Promise((r) => setImmediate(r));
    return out;
  };
}
const state = <T>(p: Promise<T>) => watch(p)();

/** Routes of an HTTP session (no GET stream yet). */
function http(): TaskRoutes {
  const r = new TaskRoutes();
  r.needsGetStream();
  return r;
}

describe("TaskRoutes", () => {
  it("over stdio: a question goes at once, on a waiting tasks/result's stream when there is one", async () => {
    const r = new TaskRoutes();
    expect(await state(r.route("t1", never, LONG))).toEqual({ ok: {} });
    const end = r.resultWaits("t1", 7);
    expect(await state(r.route("t1", never, LONG))).toEqual({ ok: { relatedRequestId: 7 } });
    end();
    expect(await state(r.route("t1", never, LONG))).toEqual({ ok: {} });
  });

  it("the latest tasks/result of the task carries it; another task's does not", async () => {
    const r = http();
    r.resultWaits("t1", 1);
    const second = r.resultWaits("t1", 2);
    r.resultWaits("t2", 3);
    expect(await state(r.route("t1", never, LONG))).toEqual({ ok: { relatedRequestId: 2 } });
    second();
    expect(await state(r.route("t1", never, LONG))).toEqual({ ok: { relatedRequestId: 1 } });
  });

  it("over HTTP with no way yet: it waits, and goes on the tasks/result that arrives", async () => {
    const r = http();
    const asked = watch(r.route("t1", never, LONG));
    expect(await asked()).toBe("pending");
    r.resultWaits("t2", 9);
    expect(await asked()).toBe("pending");
    r.resultWaits("t1", 4);
    expect(await asked()).toEqual({ ok: { relatedRequestId: 4 } });
  });

  it("over HTTP: one waiting goes on a GET stream once it opens; while one is open, at once; not once it ended", async () => {
    const r = http();
    const asked = watch(r.route("t1", never, LONG));
    const ended = r.getStreamOpened();
    expect(await asked()).toEqual({ ok: {} });
    expect(await state(r.route("t1", never, LONG))).toEqual({ ok: {} });
    ended();
    ended(); // told twice, counted once
    expect(await state(r.route("t1", never, LONG))).toBe("pending");
  });

  it("nothing goes before the client names the task in a tasks/get or tasks/result", async () => {
    const r = new TaskRoutes();
    r.created("t1");
    const asked = watch(r.route("t1", never, LONG));
    expect(await asked()).toBe("pending");
    r.polled("t2", "working", 50);
    r.resultWaits("t2", 1);
    expect(await asked()).toBe("pending");
    r.polled("t1", "input_required", 50);
    expect(await asked()).toEqual({ ok: {} });
    r.created("t3");
    const viaResult = watch(r.route("t3", never, LONG));
    r.resultWaits("t3", 5);
    expect(await viaResult()).toEqual({ ok: { relatedRequestId: 5 } });
  });

  it("an honest client (by the revision: it calls tasks/result once it reads input_required) is never failed by quick reads before it", async () => {
    vi.useFakeTimers({ toFake: ["Date"] });
    try {
      const r = http();
      r.polled("t1", "input_required", 50); // before anything waits: not counted
      const asked = watch(r.route("t1", never, LONG));
      r.polled("t1", "working", 50);
      r.polled("t2", "input_required", 50);
      // Shown input_required, then a poll already in flight and one more quick read, all within the grace.
      r.polled("t1", "input_required", 50);
      vi.advanceTimersByTime(MIN_RESULT_GRACE_MS - 1);
      r.polled("t1", "input_required", 50);
      r.polled("t1", "input_required", 50);
      expect(await asked()).toBe("pending");
      r.resultWaits("t1", 8);
      expect(await asked()).toEqual({ ok: { relatedRequestId: 8 } });
      // A longer pollInterval is a longer grace: a client polling at it has had no poll to spare.
      const slow = watch(r.route("t2", never, LONG));
      r.polled("t2", "input_required", 5000);
      vi.advanceTimersByTime(4999);
      r.polled("t2", "input_required", 5000);
      expect(await slow()).toBe("pending");
      r.resultWaits("t2", 9);
      expect(await slow()).toEqual({ ok: { relatedRequestId: 9 } });
    } finally {
      vi.useRealTimers();
    }
  });

  it("a client that goes on polling tasks/get instead of calling tasks/result: its question fails at its first read past the grace, naming what to do", async () => {
    vi.useFakeTimers({ toFake: ["Date"] });
    try {
      const r = http();
      const asked = watch(r.route("t1", never, LONG));
      // It polls every 50 ms, as the task's pollInterval says, and never calls tasks/result.
      let reads = 0;
      while ((await asked()) === "pending" && reads < 100) {
        r.polled("t1", "input_required", 50);
        reads++;
        vi.advanceTimersByTime(50);
      }
      expect(reads).toBe(MIN_RESULT_GRACE_MS / 50 + 1);
      expect(await asked()).toEqual({
        err: `it read task t1 input_required with tasks/get ${reads} times in ${MIN_RESULT_GRACE_MS} ms but sent no tasks/result (where a 2025-11-25 task's requests are sent) within ${MIN_RESULT_GRACE_MS} ms of the first and has no GET stream open: call tasks/result once tasks/get shows a task input_required, or keep the session's GET stream open`,
      });
      // The next question starts its own count.
      const next = watch(r.route("t1", never, LONG));
      r.polled("t1", "input_required", 50);
      expect(await next()).toBe("pending");
      // A client polling at a pollInterval past the floor fails at its second read, one interval on.
      const slow = watch(r.route("t3", never, LONG));
      r.polled("t3", "input_required", 5000);
      vi.advanceTimersByTime(5000);
      r.polled("t3", "input_required", 5000);
      expect(await slow()).toMatchObject({ err: expect.stringContaining("2 times in 5000 ms") });
    } finally {
      vi.useRealTimers();
    }
  });

  it("the session closing fails a question waiting (also one waiting for its task's answer) and every one after", async () => {
    const r = http();
    const asked = watch(r.route("t1", never, LONG));
    r.created("t2");
    const early = watch(r.route("t2", never, LONG));
    r.close();
    expect(await asked()).toEqual({ err: "its session closed" });
    expect(await early()).toEqual({ err: "its session closed" });
    expect(await state(new TaskRoutes().route("t1", never, LONG))).toEqual({ ok: {} });
    expect(await state(r.route("t1", never, LONG))).toEqual({ err: "its session closed" });
  });

  it("the call stopping ends its question's wait with the call's reason", async () => {
    const r = http();
    const stop = new AbortController();
    const asked = watch(r.route("t1", stop.signal, LONG));
    stop.abort(new Error("the call was cancelled"));
    expect(await asked()).toEqual({ err: "the call was cancelled" });
    expect(await state(r.route("t1", stop.signal, LONG))).toEqual({ err: "the call was cancelled" });
    r.created("t3");
    const stop3 = new AbortController();
    const early = watch(r.route("t3", stop3.signal, LONG));
    stop3.abort(new Error("stopped early"));
    expect(await early()).toEqual({ err: "stopped early" });
  });

  it("a question of a task its client has not named yet fails within the same bound, saying what to do", async () => {
    const r = http();
    r.created("t1");
    const asked = watch(r.route("t1", never, 5));
    await new Promise((done) => setTimeout(done, 30));
    expect(await asked()).toEqual({
      err: "in 5 ms it named task t1 in no tasks/get or tasks/result (a 2025-11-25 task's requests go once its client tracks it): read the task a task-augmented tools/call answered with tasks/get, or call tasks/result",
    });
    // Named later: the next question waits no more for that.
    r.polled("t1", "working", 50);
    r.getStreamOpened();
    expect(await state(r.route("t1", never, LONG))).toEqual({ ok: {} });
  });

  it("a question that finds no way within its bound fails saying so", async () => {
    const r = http();
    const asked = watch(r.route("t1", never, 5));
    await new Promise((done) => setTimeout(done, 30));
    expect(await asked()).toEqual({
      err: "in 5 ms it sent no tasks/result of task t1 (where a 2025-11-25 task's requests are sent) and opened no GET stream",
    });
  });
});
