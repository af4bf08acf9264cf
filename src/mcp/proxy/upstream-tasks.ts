/**
 * A 2026-07-28 upstream's tasks (the `io.modelcontextprotocol/tasks` extension), bridged for one
 * proxied call. The proxy's upstream client declares the extension on every request, so such an
 * upstream may answer a tools/call with a task (`resultType: "task"`) — it decides per call, and a
 * tool it runs only as a task it refuses to a client without the extension. The proxy then polls
 * `tasks/get` at the upstream's `pollIntervalMs` (clamped to `MIN_POLL_MS`–`MAX_POLL_MS`, so a
 * hostile zero cannot spin and a huge one cannot stall) until the task is final, and answers the
 * gateway's call with the task's result: a client of the proxy sees one tools/call, or a task of
 * toolgate's own runner when it speaks tasks. When the gateway's call is cancelled (its client
 * cancelled, tasks/cancel on toolgate's task, its time ran out) the upstream task is cancelled too.
 *
 * Every field the upstream sends is checked (the task id's length and characters, the status,
 * the poll interval, the id of the task each tasks/get answers); a field that fails ends the call
 * with an error naming the field, what was expected and what arrived.
 */
import { Client } from "@modelcontextprotocol/client";
import type { CallToolResult, JSONRPCResponse, StandardSchemaV1 } from "@modelcontextprotocol/client";
import { isPlainObject } from "../../core/json.js";
import { shownValue } from "../../observation/escape.js";
import { upstreamResultProblem } from "./upstream-content.js";

/** The extension's identifier, in client and server capabilities. */
export const TASKS_EXTENSION = "io.modelcontextprotocol/tasks";

/** The poll interval's bounds, ms: the upstream's `pollIntervalMs` is clamped to them. */
export const MIN_POLL_MS = 50;
export const MAX_POLL_MS = 5_000;
/** The interval when the upstream suggests none, ms. */
const DEFAULT_POLL_MS = 1_000;
/** A task id longer than this, or with a character outside printable ASCII, is refused. */
const MAX_TASK_ID = 256;
const TASK_ID = /^[\x21-\x7e]+$/;
/** A tasks/cancel for a call given up gets this long, ms. */
const CANCEL_TIMEOUT_MS = 5_000;

const STATUSES = ["working", "input_required", "completed", "failed", "cancelled"] as const;
type Status = (typeof STATUSES)[number];

/** Where the client carries a task answer past the SDK's tools/call result check (`TasksClient`). */
const TASK_ANSWER = "toolgate/upstreamTask";

/**
 * The proxy's upstream client. SDK 2.4.0 knows no `resultType: "task"` and refuses such an answer
 * before anyone reads it; this client hands it on as a complete result carrying the task under
 * `TASK_ANSWER`, which `taskAnswer` reads back (the SDK's response seam, `_onresponse`).
 */
export class TasksClient extends Client {
  protected override _onresponse(response: JSONRPCResponse): void {
    const result = (response as { result?: unknown }).result;
    if (isPlainObject(result) && result.resultType === "task" && this.getProtocolEra() === "modern") {
      super._onresponse({ ...response, result: taskAnswerResult(result) } as JSONRPCResponse);
      return;
    }
    super._onresponse(response);
  }
}

/** A task answer as a complete tools/call result carrying it under `TASK_ANSWER`, which `taskAnswer` reads back. */
export const taskAnswerResult = (task: Record<string, unknown>) => ({
  resultType: "complete",
  content: [],
  [TASK_ANSWER]: task,
});

/** The client capabilities that declare the extension (with whatever else the proxy declares). */
export const tasksCapabilities = () => ({ extensions: { [TASKS_EXTENSION]: {} } });

/** The upstream declared the extension (its server capabilities). */
export function upstreamDeclaresTasks(client: Client): boolean {
  const ext = (client.getServerCapabilities() as { extensions?: unknown } | undefined)?.extensions;
  return client.getProtocolEra() === "modern" && isPlainObject(ext) && TASKS_EXTENSION in ext;
}

