/**
 * The 2026-07-28 tasks extension (`io.modelcontextprotocol/tasks`): a client declares it in the
 * client capabilities of its request's `_meta` envelope, and the server then decides per call
 * whether to answer a tools/call with a task (`resultType: "task"`, the task's fields inline)
 * instead of its result. The client polls `tasks/get`, which carries the result once completed
 * (there is no blocking tasks/result and no tasks/list), answers the task's input requests with
 * `tasks/update`, and asks to stop it with `tasks/cancel` (both acknowledged with an empty result).
 *
 * An A3 call run as a task waits as `input_required` for its approval: `tasks/get` offers the
 * approval as one form elicitation, keyed by the gateway's approval id (unique over the task's
 * life, as the extension requires), and a `tasks/update` carrying the answer under that key
 * approves or denies that approval, recorded as the task's owner's decision. The key is only
 * matched against the approval the task waits on as the store has it, so an answer sent for another
 * call (another id) approves nothing, exactly as `input-required.ts` binds a retry. Where the
 * person cannot be asked (the operator approves with `toolgate approvals`, or the client declared
 * no elicitation), the task reads `working`, its statusMessage saying what it waits for.
 *
 * A task whose call asks its caller questions (a proxied upstream task's input requests, held by
 * the runner: `runtime/task-ask.ts`) reads `input_required` with those questions as its
 * `inputRequests`, under the keys the call gave them; a `tasks/update` from the task's owner
 * answers them, each answer checked for its method's shape (`task-answers.ts`), and keys not asked
 * are ignored. Once each question has its answer the task is `working` again.
 */
import {
  CLIENT_CAPABILITIES_META_KEY,
  inputResponse,
  ProtocolError,
  ProtocolErrorCode,
  type ClientCapabilities,
} from "@modelcontextprotocol/server";
import { ToolgateError } from "../../core/errors.js";
import type { TaskRecord } from "../../idempotency/tasks.js";
import type { ApprovalRecord } from "../../idempotency/store.js";
import type { Observation } from "../../core/observation.js";
import type { Gateway } from "../../runtime/types.js";
import type { TaskRunner } from "../../runtime/tasks.js";
import { approvalMessage, NOTE_SCHEMA } from "./approval.js";
import { checkedAnswers } from "./task-answers.js";

/** The extension's identifier, in client and server capabilities. */
export const TASKS_EXTENSION = "io.modelcontextprotocol/tasks";

/** The key of a task's approval request: one per approval, so never reused over the task's life. */
export const approvalInputKey = (approvalId: string) => `toolgate/approval/${approvalId}`;

/** At most this many answers in one tasks/update (a task asks one question at a time). */
const MAX_INPUT_RESPONSES = 16;

/** The request's client declared the extension (in this request's envelope: nothing carries over). */
export function declaresTasks(capabilities: ClientCapabilities | undefined): boolean {
  const ext = (capabilities as { extensions?: unknown } | undefined)?.extensions;
  return typeof ext === "object" && ext !== null && TASKS_EXTENSION in ext;
}

/** -32021 for a tasks request from a client that did not declare the extension on it. */
export function requireTasksExtension(capabilities: ClientCapabilities | undefined, method: string): void {
  if (declaresTasks(capabilities)) return;
  throw new ProtocolError(
    ProtocolErrorCode.MissingRequiredClientCapability,
    `${method} belongs to the ${TASKS_EXTENSION} extension, which this request's client did not declare; add "extensions": {"${TASKS_EXTENSION}": {}} to params._meta["${CLIENT_CAPABILITIES_META_KEY}"]`,
    { requiredCapabilities: { extensions: { [TASKS_EXTENSION]: {} } } },
  );
}

/** The task's common fields as the extension names them. */
function taskFields(t: TaskRecord, status = t.status, statusMessage = t.status_message): Record<string, unknown> {
  return {
    taskId: t.id,
    status,
    ttlMs: t.ttl_ms,
    createdAt: new Date(t.created_at).toISOString(),
    lastUpdatedAt: new Date(t.updated_at).toISOString(),
    pollIntervalMs: t.poll_ms,
    ...(statusMessage !== null ? { statusMessage } : {}),
  };
}

/** The tools/call answer that starts a task (CreateTaskResult). */
export const createTaskResult = (t: TaskRecord) => ({ resultType: "task", ...taskFields(t) });

export interface DetailContext {
  runner: TaskRunner;
  /** The tools/call result of a completed task's observation. */
  callResult: (tool: string, obs: Observation) => Record<string, unknown>;
  /** The person behind this request's client may be asked (the operator allows it, the client elicits). */
  elicit: boolean;
}

/**
 * The task as tasks/get answers it (DetailedTask): a completed one with its tools/call result, a
 * failed one with the JSON-RPC error, an input_required one with its approval request.
 */
