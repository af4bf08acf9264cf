/**
 * Stage 5, execute: runs the handler with an AbortSignal and the tool's time bound. A handler
 * that ignores the signal is not waited for past the bound: the call answers `timeout` and, for
 * A2/A3, its record stays IN_DOUBT (the effect may still happen). The result is normalised into
 * one JSON shape, which is also what the idempotency record stores for replays.
 */
import type { JsonValue, ToolContext, ToolSpec } from "../schema/types.js";
import { isToolResult } from "../schema/types.js";

/** A handler's return in the one shape the gateway stores and shapes. JSON all the way down. */
export interface Executed {
  output: JsonValue;
  text?: string;
  state?: Record<string, JsonValue>;
  next?: { arguments: Record<string, JsonValue>; hint: string };
  truncated?: { omitted: number; unit: string };
}

/** Thrown when the call's signal aborts before the handler settles. */
export class ExecutionAborted extends Error {
  constructor(
    readonly reason: "timeout" | "cancelled",
    readonly timeout_ms: number | null,
  ) {
    super(reason === "timeout" ? `did not finish within ${timeout_ms} ms and was aborted` : "was cancelled by the caller");
    this.name = "ExecutionAborted";
  }
}

/** The per-call abort: the caller's signal and the time bound, combined. */
export class CallAbort {
  readonly controller = new AbortController();
  private timer: NodeJS.Timeout | null = null;
  private readonly onCaller = () => this.controller.abort(new ExecutionAborted("cancelled", null));

  constructor(
    readonly timeout_ms: number | null,
    private readonly caller?: AbortSignal,
  ) {
    if (caller?.aborted) this.onCaller();
    else caller?.addEventListener("abort", this.onCaller, { once: true });
  }

  /** Whether anything can abort this call; an unbounded call skips the race. */
  get bounded(): boolean {
    return this.timeout_ms !== null || this.caller !== undefined;
  }

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  /** Starts the time bound; called right before the handler runs, so validation does not eat it. */
  arm(): void {
    if (this.timeout_ms === null || this.timer) return;
    this.timer = setTimeout(() => this.controller.abort(new ExecutionAborted("timeout", this.timeout_ms)), this.timeout_ms);
  }

  dispose(): void {
    if (this.timer) clearTimeout(this.timer);
    this.caller?.removeEventListener("abort", this.onCaller);
  }
}

/** Runs the handler; rejects with the handler's error or an `ExecutionAborted`. */
export async function execute(tool: ToolSpec, args: JsonValue, ctx: ToolContext, abort: CallAbort): Promise<Executed> {
  abort.arm();
  const signal = abort.signal;
  if (signal.aborted) throw signal.reason;
  const running = Promise.resolve().then(() => tool.handler(args as Record<string, unknown>, ctx));
  const value = abort.bounded ? await raceAbort(running, signal) : await running;
  return normalise(value);
}

function raceAbort<T>(work: Promise<T>, signal: AbortSignal): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener("abort", onAbort, { once: true });
    work.then(
      (v) => {
        signal.removeEventListener("abort", onAbort);
        resolve(v);
      },
      (e) => {
        signal.removeEventListener("abort", onAbort);
        reject(e);
      },
    );
  });
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
  };
}

/** Reads a stored `Executed` back (a replay); tolerant of records written by older versions. */
export function fromStored(result: JsonValue): Executed {
  if (result !== null && typeof result === "object" && !Array.isArray(result) && "output" in result) return result as unknown as Executed;
  return { output: result };
}