/** The task an upstream answered a tools/call with, as `TasksClient` carried it; undefined for a result. */
export function taskAnswer(result: unknown): unknown {
  return isPlainObject(result) && TASK_ANSWER in result ? result[TASK_ANSWER] : undefined;
}

/** A tools/call result schema that lets a task answer through unchecked: `followUpstreamTask` checks it. */
export function orTaskAnswer(
  schema: StandardSchemaV1<unknown, CallToolResult>,
): StandardSchemaV1<unknown, CallToolResult> {
  return {
    "~standard": {
      version: 1,
      vendor: "toolgate",
      validate: (value) =>
        taskAnswer(value) !== undefined ? { value: value as CallToolResult } : schema["~standard"].validate(value),
    },
  };
}

/** An upstream task's state as the proxy reads it. */
export interface TaskState {
  taskId: string;
  status: Status;
  pollMs: number;
  statusMessage?: string;
  result?: unknown;
  error?: unknown;
  inputRequests?: unknown;
}

/** An answer the proxy cannot follow: what the tool's error says. */
export class UpstreamTaskError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "UpstreamTaskError";
  }
}

/** Reads a task (CreateTaskResult, or tasks/get's DetailedTask) or throws naming the field that fails. */
export function readTask(raw: unknown, where: string, expectedId?: string): TaskState {
  if (!isPlainObject(raw)) throw new UpstreamTaskError(`${where} must be an object; received ${shownValue(raw)}`);
  const { taskId, status, pollIntervalMs, statusMessage } = raw;
  if (typeof taskId !== "string" || taskId.length === 0 || taskId.length > MAX_TASK_ID || !TASK_ID.test(taskId))
    throw new UpstreamTaskError(
      `${where}.taskId must be a string of 1 to ${MAX_TASK_ID} printable ASCII characters without spaces; received ${shownValue(taskId)}`,
    );
  if (expectedId !== undefined && taskId !== expectedId)
    throw new UpstreamTaskError(
      `${where}.taskId must be the task asked about, ${shownValue(expectedId)}; received ${shownValue(taskId)}`,
    );
  if (typeof status !== "string" || !(STATUSES as readonly string[]).includes(status))
    throw new UpstreamTaskError(
      `${where}.status must be one of ${STATUSES.join(", ")}; received ${shownValue(status)}`,
    );
  if (pollIntervalMs !== undefined && (typeof pollIntervalMs !== "number" || !Number.isFinite(pollIntervalMs)))
    throw new UpstreamTaskError(
      `${where}.pollIntervalMs must be a number of milliseconds; received ${shownValue(pollIntervalMs)}`,
    );
  if (statusMessage !== undefined && typeof statusMessage !== "string")
    throw new UpstreamTaskError(`${where}.statusMessage must be a string; received ${shownValue(statusMessage)}`);
  return {
    taskId,
    status: status as Status,
    pollMs: Math.min(MAX_POLL_MS, Math.max(MIN_POLL_MS, pollIntervalMs ?? DEFAULT_POLL_MS)),
    ...(statusMessage !== undefined ? { statusMessage } : {}),
    ...("result" in raw ? { result: raw.result } : {}),
    ...("error" in raw ? { error: raw.error } : {}),
    ...("inputRequests" in raw ? { inputRequests: raw.inputRequests } : {}),
  };
}

/** A final task's answer: its result, or the error its status means. */
function finalAnswer(t: TaskState, where: string): CallToolResult {
  switch (t.status) {
    case "completed": {
      const problem = upstreamResultProblem(t.result, true);
      if (problem !== null) throw new UpstreamTaskError(`${where}.result of the completed task: ${problem}`);
      const { resultType: _complete, ...result } = t.result as Record<string, unknown>;
      return result as CallToolResult;
    }
    case "failed": {
      const e = isPlainObject(t.error) ? t.error : {};
      const message = typeof e.message === "string" ? e.message.slice(0, 1_000) : "(no message)";
      throw new UpstreamTaskError(
        `the upstream's task ${t.taskId} failed: ${message}${typeof e.code === "number" ? ` (code ${e.code})` : ""}`,
      );
    }
    default:
      throw new UpstreamTaskError(
        `the upstream cancelled its task ${t.taskId}${t.statusMessage ? `: ${t.statusMessage.slice(0, 500)}` : ""}`,
      );
  }
}

