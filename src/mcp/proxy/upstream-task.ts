/**
 * A call of an upstream tool that runs only as a task (2025-11-25 `execution.taskSupport:
 * "required"`): an upstream refuses it as an ordinary call, so the proxy sends it task-augmented
 * and waits for the task's result with `tasks/result`, which answers once the task is final: the
 * caller sees one tools/call, answered with the upstream's CallToolResult. When the gateway's call
 * is cancelled (its client cancelled, its time ran out) the upstream task is cancelled too
 * (`tasks/cancel`), so nothing goes on upstream for a call nobody waits for.
 */
import type { CallToolResult, Client } from "@modelcontextprotocol/client";
import { z } from "zod";
import { upstreamResultSchema } from "./upstream-content.js";

/** What the upstream answers a task-augmented tools/call with: the task, whose id the rest names. */
const CreatedTask = z.looseObject({ task: z.looseObject({ taskId: z.string().min(1).max(1024) }) });
const Acknowledged = z.looseObject({});

/** A tasks/cancel for a call given up gets this long, ms: it is sent on the way out of a cancelled call. */
const CANCEL_TIMEOUT_MS = 5_000;

/** The upstream declared task-augmented tools/call (2025-11-25 `capabilities.tasks.requests.tools.call`). */
export function upstreamRunsTasks(client: Client): boolean {
  const tasks = (client.getServerCapabilities() as { tasks?: { requests?: { tools?: { call?: unknown } } } })?.tasks;
  return tasks?.requests?.tools?.call !== undefined;
}

export interface UpstreamTaskOptions {
  signal: AbortSignal;
  /** Each request's bound (the create and the wait for the result), ms. */
  timeout: number;
  /** The task's requested lifetime upstream, ms. */
  ttl: number;
}

/** Calls the tool as an upstream task and returns its result; cancels the task when `signal` aborts. */
export async function callAsUpstreamTask(
  client: Client,
  params: { name: string; arguments: Record<string, unknown>; _meta?: Record<string, unknown> },
  options: UpstreamTaskOptions,
): Promise<CallToolResult> {
  const request = { signal: options.signal, timeout: options.timeout };
  const created = await client.request(
    { method: "tools/call", params: { ...params, task: { ttl: options.ttl } } } as never,
    CreatedTask,
    request,
  );
  const taskId = created.task.taskId;
  try {
    return (await client.request(
      { method: "tasks/result", params: { taskId } } as never,
      // The task's CallToolResult, checked as a direct call's is.
      upstreamResultSchema(client.getProtocolEra() === "modern"),
      request,
    )) as CallToolResult;
  } catch (err) {
    if (options.signal.aborted)
      await client
        .request({ method: "tasks/cancel", params: { taskId } } as never, Acknowledged, { timeout: CANCEL_TIMEOUT_MS })
        .catch(() => {
          // The upstream is gone or the task already ended: there is nothing left to stop.
        });
    throw err;
  }
}
