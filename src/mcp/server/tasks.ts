/**
 * Tasks over MCP in both revisions (the 2026-07-28 extension is `tasks-ext.ts`; the handlers for
 * both are registered here). In 2025-11-25 (the experimental `tasks` capability) a tools/call
 * carrying `task` starts the call in the runtime's task runner and answers at once with the task;
 * `tasks/get`, `tasks/result`, `tasks/list` and `tasks/cancel` read and steer it. The runner keeps
 * tasks in the store, so a client that disconnects and reconnects (or reaches another replica on
 * the same store) finds its task. A task belongs to the caller that started it (the transport's
 * principal); to anyone else an id names nothing, and the error says no more than for an id that
 * never existed. While a tasks/result waits, the questions of its task go on its stream
 * (`task-routes.ts`).
 */
import {
  ProtocolError,
  ProtocolErrorCode,
  type ClientCapabilities,
  type Server,
  type ServerContext,
  type Task,
} from "@modelcontextprotocol/server";
import { z } from "zod";
import type { Observation } from "../../core/observation.js";
import { isFinalStatus, type TaskRecord } from "../../idempotency/tasks.js";
import type { TaskRunner } from "../../runtime/tasks.js";
import type { Gateway } from "../../runtime/types.js";
import { detailedTask, requireTasksExtension, TASKS_EXTENSION, updateTask } from "./tasks-ext.js";
import { shownValue } from "../../observation/escape.js";
import { invalidParams } from "./protocol-error.js";
import type { TaskRoutes } from "./task-routes.js";

/** The `_meta` key that ties a task's result to its task. */
export const RELATED_TASK = "io.modelcontextprotocol/related-task";

/** The `_meta` key of a 2025-11-25 tasks/get answer that holds the questions its task sent its client, keyed as the call asked them. */
export const SENT_QUESTIONS_META = "toolgate/input_requests";

/** What a server advertises under `capabilities.tasks`: tools/call as a task, list and cancel. */
export const TASKS_CAPABILITY = { list: {}, cancel: {}, requests: { tools: { call: {} } } };

/** `tasks/*` params as they arrive: any object, judged below so a bad one gets a clear -32602. */
const TaskParamsSchema = z.looseObject({});

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
 * A 2025-11-25 task as tasks/get answers it. One that waits on questions its call sent its client
 * (requests naming the task: `call-ask.ts`) shows them in `_meta["toolgate/input_requests"]` on
 * every replica, read from its record; on a replica that does not run it, its statusMessage also
 * says that only the process running it sent them and takes their answers, and what to do.
 */
export function legacyTask(t: TaskRecord, runner: TaskRunner): Record<string, unknown> {
  const sent = runner.sent(t);
  if (sent === null) return { ...toMcpTask(t) };
  return {
    ...toMcpTask(t),
    ...(sent.here
      ? {}
      : {
          statusMessage: `${t.status_message ?? "waits for its client to answer questions"}, by the toolgate process that runs this task, which is not this one: this process cannot send them or take their answers. Call tasks/result of task ${t.id} in the session that started it, on that process (over HTTP its Mcp-Session-Id, which a balancer must route there), to be sent them; should that session be gone, the question fails within its bound and the call goes on without its answer (tasks/cancel stops it). The questions are in _meta["${SENT_QUESTIONS_META}"]`,
        }),
    _meta: { [SENT_QUESTIONS_META]: sent.requests },
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
      `tools/call params.task must be an object such as {"ttl": 60000} (how long to keep the task, ms); received ${shownValue(task)}; send an object, or leave task out to call without a task`,
    );
  const ttl = (task as { ttl?: unknown }).ttl;
  if (ttl === undefined) return undefined;
  if (typeof ttl !== "number" || !Number.isSafeInteger(ttl) || ttl <= 0)
    throw invalidParams(
      `tools/call params.task.ttl must be a positive whole number of milliseconds, e.g. 60000; received ${shownValue(ttl)}; fix it or leave ttl out`,
    );
  return ttl;
}

/** A task id is at most this long (toolgate's are 46 characters). */
const MAX_TASK_ID = 256;

function taskIdOf(method: string, params: Record<string, unknown>): string {
  const id = params.taskId;
  if (typeof id !== "string" || id === "" || id.length > MAX_TASK_ID)
    throw invalidParams(
      `${method} params.taskId must be the taskId a task-augmented tools/call answered (a non-empty string of at most ${MAX_TASK_ID} characters); received ${typeof id === "string" && id.length > MAX_TASK_ID ? `a string of ${id.length} characters` : shownValue(id)}`,
    );
  return id;
}

/** Same words for an id never issued, expired, or another caller's: nothing about which. */
function noSuchTask(method: string, id: string, modern = false): Error {
  return invalidParams(
    `${method}: no task ${shownValue(id)} for this caller (unknown, expired, or started by someone else)${modern ? "" : "; tasks/list shows yours"}`,
  );
}

/** What the server knows of one request: the caller, its revision, what its client may be asked. */
export interface TaskRequest {
  /** The caller: the task's owner. */
  owner: string;
  /** The request is of 2026-07-28 (its `_meta` envelope), else 2025-11-25. */
  modern: boolean;
  /** A 2026-07-28 request's client capabilities, from its envelope. */
  capabilities: ClientCapabilities | undefined;
  /** A 2026-07-28 client may be asked for an approval (the operator allows it, the client elicits). */
  elicit: boolean;
  /** The name the client gives itself (an unverified label). */
  label: string | undefined;
}

