/**
 * Stage 5, execute: runs the handler with an AbortSignal and the tool's time bound. A handler
 * that ignores the signal is not waited for past the bound: the call answers `timeout` and, for
 * A2/A3, its record stays IN_DOUBT (the effect may still happen). The result is normalised into
 * one JSON shape, which is also what the idempotency record stores for replays.
 */
import type { JsonValue } from "../core/json.js";
import type { ToolContext, ToolSpec } from "../core/tool.js";
import { isToolResult } from "../core/tool.js";
import { NoEffectError } from "../core/errors.js";

/** A handler's return in the one shape the gateway stores and shapes. JSON all the way down. */
export interface Executed {
  output: JsonValue;
  text?: string;
  state?: Record<string, JsonValue>;
  next?: { arguments: Record<string, JsonValue>; hint: string };
  truncated?: { omitted: number; unit: string };
  /** The tool's own failure answer (`ToolResult.failed`), stored and replayed like any result. */
  failed?: true;
  /** As the tool returned it: checked and bounded when shaped, so a replay is bounded by today's rules. */
  content?: JsonValue[];
}

const ABORT_MESSAGES = {
  timeout: "did not finish within {ms} ms and was aborted",
  cancelled: "was cancelled by the caller",
  shutdown: "was still running when toolgate shut down (after its grace period) and was aborted",
} as const;

/** Thrown when the call's signal aborts before the handler settles. */
export class ExecutionAborted extends Error {
  constructor(
    readonly reason: "timeout" | "cancelled" | "shutdown",
    readonly timeout_ms: number | null,
  ) {
    super(ABORT_MESSAGES[reason].replace("{ms}", String(timeout_ms)));
    this.name = "ExecutionAborted";
  }
}

/**
 * Thrown instead of running a handler whose caller has already cancelled: nothing started, so
 * (a NoEffectError) an idempotency key claimed for it is released and the same call may run later.
 */
export class CancelledBeforeStart extends NoEffectError {
  constructor() {
    super("the caller cancelled the call before it started; nothing was run", "cancelled_before_start");
    this.name = "CancelledBeforeStart";
  }
}

/**
 * The per-call abort: the caller's signal and the time bound, combined. The AbortController is
 * made only when a handler reads `ctx.signal`, and the timer only when a handler returns a
 * promise: a synchronous handler cannot be interrupted anyway, so the A0 fast path allocates neither.
 * A promise is always wrapped, so the gateway's shutdown (`cancel`) can end it.
 */
export class CallAbort {
  private controller: AbortController | null = null;
  /** Set by `cancel`: the abort every later or pending `run` rejects with. */
  private cancelled: ExecutionAborted | null = null;
  private onCancel: ((err: ExecutionAborted) => void) | null = null;

  constructor(
    private bound: number | null,
    private readonly caller?: AbortSignal,
  ) {}

  /** The bound `run` applies, ms; null = unbounded. */
  get timeout_ms(): number | null {
    return this.bound;
  }

  /** Lowers the bound to `ms` (a call's own bound, known once its arguments are valid); never raises it. */
  narrow(ms: number): void {
    if (Number.isFinite(ms) && ms > 0 && (this.bound === null || ms < this.bound)) this.bound = ms;
  }

  /** The signal handed to the tool; aborted with an `ExecutionAborted` as its reason. */
  get signal(): AbortSignal {
    if (!this.controller) {
      const controller = (this.controller = new AbortController());
      if (this.caller?.aborted) controller.abort(new ExecutionAborted("cancelled", null));
      else if (this.cancelled) controller.abort(this.cancelled);
    }
    return this.controller.signal;
  }

  /**
   * Aborts the call from the gateway's side (shutdown): the tool's signal fires and a pending
   * `run` rejects now, even when the handler ignores the signal. A `run` not yet started refuses
   * to start with a NoEffectError, so an idempotency key it would have claimed is released.
   */
  cancel(err: ExecutionAborted): void {
    if (this.cancelled) return;
    this.cancelled = err;
    this.controller?.abort(err);
    this.onCancel?.(err);
  }

  /** Throws `CancelledBeforeStart` when the caller has cancelled: for a step that must not begin then. */
  throwIfCancelled(): void {
    if (this.caller?.aborted) throw new CancelledBeforeStart();
  }

  /**
   * Runs `work` under the bound; rejects with `ExecutionAborted` when the bound passes or the
   * caller aborts, and throws `CancelledBeforeStart` when the caller had cancelled before it began.
   */
  run<T>(work: () => T | Promise<T>): T | Promise<T> {
    this.throwIfCancelled();
    if (this.cancelled) throw new NoEffectError(`toolgate is shutting down; the call was not started`, "shutting_down");
    const value = work();
    if (!isThenable(value)) return value;
    return new Promise<T>((resolve, reject) => {
      const caller = this.caller;
      const fail = (err: ExecutionAborted) => {
        cleanup();
        this.controller?.abort(err);
        reject(err);
      };
      this.onCancel = fail;
      const onCaller = () => fail(new ExecutionAborted("cancelled", null));
      const timer =
        this.timeout_ms === null
          ? null
          : setTimeout(() => fail(new ExecutionAborted("timeout", this.timeout_ms)), this.timeout_ms);
      const cleanup = () => {
        this.onCancel = null;
        if (timer) clearTimeout(timer);
        caller?.removeEventListener("abort", onCaller);
      };
      caller?.addEventListener("abort", onCaller, { once: true });
      value.then(
        (v) => {
          cleanup();
          resolve(v);
        },
        (e: unknown) => {
          cleanup();
          reject(e);
        },
      );
    });
  }
}

const isThenable = <T>(v: T | Promise<T>): v is Promise<T> =>
  typeof (v as { then?: unknown } | null)?.then === "function";

/**
 * Runs the handler; throws or rejects with the handler's error or an `ExecutionAborted`.
 * Synchronous when the handler is: a synchronous handler's result comes back as a value (a throw
 * as a throw), so no stage makes a promise for it; a promise is wrapped by `CallAbort.run`.
 */
export function executeNow(
  tool: ToolSpec,
  args: JsonValue,
  ctx: ToolContext,
  abort: CallAbort,
): Executed | Promise<Executed> {
  const value = abort.run(() => tool.handler(args as Record<string, unknown>, ctx));
  return isThenable(value) ? value.then(normalise) : normalise(value);
}

/** Bare output or ToolResult → `Executed`. Non-JSON parts are left for the store to refuse. */
export function normalise(value: unknown): Executed {
  if (!isToolResult(value)) return { output: (value === undefined ? null : value) as JsonValue };
  return {
    output: (value.output === undefined ? null : value.output) as JsonValue,
    ...(value.text !== undefined ? { text: value.text } : {}),
    ...(value.state !== undefined ? { state: value.state } : {}),
    ...(value.next !== undefined ? { next: value.next } : {}),
    ...(value.truncated !== undefined ? { truncated: value.truncated } : {}),
    ...(value.failed === true ? { failed: true as const } : {}),
    ...(value.content !== undefined ? { content: value.content as unknown as JsonValue[] } : {}),
  };
}

/** Reads a stored `Executed` back (a replay); tolerant of records written by older versions. */
export function fromStored(result: JsonValue): Executed {
  if (result !== null && typeof result === "object" && !Array.isArray(result) && "output" in result)
    return result as unknown as Executed;
  return { output: result };
}
