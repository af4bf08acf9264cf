/**
 * `HeldCalls`: a 2026-07-28 call held while its caller answers its questions by retrying. The
 * first request stops at the questions with a state; the retry with that state and the answers
 * resumes the call. A forged state, a replayed one, one used by another caller or for another
 * tool, other arguments (canonically) or another capability, answers of the wrong shape or
 * missing, a hold that runs out, and more held calls than a caller may have or the process holds: each refused or
 * ended, saying so, and the held call left to its own retry. The call's progress and log messages
 * go to the request waiting on it now, at its level; none while no request waits.
 */
import { describe, expect, it } from "vitest";
import type { Observation } from "../../../src/core/observation.js";
import type { CallAsk, LogEntry, ProgressUpdate } from "../../../src/core/tool.js";
import {
  HeldCalls,
  MAX_HELD_PER_CALLER,
  type CallBinding,
  type HeldNotices,
  type Notices,
} from "../../../src/mcp/server/call-held.js";

const question = {
  branch: { method: "elicitation/create", params: { mode: "form", message: "Which?", requestedSchema: {} } },
};
const binding: CallBinding = { principal: "alice", tool: "asks", arguments: { a: 1, b: [2] }, capability: "tg1.x" };
const accept = { branch: { action: "accept", content: { branch: "main" } } };
const obs = (text: string) => ({ ok: true, text }) as unknown as Observation;
const never = new AbortController().signal;

/** A call that asks once and answers with what it was told (or why it could not be asked). */
const asking = (signal: AbortSignal, ask: CallAsk) =>
  ask(question, signal).then(
    (a) => obs(`answered ${JSON.stringify(a)}`),
    (err: Error) => obs(`not answered: ${err.message}`),
  );

async function stopped(held: HeldCalls, bound = binding) {
  const stop = await held.begin(bound, never, {}, asking);
  if (!("requestState" in stop)) throw new Error("the call did not ask");
  return stop;
}

