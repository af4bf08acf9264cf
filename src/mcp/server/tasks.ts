/**
 * Tasks over MCP (protocol revision 2025-11-25, the experimental `tasks` capability): a tools/call
 * carrying `task` starts the call in the runtime's task runner and answers at once with the task;
 * `tasks/get`, `tasks/result`, `tasks/list` and `tasks/cancel` read and steer it. The runner keeps
 * tasks in the store, so a client that disconnects and reconnects (or reaches another replica on
 * the same store) finds its task. A task belongs to the caller that started it (the transport's
 * principal); to anyone else an id names nothing, and the error says no more than for an id that
 * never existed.
 */
import {
  ProtocolError,
  ProtocolErrorCode,
  type Server,
  type ServerContext,
  type Task,
} from "@modelcontextprotocol/server";
import { z } from "zod";
import type { Observation } from "../../core/observation.js";
import { isFinalStatus, type TaskRecord } from "../../idempotency/tasks.js";
import type { TaskRunner } from "../../runtime/tasks.js";
import { escapeUntrusted } from "../../observation/escape.js";

/** The `_meta` key that ties a task's result to its task. */
export const RELATED_TASK = "io.modelcontextprotocol/related-task";

/** What a server advertises under `capabilities.tasks`: tools/call as a task, list and cancel. */
export const TASKS_CAPABILITY = { list: {}, cancel: {}, requests: { tools: { call: {} } } };

/** `tasks/*` params as they arrive: any object, judged below so a bad one gets a clear -32602. */
const TaskParamsSchema = z.looseObject({});

function invalidParams(message: string): Error {
  return new ProtocolError(ProtocolErrorCode.InvalidParams, message);
}

function shown(value: unknown): string {
  const json = value === undefined ? "nothing" : (JSON.stringify(value) ?? String(value));
  return escapeUntrusted(json.length > 80 ? `${json.slice(0, 77)}…` : json);
}

/** The MCP task for a stored one. */
export function toMcpTask(t: TaskRecord): Task {
  return {
    taskId: t.id,
    status: t.status,
    ttl: t.ttl_ms,
    createdAt: new Date(t.created_at).toISOString(),
    lastUpdatedAt: new Date(t.updated_at).toISOString(),
    pollInterval: t.poll_ms,
    ...(t.status_message !== null ? { statusMessage: t.status_message } : {}),
  };
}

/**
 * The requested lifetime of a task-augmented tools/call: `task` must be an object whose `ttl`, when
 * present, is a positive whole number of milliseconds (the runner keeps a task no longer than its
 * own limit).
 */
export function taskTtl(task: unknown): number | undefined {
  if (typeof task !== "object" || task === null || Array.isArray(task))
    throw invalidParams(
      `tools/call params.task must be an object such as {"ttl": 60000} (how long to keep the task, ms); received ${shown(task)}; send an object, or leave task out to call without a task`,
    );
  const ttl = (task as { ttl?: unknown }).ttl;
  if (ttl === undefined) return undefined;
  if (typeof ttl !== "number" || !Number.isSafeInteger(ttl) || ttl <= 0)
    throw invalidParams(
      `tools/call params.task.ttl must be a positive whole number of milliseconds, e.g. 60000; received ${shown(ttl)}; fix it or leave ttl out`,
    );
  return ttl;
}

function taskIdOf(method: string, params: Record<string, unknown>): string {
  const id = params.taskId;
  if (typeof id !== "string" || id === "")
    throw invalidParams(
      `${method} params.taskId must be the taskId a task-augmented tools/call answered (a non-empty string); received ${shown(id)}`,
    );
  return id;
}

/** Same words for an id never issued, expired, or another caller's: nothing about which. */
function noSuchTask(method: string, id: string): Error {
  return invalidParams(
    `${method}: no task ${shown(id)} for this caller (unknown, expired, or started by someone else); tasks/list shows yours`,
  );
}

export interface TaskHandlers {
  runner: TaskRunner;
  /** The caller of a request: the task's owner. */
  owner: (ctx: ServerContext) => string;
  /** The tools/call result for a tool's observation (the same as a call without a task gets). */
  callResult: (tool: string, obs: Observation) => Record<string, unknown>;
  /** Refuses requests of a revision without these methods (throws), as for every other request. */
  check: (ctx: ServerContext, method: string) => void;
}

/** Registers tasks/get, tasks/result, tasks/list and tasks/cancel on `server`. */
export function registerTaskHandlers(server: Server, h: TaskHandlers): void {
  const { runner } = h;
  const handle = (
    method: "tasks/get" | "tasks/result" | "tasks/list" | "tasks/cancel",
    answer: (params: Record<string, unknown>, owner: string, ctx: ServerContext) => Promise<Record<string, unknown>>,
  ) =>
    server.setRequestHandler(method, { params: TaskParamsSchema }, async (params, ctx) => {
      h.check(ctx, method);
      return answer(params as Record<string, unknown>, h.owner(ctx), ctx);
    });

  handle("tasks/get", async (params, owner) => {
    const id = taskIdOf("tasks/get", params);
    const t = await runner.get(id, owner);
    if (t === null) throw noSuchTask("tasks/get", id);
    return { ...toMcpTask(t) };
  });

  handle("tasks/result", async (params, owner, ctx) => {
    const id = taskIdOf("tasks/result", params);
    const t = await runner.result(id, owner, ctx.mcpReq.signal);
    if (t === null) throw noSuchTask("tasks/result", id);
    const related = { [RELATED_TASK]: { taskId: t.id } };
    if (!isFinalStatus(t.status))
      throw invalidParams(`tasks/result: task ${t.id} is still ${t.status}; the request ended before it finished`);
    if (t.result === null) {
      // Failed before the call answered (its process stopped, or the runner closed): the status says why.
      return {
        isError: true,
        content: [{ type: "text", text: `${t.tool} as task ${t.id} ${t.status}: ${t.status_message ?? "no answer"}` }],
        _meta: related,
      };
    }
    const result = h.callResult(t.tool, t.result as unknown as Observation);
    return { ...result, _meta: { ...(result._meta as object | undefined), ...related } };
  });

  handle("tasks/list", async (params, owner) => {
    const cursor = params.cursor;
    if (cursor !== undefined && (typeof cursor !== "string" || cursor === ""))
      throw invalidParams(
        `tasks/list params.cursor must be the nextCursor of the previous page (a non-empty string); received ${shown(cursor)}; leave it out for the first page`,
      );
    const limit = 100;
    const page = await runner.list(owner, { ...(cursor !== undefined ? { after: cursor } : {}), limit });
    const last = page.at(-1);
    return { tasks: page.map(toMcpTask), ...(page.length === limit && last ? { nextCursor: last.id } : {}) };
  });

  handle("tasks/cancel", async (params, owner) => {
    const id = taskIdOf("tasks/cancel", params);
    const done = await runner.cancel(id, owner);
    if (done === null) throw noSuchTask("tasks/cancel", id);
    if (done.already_final)
      throw invalidParams(
        `tasks/cancel: task ${id} is already ${done.task.status} and cannot be cancelled; tasks/result gives its answer`,
      );
    return { ...toMcpTask(done.task) };
  });
}
