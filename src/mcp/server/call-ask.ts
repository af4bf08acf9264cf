/**
 * A call's questions to its 2025-11-25 client (`ToolContext.ask`): each one an elicitation or a
 * sampling request sent to the client on the tools/call's own stream (or, for a task the call
 * runs as, naming the task in its `_meta`, where `task-routes.ts` says: a waiting tasks/result's
 * stream first), allowed only when the
 * client declared that capability at initialize (form or url elicitation, sampling). A question
 * of any other kind, or one the client cannot take, rejects naming the capability to declare;
 * the client's answers are the SDK's checked results. One question at a time, each bounded by
 * `timeoutMs` from when it is asked (a task's wait for its route included, so the request sent
 * gets what is left) and by the call's signal.
 */
import type { ClientCapabilities } from "@modelcontextprotocol/server";
import type { CallAsk } from "../../core/tool.js";
import type { JsonValue } from "../../core/json.js";
import type { GatewayServer } from "./gateway-server.js";
import { RELATED_TASK } from "./tasks.js";

export interface AskContext {
  server: GatewayServer;
  /**
   * What the questions belong to: the tools/call (they go on its stream), or the task it started
   * (they carry the task's id in `_meta`, and go on the stream of a tasks/result of the task, else
   * where the session's other requests go: over HTTP its GET stream, since the tools/call has been
   * answered; `task-routes.ts`).
   */
  for: { requestId: string | number } | { taskId: string };
  /** How long the client has to answer one question, ms. */
  timeoutMs: number;
}

/** Why a client with `capabilities` cannot take `method` (in mode `mode`); null when it can. */
export function cannotAsk(capabilities: ClientCapabilities | undefined, method: string, mode: unknown): string | null {
  if (method === "elicitation/create") {
    const e = capabilities?.elicitation as { form?: unknown; url?: unknown } | undefined;
    if (e === undefined) return 'it declared no "elicitation" capability';
    // A client that declares elicitation without modes takes form (the revision's default).
    if (mode === "url" && e.url === undefined) return 'it declared no "elicitation": {"url": {}} capability';
    if (mode !== "url" && e.url !== undefined && e.form === undefined)
      return 'it declared no "elicitation": {"form": {}} capability';
    return null;
  }
  if (method === "sampling/createMessage")
    return capabilities?.sampling === undefined ? 'it declared no "sampling" capability' : null;
  return `${JSON.stringify(method)} is not a question a client is asked (only elicitation/create and sampling/createMessage)`;
}

/** The `ask` of one 2025-11-25 tools/call. */
export function legacyAsk(ctx: AskContext): CallAsk {
  return async (requests, signal) => {
    const capabilities = ctx.server.getClientCapabilities();
    const answers: Record<string, JsonValue> = {};
    for (const [key, { method, params }] of Object.entries(requests)) {
      const why = cannotAsk(capabilities, method, params.mode);
      if (why !== null) throw new Error(`this client cannot be asked ${method}: ${why}`);
      const task = "taskId" in ctx.for ? ctx.for.taskId : null;
      // One bound for the question, its wait for a route included: the request gets what is left.
      const since = Date.now();
      // A task's question goes where its client will take it (task-routes.ts), which may be later.
      const route =
        task === null
          ? { relatedRequestId: (ctx.for as { requestId: string | number }).requestId }
          : await ctx.server.taskRoutes.route(task, signal, ctx.timeoutMs).catch((err: unknown) => {
              if (signal.aborted) throw err;
              throw new Error(`this client cannot be asked ${method}: ${(err as Error).message}`);
            });
      const left = ctx.timeoutMs - (Date.now() - since);
      if (left <= 0)
        throw new Error(
          `this client cannot be asked ${method}: its place to send it came only after the question's ${ctx.timeoutMs} ms had passed (a 2025-11-25 task's requests go on its tasks/result's stream): call tasks/result as soon as tasks/get shows the task input_required`,
        );
      const options = { ...route, timeout: left, signal };
      const sent =
        task === null
          ? params
          : { ...params, _meta: { ...(params._meta as object | undefined), [RELATED_TASK]: { taskId: task } } };
      const answer =
        method === "elicitation/create"
          ? await ctx.server.elicitInput(sent as never, options)
          : await ctx.server.createMessage(sent as never, options);
      answers[key] = answer as unknown as JsonValue;
    }
    return answers;
  };
}