describe("HeldCalls", () => {
  it("stops at the questions, then the retry with the answers resumes the call to its observation", async () => {
    const held = new HeldCalls(60_000);
    const stop = await stopped(held);
    expect(stop.questions).toEqual(question);
    expect(HeldCalls.names(stop.requestState)).toBe(true);
    // The same arguments in another key order are the same canonical arguments.
    const retried = await held.resume(
      stop.requestState,
      { ...binding, arguments: { b: [2], a: 1 } },
      accept,
      never,
      {},
    );
    expect(retried).toEqual({ observation: obs(`answered ${JSON.stringify(accept)}`) });
  });

  it("a call that never asks answers with its observation", async () => {
    const held = new HeldCalls(60_000);
    expect(await held.begin(binding, never, {}, async () => obs("plain"))).toEqual({ observation: obs("plain") });
  });

  it("refuses a forged state and a replayed one, naming why", async () => {
    const held = new HeldCalls(60_000);
    const stop = await stopped(held);
    await expect(held.resume(`${stop.requestState}x`, binding, accept, never, {})).rejects.toThrow(
      "params.requestState names no call this server holds",
    );
    await expect(held.resume("tg-held.forged", binding, accept, never, {})).rejects.toThrow("was never issued here");
    await held.resume(stop.requestState, binding, accept, never, {});
    await expect(held.resume(stop.requestState, binding, accept, never, {})).rejects.toThrow(
      "was already answered (a state is spent by the retry it resumes)",
    );
  });

  it.each([
    ["caller", { principal: "mallory" }],
    ["tool", { tool: "other" }],
    ["arguments", { arguments: { a: 2, b: [2] } }],
    ["capability", { capability: "tg1.y" }],
  ])("refuses a retry whose %s differs; the held call still resumes on its own retry", async (what, change) => {
    const held = new HeldCalls(60_000);
    const stop = await stopped(held);
    await expect(held.resume(stop.requestState, { ...binding, ...change }, accept, never, {})).rejects.toThrow(
      `this retry's ${what} differs from the one of the call that asked`,
    );
    expect(await held.resume(stop.requestState, binding, accept, never, {})).toMatchObject({
      observation: { text: expect.stringContaining("answered") },
    });
  });

  it.each([
    [{}, 'must answer every question the call asked; missing "branch"'],
    [{ branch: { action: "maybe" } }, 'inputResponses["branch"].action must be one of accept, decline, cancel'],
    [[1], "must be an object of answers keyed as the task's inputRequests"],
  ])("refuses answers %j, and the state stays good for a proper retry", async (answers, message) => {
    const held = new HeldCalls(60_000);
    const stop = await stopped(held);
    await expect(held.resume(stop.requestState, binding, answers, never, {})).rejects.toThrow(message);
    expect(await held.resume(stop.requestState, binding, accept, never, {})).toMatchObject({
      observation: { text: expect.stringContaining("answered") },
    });
  });

  it("a retry that does not come within the hold ends the call, saying so; its state names nothing after", async () => {
    const held = new HeldCalls(20);
    let ended!: (o: Observation) => void;
    const end = new Promise<Observation>((r) => (ended = r));
    const stop = await held.begin(binding, never, {}, (signal, ask) => asking(signal, ask).then((o) => (ended(o), o)));
    if (!("requestState" in stop)) throw new Error("the call did not ask");
    expect((await end).text).toBe("not answered: its client did not retry with the answers within 20 ms");
    await expect(held.resume(stop.requestState, binding, accept, never, {})).rejects.toThrow("names no call");
  });

  it("two retries of one round at once: one resumes the call, the other is refused as a spent state", async () => {
    const held = new HeldCalls(60_000);
    const stop = await stopped(held);
    const both = await Promise.allSettled([
      held.resume(stop.requestState, binding, accept, never, {}),
      held.resume(stop.requestState, binding, accept, never, {}),
    ]);
    expect(both.map((r) => r.status)).toEqual(["fulfilled", "rejected"]);
    expect(String((both[1] as PromiseRejectedResult).reason)).toContain("was already answered");
    expect(held.waiting).toEqual({ rounds: 0, callers: 0 });
  });

  it("a call that ends while its round waits (its tool stopped waiting) answers that round's retry with its end", async () => {
    const held = new HeldCalls(60_000);
    const gaveUp = await held.begin(binding, never, {}, async (_signal, ask) => {
      // Asked under a signal of its own that never aborts, and not waited for.
      ask(question, never).catch(() => {});
      return obs("gave up waiting");
    });
    if (!("requestState" in gaveUp)) throw new Error("the call did not ask");
    await expect(held.resume(gaveUp.requestState, { ...binding, tool: "other" }, accept, never, {})).rejects.toThrow(
      "this retry's tool differs",
    );
    expect(await held.resume(gaveUp.requestState, binding, accept, never, {})).toEqual({
      observation: obs("gave up waiting"),
    });
    const failed = await held.begin(binding, never, {}, async (_signal, ask) => {
      ask(question, never).catch(() => {});
      throw new Error("broke while asking");
    });
    if (!("requestState" in failed)) throw new Error("the call did not ask");
    await expect(held.resume(failed.requestState, binding, {}, never, {})).rejects.toThrow("broke while asking");
    expect(held.waiting).toEqual({ rounds: 0, callers: 0 });
  });

  it("a question asked once no request waits on the call (its round ended unanswered) is refused at once, taking no place", async () => {
    const held = new HeldCalls(60_000);
    let again!: (why: string) => void;
    const refused = new Promise<string>((r) => (again = r));
    const stop = await held.begin(binding, never, {}, async (_signal, ask) => {
      const mine = new AbortController();
      const first = ask(question, mine.signal);
      mine.abort(new Error("gave up on the first"));
      await first.catch(() => {});
      await ask(question, never).catch((err: Error) => again(err.message));
      return obs("done");
    });
    if (!("requestState" in stop)) throw new Error("the call did not ask");
    expect(await refused).toBe(
      "no request waits on this call to be asked: its last round ended unanswered (its question given up, or no retry within 60000 ms), so nobody would see this one; it asks nothing more",
    );
    expect(held.waiting).toEqual({ rounds: 0, callers: 0 });
  });

  it("no place is left taken once many held calls end, each way they end", async () => {
    const held = new HeldCalls(30);
    const ends: Promise<unknown>[] = [];
    for (let i = 0; i < 20; i++) {
      const who = { ...binding, principal: `p${i % 3}` };
      const request = new AbortController();
      const stop = await held.begin(who, request.signal, {}, asking);
      if (!("requestState" in stop)) throw new Error("the call did not ask");
      const way = i % 5;
      // Answered; answered wrongly, then rightly; cancelled on its retry; its hold run out; retried by another caller.
      if (way === 0) ends.push(held.resume(stop.requestState, who, accept, never, {}));
      if (way === 1) {
        await expect(held.resume(stop.requestState, who, {}, never, {})).rejects.toThrow("missing");
        ends.push(held.resume(stop.requestState, who, accept, never, {}));
      }
      if (way === 2) {
        const retry = new AbortController();
        retry.abort(new Error("cancelled"));
        ends.push(held.resume(stop.requestState, who, accept, retry.signal, {}));
      }
      if (way === 3) ends.push(new Promise((r) => setTimeout(r, 60)));
      if (way === 4)
        await expect(
          held.resume(stop.requestState, { ...who, principal: "mallory" }, accept, never, {}),
        ).rejects.toThrow("caller differs");
    }
    await Promise.all(ends);
    // The ones retried by another caller wait on for their own retry until their hold runs out.
    await new Promise((r) => setTimeout(r, 60));
    expect(held.waiting).toEqual({ rounds: 0, callers: 0 });
  });

  it("the asking request's cancel stops the call while it waits for its first stop", async () => {
    const held = new HeldCalls(60_000);
    const request = new AbortController();
    const stop = held.begin(binding, request.signal, {}, async (signal) => {
      await new Promise((r) => signal.addEventListener("abort", r, { once: true }));
      return obs("stopped");
    });
    request.abort();
    expect(await stop).toEqual({ observation: obs("stopped") });
  });

  it(`holds at most ${MAX_HELD_PER_CALLER} calls of one caller; one more is told why, another caller is not held back`, async () => {
    const held = new HeldCalls(60_000);
    for (let i = 0; i < MAX_HELD_PER_CALLER; i++) await stopped(held);
    expect(await held.begin(binding, never, {}, asking)).toEqual({
      observation: obs(
        `not answered: this caller already has ${MAX_HELD_PER_CALLER} calls waiting for the answers to their questions; answer or abandon those first`,
      ),
    });
    expect(await stopped(held, { ...binding, principal: "bob" })).toHaveProperty("requestState");
  });

  it("holds at most its process-wide bound in all; one more, of any caller, is told why and what to do, and is held once one ends", async () => {
    const held = new HeldCalls(60_000, 2);
    const first = await stopped(held, { ...binding, principal: "p1" });
    await stopped(held, { ...binding, principal: "p2" });
    expect(await held.begin({ ...binding, principal: "p3" }, never, {}, asking)).toEqual({
      observation: obs(
        "not answered: this server already holds 2 calls waiting for their callers' answers, the most it holds at once; call again once some have been answered or have ended (within 60000 ms), or call a tool that asks nothing",
      ),
    });
    await held.resume(first.requestState, { ...binding, principal: "p1" }, accept, never, {});
    expect(await stopped(held, { ...binding, principal: "p3" })).toHaveProperty("requestState");
  });

  it("sends the call's reports to the request waiting on it now, at its level; none while no request waits", async () => {
    const held = new HeldCalls(60_000);
    const heard = { first: [] as string[], retry: [] as string[] };
    const to = (who: "first" | "retry", level: "info" | "warning"): Notices => ({
      progress: (u: ProgressUpdate) => heard[who].push(`progress ${u.message}`),
      log: { level, send: (e: LogEntry) => heard[who].push(`${e.level} ${e.data}`) },
    });
    let reports!: HeldNotices;
    let answered!: () => void;
    const waited = new Promise<void>((r) => (answered = r));
    const tell = (what: string) => {
      reports.progress({ elapsed_ms: 1, message: what, counts: {} });
      reports.log.send({ level: "info", logger: "t", data: what });
      reports.log.send({ level: "warning", logger: "t", data: what });
    };
    const stop = await held.begin(binding, never, to("first", "info"), async (signal, ask, notices) => {
      reports = notices;
      tell("before");
      const asked = ask(question, signal);
      await waited;
      // Answered input_required, no retry yet: nobody to tell, and the least level asked for.
      expect(notices.log.level).toBe("emergency");
      tell("waiting");
      await asked;
      expect(notices.log.level).toBe("warning");
      tell("after");
      return obs("done");
    });
    if (!("requestState" in stop)) throw new Error("the call did not ask");
    answered();
    await new Promise((r) => setImmediate(r));
    expect(await held.resume(stop.requestState, binding, accept, never, to("retry", "warning"))).toEqual({
      observation: obs("done"),
    });
    expect(heard).toEqual({
      first: ["progress before", "info before", "warning before"],
      retry: ["progress after", "warning after"],
    });
  });

  it("a request that asked for no reports hears none, and its retry that asks hears them", async () => {
    const held = new HeldCalls(60_000);
    const heard: string[] = [];
    const stop = await held.begin(binding, never, {}, async (signal, ask, notices) => {
      notices.progress({ elapsed_ms: 1, message: "before", counts: {} });
      await ask(question, signal);
      notices.progress({ elapsed_ms: 2, message: "after", counts: {} });
      return obs("done");
    });
    if (!("requestState" in stop)) throw new Error("the call did not ask");
    await held.resume(stop.requestState, binding, accept, never, { progress: (u) => heard.push(u.message) });
    expect(heard).toEqual(["after"]);
  });
});