export interface TaskHandlers {
  runner: TaskRunner;
  gateway: Gateway;
  /** The tools/call result for a tool's observation (the same as a call without a task gets). */
  callResult: (tool: string, obs: Observation) => Record<string, unknown>;
  /** Reads a request (throws for one of neither revision, as for every other request). */
  request: (ctx: ServerContext, method: string) => TaskRequest;
  /** Where this session's 2025-11-25 task questions go: told of each tasks/result waiting and each tasks/get. */
  routes?: TaskRoutes;
}

type TaskMethod = "tasks/get" | "tasks/result" | "tasks/list" | "tasks/cancel" | "tasks/update";

/** The methods each revision has: 2025-11-25 tasks, or the 2026-07-28 extension. */
const METHODS: Record<"legacy" | "modern", readonly TaskMethod[]> = {
  legacy: ["tasks/get", "tasks/result", "tasks/list", "tasks/cancel"],
  modern: ["tasks/get", "tasks/update", "tasks/cancel"],
};

/**
 * Registers the tasks methods of both revisions on `server`: tasks/get, result, list and cancel
 * for 2025-11-25; tasks/get, update and cancel of the 2026-07-28 extension (`tasks-ext.ts`).
 */
export function registerTaskHandlers(server: Server, h: TaskHandlers): void {
  const { runner } = h;
  const handle = (
    method: TaskMethod,
    answer: (params: Record<string, unknown>, r: TaskRequest, ctx: ServerContext) => Promise<Record<string, unknown>>,
  ) =>
    server.setRequestHandler(method, { params: TaskParamsSchema }, async (params, ctx) => {
      const r = h.request(ctx, method);
      if (!METHODS[r.modern ? "modern" : "legacy"].includes(method))
        throw new ProtocolError(
          ProtocolErrorCode.MethodNotFound,
          r.modern
            ? `${method} is not part of the ${TASKS_EXTENSION} extension of protocol revision 2026-07-28: tasks/get carries a task's result once it is completed, and a caller keeps the ids of its tasks`
            : `${method} belongs to the ${TASKS_EXTENSION} extension of protocol revision 2026-07-28; on 2025-11-25 answer a task's input through the request it makes`,
        );
      if (r.modern) requireTasksExtension(r.capabilities, method);
      return answer(params as Record<string, unknown>, r, ctx);
    });
  const owned = async (method: string, params: Record<string, unknown>, r: TaskRequest) => {
    const id = taskIdOf(method, params);
    const t = await runner.get(id, r.owner);
    if (t === null) throw noSuchTask(method, id, r.modern);
    return t;
  };

  handle("tasks/get", async (params, r) => {
    const t = await owned("tasks/get", params, r);
    if (!r.modern) h.routes?.polled(t.id, t.status, t.poll_ms);
    return r.modern ? detailedTask(t, { runner, callResult: h.callResult, elicit: r.elicit }) : legacyTask(t, runner);
  });

  handle("tasks/update", async (params, r, ctx) => {
    const t = await owned("tasks/update", params, r);
    // The SDK lifts a request's inputResponses out of its params (as for a multi-round-trip retry).
    await updateTask(t, ctx.mcpReq.inputResponses ?? params.inputResponses, {
      gateway: h.gateway,
      runner,
      principal: r.owner,
      label: r.label,
      elicit: r.elicit,
      ...(ctx.mcpReq.droppedInputResponseKeys ? { dropped: ctx.mcpReq.droppedInputResponseKeys } : {}),
    });
    return {};
  });

  handle("tasks/result", async (params, r, ctx) => {
    const id = taskIdOf("tasks/result", params);
    // The task's questions go on this request's stream while it waits (the revision's way to reach the client).
    const ended = h.routes?.resultWaits(id, ctx.mcpReq.id);
    let t: TaskRecord | null;
    try {
      t = await runner.result(id, r.owner, ctx.mcpReq.signal);
    } finally {
      ended?.();
    }
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

  handle("tasks/list", async (params, r) => {
    const cursor = params.cursor;
    if (cursor !== undefined && (typeof cursor !== "string" || cursor === "" || cursor.length > MAX_TASK_ID))
      throw invalidParams(
        `tasks/list params.cursor must be the nextCursor of the previous page (a non-empty string); received ${shownValue(cursor)}; leave it out for the first page`,
      );
    const limit = 100;
    const page = await runner.list(r.owner, { ...(cursor !== undefined ? { after: cursor } : {}), limit });
    const last = page.at(-1);
    return { tasks: page.map(toMcpTask), ...(page.length === limit && last ? { nextCursor: last.id } : {}) };
  });

  handle("tasks/cancel", async (params, r) => {
    const id = taskIdOf("tasks/cancel", params);
    const done = await runner.cancel(id, r.owner);
    if (done === null) throw noSuchTask("tasks/cancel", id, r.modern);
    // The extension acknowledges a cancel with an empty result, whatever the task's status.
    if (r.modern) return {};
    if (done.already_final)
      throw invalidParams(
        `tasks/cancel: task ${id} is already ${done.task.status} and cannot be cancelled; tasks/result gives its answer`,
      );
    return { ...toMcpTask(done.task) };
  });
}
