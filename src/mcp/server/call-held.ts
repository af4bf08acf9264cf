/**
 * A 2026-07-28 call without tasks whose tool asks its caller questions while it runs (a proxied
 * upstream task's input requests): the revision has no server-to-client request, so the call is
 * held and the request is answered with an input-required result carrying the questions and a
 * `requestState` naming the held call; the client's retry carrying the answers (`inputResponses`)
 * and that state resumes it, and is answered with the call's observation or its next questions.
 * Meanwhile the call runs on (the upstream task stays alive), for at most `holdMs` per round: a
 * retry that does not come by then ends the call (its question rejected, so the upstream task is
 * cancelled). A call that ends while its round waits (its tool stopped waiting for the answers)
 * answers that round's retry with its observation; a question asked while no request waits on
 * the call (its last round ended unanswered) is refused at once, taking no place.
 *
 * A state names one round of one held call: it is a random 144-bit token looked up in this
 * process, so a forged one names nothing, and it is spent by the retry it resumes, so a replay
 * names nothing either; both are refused with -32602 saying so. The retry must come from the
 * same caller (principal), for the same tool, with the same canonical arguments and capability
 * as the call asked; one that differs is refused naming what differs, and the held call waits on
 * for its own retry. Held calls live in the process that runs them (over HTTP behind a balancer,
 * the retry must reach it: route by `Mcp-Name`, the tool's name, or stickily); at most
 * `MAX_HELD_PER_CALLER` per caller and `MAX_HELD` in all wait at once; a question past either is
 * not asked, and the call's observation says which bound it met and what to do. The per-caller
 * bound counts a caller as the transport's bounds do (`McpServerOptions.quota`: over HTTP the
 * grant its bearer verifies as, else its peer), so a new bearer string per call takes no more.
 *
 * The call's progress and log messages go with the request waiting on it now: the first, then
 * each retry that resumed it, under that request's own progressToken and log level. Between an
 * input-required answer and the retry no request waits, and what the call reports then is
 * dropped, not kept for the retry: its answered request must hear nothing more (over HTTP its
 * stream has closed), progress is superseded by the next report anyway, and a log kept for a
 * retry that may never come would be held for a caller nobody knows is still there.
 */
import { createHash, randomBytes } from "node:crypto";
import { canonicalize } from "../../canonical/jcs.js";
import type { JsonValue } from "../../core/json.js";
import type { Observation } from "../../core/observation.js";
import { logReaches, type CallAsk, type CallLog, type InputRequest, type ProgressUpdate } from "../../core/tool.js";
import { shownValue } from "../../observation/escape.js";
import { invalidParams } from "./protocol-error.js";
import { checkedAnswers } from "./task-answers.js";

/** What a held call's state begins with: a retry's state of another form is no held call's. */
const TOKEN_PREFIX = "tg-held.";
/** Calls one caller may have waiting for its retry at once. */
export const MAX_HELD_PER_CALLER = 32;
/** Calls this process holds waiting for their retries at once, of all callers (each holds a call and a timer). */
export const MAX_HELD = 1024;

/** Who asks and what: a retry must match each part but `quota`. */
export interface CallBinding {
  principal: string;
  /** Whom the per-caller bound counts the call as (`McpServerOptions.quota`); default `principal`. */
  quota?: string;
  tool: string;
  arguments: unknown;
  capability: string | undefined;
}

/** Where a request wants a call's progress and log messages (absent: it asked for none). */
export interface Notices {
  progress?: (update: ProgressUpdate) => void;
  log?: CallLog;
}

/** What a held call's run reports through: to the request waiting on it now, else nowhere. */
export interface HeldNotices {
  progress: (update: ProgressUpdate) => void;
  log: CallLog;
}

/** Where a held call stopped: its observation, or the questions its retry must answer. */
export type Stop = { observation: Observation } | { questions: Record<string, InputRequest>; requestState: string };

interface Held {
  bound: CallBinding;
  /** The binding's digests, made when the call first asks (most calls never do). */
  binding: { args: string; capability: string } | null;
  abort: AbortController;
  /** Where the request waiting on the call now wants its notices; null while none waits. */
  notices: Notices | null;
  /** The request waiting on the call's next stop. */
  next: (stop: Stop | { error: unknown }) => void;
  /** How the call ended while its round waited for the retry, which is answered with it. */
  ended: { observation: Observation } | { error: unknown } | null;
  round: {
    token: string;
    questions: Record<string, InputRequest>;
    answer: (a: Record<string, JsonValue>) => void;
    timer: NodeJS.Timeout;
  } | null;
}