/** A result schema for the extension's methods whose answers are read field by field (tasks/get, tasks/cancel, tasks/update). */
export const anyObject: StandardSchemaV1<unknown, Record<string, unknown>> = {
  "~standard": {
    version: 1,
    vendor: "toolgate",
    validate: (value) =>
      isPlainObject(value) ? { value } : { issues: [{ message: `must be an object; received ${shownValue(value)}` }] },
  },
};

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      signal.removeEventListener("abort", done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener("abort", done, { once: true });
  });
}

export interface FollowOptions {
  /** The gateway's call: its abort (cancelled, timed out) cancels the upstream task. */
  signal: AbortSignal;
  /** Each tasks/get's bound, ms. */
  requestTimeout: number;
  /** Told each status the task reports, with its message (the call's progress says it). */
  onStatus?: (status: Status, message: string | undefined) => void;
  /** The `_meta` of each tasks/get (the log level the caller wants, so the upstream's log messages follow). */
  meta?: Record<string, unknown>;
  /** Passes a waiting task's input requests on and its caller's answers back (`inputRelay`); absent: such a task ends the call. */
  onInput?: (t: TaskState) => Promise<void>;
}

/** Polls the upstream task `answer` until it is final and returns its result; cancels it when `signal` aborts. */
export async function followUpstreamTask(
  client: Client,
  answer: unknown,
  options: FollowOptions,
): Promise<CallToolResult> {
  let t = readTask(answer, "the upstream's tools/call answer (a task)");
  const taskId = t.taskId;
  try {
    for (;;) {
      options.onStatus?.(t.status, t.statusMessage);
      if (isFinal(t.status)) return finalAnswer(t, "tasks/get");
      if (t.status === "input_required") {
        if (!options.onInput) throw inputNotRelayed(t);
        await options.onInput(t);
      }
      await sleep(t.pollMs, options.signal);
      options.signal.throwIfAborted();
      const params = {
        taskId,
        ...(options.meta && Object.keys(options.meta).length > 0 ? { _meta: options.meta } : {}),
      };
      const got = await client.request({ method: "tasks/get", params } as never, anyObject, {
        signal: options.signal,
        timeout: options.requestTimeout,
      });
      t = readTask(got, "tasks/get's answer", taskId);
    }
  } catch (err) {
    // A task left running (given up, or an answer that could not be followed) is stopped upstream.
    if (!isFinal(t.status))
      await client
        .request({ method: "tasks/cancel", params: { taskId } } as never, anyObject, { timeout: CANCEL_TIMEOUT_MS })
        .catch(() => {
          // The upstream is gone or the task already ended: there is nothing left to stop.
        });
    throw options.signal.aborted ? (options.signal.reason ?? err) : err;
  }
}

/**
 * An upstream task that asks for input (`input_required`) of a call whose caller cannot be asked
 * (`ToolContext.ask` absent: a 2026-07-28 client, see `upstream-input.ts`): the call ends at once,
 * saying so, rather than wait out its limit; the task is cancelled upstream.
 */
function inputNotRelayed(t: TaskState): UpstreamTaskError {
  const raw = t.inputRequests;
  const methods = isPlainObject(raw)
    ? [...new Set(Object.values(raw).map((r) => (isPlainObject(r) ? shownValue(r.method) : shownValue(r))))].slice(0, 4)
    : [];
  return new UpstreamTaskError(
    `the upstream's task ${t.taskId} asks for input${methods.length > 0 ? ` (${methods.join(", ")})` : ""}${t.statusMessage ? ` (${shownValue(t.statusMessage)})` : ""}, which toolgate proxy does not pass on to its clients; the upstream task was cancelled: call a tool that needs no input, or tell the user the upstream asks for input toolgate cannot relay`,
  );
}

const isFinal = (status: Status) => status === "completed" || status === "failed" || status === "cancelled";