export async function detailedTask(t: TaskRecord, ctx: DetailContext): Promise<Record<string, unknown>> {
  switch (t.status) {
    case "completed":
      // The result is the tools/call's own, as 2026-07-28 shapes it: `resultType: "complete"` included.
      return {
        ...taskFields(t),
        result: { resultType: "complete", ...ctx.callResult(t.tool, t.result as unknown as Observation) },
      };
    case "failed":
      // toolgate fails a task only when its call never answered (its process stopped, it shut down).
      return {
        ...taskFields(t),
        error: { code: ProtocolErrorCode.InternalError, message: t.status_message ?? "the task's call never answered" },
      };
    case "input_required": {
      // The questions its call asks its caller (a proxied upstream task's), else its approval.
      const questions = ctx.runner.questions(t);
      if (questions !== null) return { ...taskFields(t), inputRequests: questions };
      const approval = await ctx.runner.awaiting(t);
      if (approval === null || !ctx.elicit) return taskFields(t, "working");
      return { ...taskFields(t), inputRequests: { [approvalInputKey(approval.id)]: approvalRequest(t, approval) } };
    }
    default:
      return taskFields(t);
  }
}

function approvalRequest(t: TaskRecord, approval: ApprovalRecord) {
  const obs = t.result as unknown as Observation;
  return {
    method: "elicitation/create",
    params: {
      mode: "form",
      message: approvalMessage({ tool: approval.tool, arguments: approval.arguments } as never, obs, approval.id),
      requestedSchema: NOTE_SCHEMA,
    },
  };
}

export interface UpdateContext {
  gateway: Gateway;
  runner: TaskRunner;
  /** The task's owner, who answers: recorded as the approver. */
  principal: string;
  /** The name the client gives itself: kept only as an unverified label. */
  label: string | undefined;
  elicit: boolean;
  /** The keys whose answers the SDK dropped as no bare result object (`droppedInputResponseKeys`). */
  dropped?: readonly string[];
}

/**
 * Checks `inputResponses` (an object of at most 16 answers) and records the answer to the approval
 * the task waits on, when it carries one under that approval's key; every other key is ignored,
 * as the extension asks. The runner sees the decision in the store and goes on.
 */
export async function updateTask(t: TaskRecord, inputResponses: unknown, ctx: UpdateContext): Promise<void> {
  if (typeof inputResponses !== "object" || inputResponses === null || Array.isArray(inputResponses))
    throw new ProtocolError(
      ProtocolErrorCode.InvalidParams,
      `tasks/update params.inputResponses must be an object of answers keyed as the task's inputRequests (from tasks/get); received ${inputResponses === undefined ? "nothing" : Array.isArray(inputResponses) ? "an array" : typeof inputResponses}`,
    );
  const keys = Object.keys(inputResponses).length;
  if (keys > MAX_INPUT_RESPONSES)
    throw new ProtocolError(
      ProtocolErrorCode.InvalidParams,
      `tasks/update params.inputResponses holds ${keys} answers; at most ${MAX_INPUT_RESPONSES} are read: send the answers to the task's current inputRequests only`,
    );
  const questions = ctx.runner.questions(t);
  if (questions !== null) {
    const answers = checkedAnswers(questions, inputResponses, "tasks/update params.inputResponses", ctx.dropped);
    if (Object.keys(answers).length === 0) return;
    try {
      await ctx.runner.answer(t.id, ctx.principal, answers);
    } catch (err) {
      if (err instanceof ToolgateError && err.code === "invalid_task")
        throw new ProtocolError(ProtocolErrorCode.InvalidParams, `tasks/update: ${err.message}`);
      throw err;
    }
    return;
  }
  if (!ctx.elicit) return;
  const approval = await ctx.runner.awaiting(t);
  if (approval === null) return;
  const answer = inputResponse(inputResponses as Record<string, unknown>, approvalInputKey(approval.id));
  if (answer.kind !== "elicit" || (answer.action !== "accept" && answer.action !== "decline")) return;
  const content = answer.content as Record<string, unknown> | undefined;
  const note = typeof content?.note === "string" && content.note !== "" ? content.note.slice(0, 500) : undefined;
  const by = {
    approver: ctx.principal,
    channel: "elicitation" as const,
    ...(ctx.label !== undefined && ctx.label !== "" ? { label: ctx.label.slice(0, 100) } : {}),
  };
  try {
    if (answer.action === "accept")
      await ctx.gateway.approvals.approve(approval.id, note === undefined ? by : { ...by, note });
    else
      await ctx.gateway.approvals.deny(approval.id, {
        ...by,
        reason: note ?? "declined by the person asked through the task's input request",
      });
  } catch (err) {
    // Decided meanwhile by someone else (or expired): the task goes on with that decision.
    if (err instanceof ToolgateError && (err.code === "approval_decided" || err.code === "approval_expired")) return;
    throw err;
  }
}