/** A held call's notices, each sent to the request waiting on it when it sends one, and at its level. */
function heldNotices(held: Held): HeldNotices {
  return {
    progress: (update) => held.notices?.progress?.(update),
    log: {
      // Read at each use (the upstream is asked at the level of the request waiting now); none waits: the least.
      get level() {
        return held.notices?.log?.level ?? "emergency";
      },
      send(entry) {
        const log = held.notices?.log;
        if (log !== undefined && logReaches(entry.level, log.level)) log.send(entry);
      },
    },
  };
}

const digest = (s: string) => createHash("sha256").update(s).digest("base64url");
const argsDigest = (b: CallBinding) => digest(canonicalize(b.arguments as JsonValue));

/** The held calls of one gateway (every server a transport builds for it shares them). */
export class HeldCalls {
  private readonly byToken = new Map<string, Held>();
  private readonly perCaller = new Map<string, number>();

  /** The rounds waiting for their retries now, and the callers that have any: for the count after calls end. */
  get waiting(): { rounds: number; callers: number } {
    return { rounds: this.byToken.size, callers: this.perCaller.size };
  }

  constructor(
    private readonly holdMs: number,
    private readonly maxHeld = MAX_HELD,
  ) {}

  /** A held call's state (`requestState` of a retry), as opposed to any other. */
  static names(state: unknown): state is string {
    return typeof state === "string" && state.startsWith(TOKEN_PREFIX);
  }

  /**
   * Runs a call (`run`, given the signal to run it under, its `ask` and where it reports) and
   * answers with where it first stops. `request` is the asking request's signal: its cancel stops
   * the call until it is answered; `notices`, where that request wants the call's reports.
   */
  begin(
    bound: CallBinding,
    request: AbortSignal,
    notices: Notices,
    run: (signal: AbortSignal, ask: CallAsk, notices: HeldNotices) => Promise<Observation>,
  ) {
    const abort = new AbortController();
    const held: Held = { bound, binding: null, abort, notices: null, next: () => {}, ended: null, round: null };
    const stopped = this.wait(held, request, notices);
    const ask: CallAsk = (questions, signal) => this.ask(held, questions, signal);
    run(abort.signal, ask, heldNotices(held)).then(
      (observation) => this.end(held, { observation }),
      (error: unknown) => this.end(held, { error }),
    );
    return stopped;
  }

  /** The call ended: told to the request waiting on it, else kept for the retry of the round that waits. */
  private end(held: Held, stop: { observation: Observation } | { error: unknown }): void {
    if (held.round !== null) held.ended = stop;
    else held.next(stop);
  }

  /**
   * A retry carrying `state` and `inputResponses`: checked, then answered with where the call stops
   * next; meanwhile the call's reports go where this retry wants them (`notices`).
   */
  async resume(
    state: string,
    bound: CallBinding,
    inputResponses: unknown,
    request: AbortSignal,
    notices: Notices,
    dropped: readonly string[] = [],
  ): Promise<Stop> {
    const held = this.byToken.get(state);
    if (held === undefined || held.round === null || held.round.token !== state)
      throw invalidParams(
        `tools/call params.requestState names no call this server holds (${state.length > 40 ? `${shownValue(state.slice(0, 40))}…` : shownValue(state)}): it was never issued here, was already answered (a state is spent by the retry it resumes), or its call ended (its retry did not come within ${this.holdMs} ms); call the tool again without requestState and inputResponses`,
      );
    const b = held.binding!;
    const differs =
      held.bound.principal !== bound.principal
        ? "caller"
        : held.bound.tool !== bound.tool
          ? "tool"
          : b.args !== argsDigest(bound)
            ? "arguments"
            : b.capability !== digest(bound.capability ?? "")
              ? "capability"
              : null;
    if (differs !== null)
      throw invalidParams(
        `tools/call params.requestState was given to another call: this retry's ${differs} differs from the one of the call that asked; retry with exactly the call that was answered input_required (same tool, arguments and capability, from the same caller), or call again without requestState`,
      );
    const ended = held.ended;
    if (ended !== null) {
      // Its tool stopped waiting for the answers: they are moot, the call's end is this retry's answer.
      this.endRound(held);
      if ("error" in ended) throw ended.error;
      return ended;
    }
    const round = held.round;
    const answers = checkedAnswers(round.questions, inputResponses ?? {}, "tools/call params.inputResponses", dropped);
    const missing = Object.keys(round.questions).filter((k) => !(k in answers));
    if (missing.length > 0)
      throw invalidParams(
        `tools/call params.inputResponses must answer every question the call asked; missing ${missing.map((k) => JSON.stringify(k)).join(", ")}; retry with an answer under each key of inputRequests`,
      );
    this.endRound(held);
    const stopped = this.wait(held, request, notices);
    round.answer(answers);
    return stopped;
  }

