/**
 * The state of one call as it moves through the pipeline, and the one way a stage stops it:
 * a `Refusal`, which the gateway turns into an error observation (docs/observations.md, "An error
 * is an observation too"). Stages return data; only the orchestrator renders and audits.
 */
import { performance } from "node:perf_hooks";
import type { AuthorityLevel, ToolContext, ToolSpec } from "../core/tool.js";
import type { JsonValue } from "../core/json.js";
import type { AuditRecord, Proposal } from "./types.js";
import type { ObservationErrorCode, ObservationIssue } from "../core/observation.js";
import type { ExecutionAborted } from "./execute.js";
import type { ApprovalRecord } from "../idempotency/store.js";
import type { TraceReading } from "./trace-context.js";

/** A stage's refusal or failure: what the model is told. */
export interface Refusal {
  readonly refusal: true;
  code: ObservationErrorCode;
  message: string;
  issues?: ObservationIssue[];
  detail?: Record<string, JsonValue>;
  /** Text that came from the tool (a thrown message); fenced as untrusted when rendered. */
  untrusted?: string;
  /** The stage's outcome in the audit when the code alone does not say it
   * (`abandoned: request cancelled before approval`). */
  outcome?: string;
}

export function refuse(
  code: ObservationErrorCode,
  message: string,
  extra: Omit<Refusal, "refusal" | "code" | "message"> = {},
): Refusal {
  return { refusal: true, code, message, ...extra };
}

export function isRefusal(value: unknown): value is Refusal {
  return typeof value === "object" && value !== null && (value as Refusal).refusal === true;
}

type StageName = keyof AuditRecord["stages"];

/** Everything the pipeline learns about one call; the audit record is built from it. */
export class CallState {
  readonly started = performance.now();
  /** Clock reading at arrival (epoch ms); expiry decisions use the injected clock. */
  readonly arrived: number;
  tool: ToolSpec | null = null;
  authority: AuthorityLevel | null = null;
  args: JsonValue | undefined;
  ctx: ToolContext | null = null;
  /** The call's abort (set once the tool is resolved): the gateway's shutdown cancels it. */
  abort: { cancel(err: ExecutionAborted): void } | null = null;
  readonly stages: AuditRecord["stages"] = {};
  validation_codes: string[] = [];
  grant_code: string | null = null;
  grant_id: string | null = null;
  /** Fields the tool recorded while it ran (`ToolContext.note`), written with the audit record. */
  notes: Record<string, JsonValue> | null = null;
  /** What the grant stage allowed (its chain fingerprint is read by the A3 gate only); null without capabilities. */
  granted: { grant_id: string; chain_fingerprint: string; holder: string } | null = null;
  /** The approval the A3 gate redeemed, refused or asked for. */
  approval: ApprovalRecord | null = null;
  key: string | null = null;
  record_state: string | null = null;
  replay = false;
  /** The caller's trace context as the audit keeps it (`CallOptions.trace`). */
  trace: TraceReading = { trace: null, ignored: null };

  constructor(
    readonly proposal: Proposal,
    now: number,
  ) {
    this.arrived = now;
  }

  /**
   * Runs one stage, recording its outcome ("ok", the refusal code, or "threw") and its latency.
   * A synchronous stage stays synchronous: the A0 path allocates no promise per stage.
   */
  stage<T>(name: StageName, run: () => T | Promise<T>): T | Promise<T> {
    const t0 = performance.now();
    const record = (outcome: string) => (this.stages[name] = { outcome, ms: performance.now() - t0 });
    let value: T | Promise<T>;
    try {
      value = run();
    } catch (err) {
      record("threw");
      throw err;
    }
    if (!isThenable(value)) {
      record(isRefusal(value) ? (value.outcome ?? value.code) : "ok");
      return value;
    }
    return value.then(
      (v) => {
        record(isRefusal(v) ? (v.outcome ?? v.code) : "ok");
        return v;
      },
      (err: unknown) => {
        // A throwing stage (a handler inside settle) is recorded before the error travels on.
        record("threw");
        throw err;
      },
    );
  }

  /**
   * `stage` for a stage that never returns a promise: its value as is, with no promise or await,
   * so a call whose stages are all synchronous (an A0 read of a synchronous tool) makes none.
   */
  stageNow<T>(name: StageName, run: () => T): T {
    return this.stage(name, run) as T;
  }

  elapsed(): number {
    return performance.now() - this.started;
  }
}

export function isThenable<T>(v: T | Promise<T>): v is Promise<T> {
  return typeof (v as { then?: unknown } | null)?.then === "function";
}