  /** The call's next stop, the request's cancel stopping the call and its notices going to it until then. */
  private wait(held: Held, request: AbortSignal, notices: Notices): Promise<Stop> {
    const cancel = () => held.abort.abort(request.reason);
    if (request.aborted) cancel();
    else request.addEventListener("abort", cancel, { once: true });
    held.notices = notices;
    return new Promise<Stop>((resolve, reject) => {
      held.next = (stop) => {
        request.removeEventListener("abort", cancel);
        // Answered: nothing more is sent for this request.
        held.notices = null;
        held.next = () => {};
        if ("error" in stop) reject(stop.error);
        else resolve(stop);
      };
    });
  }

  private ask(held: Held, questions: Readonly<Record<string, InputRequest>>, signal: AbortSignal) {
    // Stopped already (its bound passed as the upstream asked): no question goes out, no place is taken.
    if (signal.aborted) return Promise.reject(signal.reason ?? new Error("the call was stopped"));
    if (held.round !== null)
      return Promise.reject(new Error("this call already waits for answers; one round at a time"));
    // Its last round ended unanswered: nobody was told its questions, nor would be of these.
    if (held.notices === null)
      return Promise.reject(
        new Error(
          `no request waits on this call to be asked: its last round ended unanswered (its question given up, or no retry within ${this.holdMs} ms), so nobody would see this one; it asks nothing more`,
        ),
      );
    if (this.byToken.size >= this.maxHeld)
      return Promise.reject(
        new Error(
          `this server already holds ${this.maxHeld} calls waiting for their callers' answers, the most it holds at once; call again once some have been answered or have ended (within ${this.holdMs} ms), or call a tool that asks nothing`,
        ),
      );
    const caller = held.bound.quota ?? held.bound.principal;
    const count = this.perCaller.get(caller) ?? 0;
    if (count >= MAX_HELD_PER_CALLER)
      return Promise.reject(
        new Error(
          `this caller already has ${MAX_HELD_PER_CALLER} calls waiting for the answers to their questions; answer or abandon those first`,
        ),
      );
    this.perCaller.set(caller, count + 1);
    held.binding ??= { args: argsDigest(held.bound), capability: digest(held.bound.capability ?? "") };
    return new Promise<Record<string, JsonValue>>((resolve, reject) => {
      const token = `${TOKEN_PREFIX}${randomBytes(18).toString("base64url")}`;
      const gone = () => {
        this.endRound(held);
        reject(signal.reason ?? new Error("the call was stopped"));
      };
      signal.addEventListener("abort", gone, { once: true });
      const timer = setTimeout(() => {
        this.endRound(held);
        signal.removeEventListener("abort", gone);
        reject(new Error(`its client did not retry with the answers within ${this.holdMs} ms`));
      }, this.holdMs);
      timer.unref();
      held.round = {
        token,
        questions: { ...questions },
        timer,
        answer: (answers) => {
          signal.removeEventListener("abort", gone);
          resolve(answers);
        },
      };
      this.byToken.set(token, held);
      held.next({ questions: { ...questions }, requestState: token });
    });
  }

  /** The round under way is over (answered, timed out, or its call stopped): its state names nothing now. */
  private endRound(held: Held): void {
    const round = held.round;
    if (round === null) return;
    clearTimeout(round.timer);
    this.byToken.delete(round.token);
    held.round = null;
    const caller = held.bound.quota ?? held.bound.principal;
    const count = (this.perCaller.get(caller) ?? 1) - 1;
    if (count <= 0) this.perCaller.delete(caller);
    else this.perCaller.set(caller, count);
  }
}

const registries = new WeakMap<object, HeldCalls>();

/**
 * The held calls of `gateway` (one registry per gateway, made on first use), keyed by its tool map:
 * a transport may wrap the gateway for each request (HTTP's per-principal slots), never its tools.
 */
export function heldCallsOf(gateway: { tools: object }, holdMs: number): HeldCalls {
  let held = registries.get(gateway.tools);
  if (held === undefined) registries.set(gateway.tools, (held = new HeldCalls(holdMs)));
  return held;
}
