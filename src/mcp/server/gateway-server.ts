/**
 * `GatewayServer`, the SDK's low-level `Server` as toolgate serves it: a tools/call reaches
 * toolgate's handler whatever its params, a call answered with a task leaves the SDK's result check,
 * and each tools/call is counted until its answer is handed to the transport (`answersSent`).
 */
import {
  Server,
  type JSONRPCRequest,
  type MessageExtraInfo,
  type Result,
  type ServerContext,
  type Transport,
} from "@modelcontextprotocol/server";
import { z } from "zod";
import { InFlight } from "../../core/in-flight.js";
import { isLogLevel, type LogLevel } from "../../core/tool.js";
import type { TaskRecord } from "../../idempotency/tasks.js";
import { parsedKind } from "./parsed.js";
import { TaskRoutes } from "./task-routes.js";

/**
 * tools/call params as they arrive, before anyone judges them: any object passes, unparsed. A
 * missing `arguments` reaches the gateway as `{}` and a missing `name` gets a clear -32602 below.
 */
export const CallToolParamsSchema = z.looseObject({});

export interface CallToolParams {
  name?: unknown;
  arguments?: unknown;
  _meta?: unknown;
  task?: unknown;
}

/**
 * The SDK's `Server`, but a tools/call whose `name` is not a string or whose `arguments` is not an
 * object reaches toolgate's handler instead of the SDK's request check: a missing name gets a
 * -32602 that says what to send, and arguments of the wrong type a tool result from the gateway's
 * validator that the model can read and correct. Well-formed calls pass through the SDK's own
 * wrapping (result checks, the multi-round-trip seam).
 */
export class GatewayServer extends Server {
  /** tools/call requests received and not yet answered on the transport (see `answersSent`). */
  readonly unanswered = new InFlight<object>();
  /** The level this connection's client set with logging/setLevel (2025-11-25), once it has. */
  logLevel: LogLevel | undefined;
  /** A task of this server's caller as tasks/get answers it on 2026-07-28 (set when the server runs tasks). */
  taskDetail: ((t: TaskRecord, elicit: boolean) => Promise<Record<string, unknown>>) | undefined;
  /** Where the questions of this connection's 2025-11-25 tasks go (a waiting tasks/result's stream first). */
  readonly taskRoutes = new TaskRoutes();
  /** Counts off a tools/call the SDK will not answer (its request was cancelled); set by `connect`. */
  private unsent: (id: unknown) => void = () => {};

  /**
   * Counts each tools/call from its arrival until its answer has been handed to the transport:
   * the SDK validates and sends an answer some time after the handler resolves, and a transport
   * closed in between drops it; a cancelled call, which the SDK never answers, is counted off once
   * its handler ends (`_wrapHandler`). A request its transport already parsed as a JSON-RPC message
   * (`parsed.ts`) goes to the SDK's request dispatch at once (see `dispatchOf`).
   */
  override async connect(transport: Transport): Promise<void> {
    // What the SDK's own handler calls first: the transport's handler from before the connect.
    const before = transport.onmessage;
    // The SDK sets its handlers before it awaits the transport's start: they are wrapped at once,
    // so a message delivered right after this call (the stdio opening) is counted.
    const connected = super.connect(transport);
    // Per request id (the id itself: a Map tells 1 from "1"), the requests received and not yet answered.
    const open = new Map<unknown, { count: number }>();
    const onmessage = transport.onmessage;
    const dispatch = dispatchOf(this);
    this.unsent = (id) => {
      const waiting = open.get(id);
      if (!waiting || --waiting.count > 0) return;
      open.delete(id);
      this.unanswered.delete(waiting);
    };
    transport.onmessage = (message, extra) => {
      const m = message as { id?: unknown; method?: unknown };
      if (m.method === "tools/call" && m.id !== undefined) {
        const waiting = open.get(m.id);
        if (waiting) waiting.count++;
        else {
          const first = { count: 1 };
          open.set(m.id, first);
          this.unanswered.add(first);
        }
      }
      if (dispatch && parsedKind(message) === "request") {
        before?.(message, extra);
        dispatch(message as JSONRPCRequest, extra);
      } else onmessage?.(message, extra);
    };
    const send = transport.send.bind(transport);
    transport.send = (message, options) => {
      const m = message as { id?: unknown; method?: unknown };
      const waiting = m.method === undefined && m.id !== undefined ? open.get(m.id) : undefined;
      if (!waiting) return send(message, options);
      const answered = () => {
        if (--waiting.count > 0) return;
        open.delete(m.id);
        this.unanswered.delete(waiting);
      };
      let sending: Promise<void>;
      try {
        sending = send(message, options);
      } catch (err) {
        answered();
        return Promise.reject(err as Error);
      }
      return sending.finally(answered);
    };
    await connected;
  }

  /** The connection closed: a task's question still waiting for a way to its client fails now. */
  protected override _onclose(): void {
    this.taskRoutes.close();
    super._onclose();
  }

  protected override _wrapHandler(
    method: string,
    handler: (request: JSONRPCRequest, ctx: ServerContext) => Promise<Result>,
  ): (request: JSONRPCRequest, ctx: ServerContext) => Promise<Result> {
    const wrapped = super._wrapHandler(method, handler);
    if (method === "logging/setLevel")
      return async (request, ctx) => {
        const answer = await wrapped(request, ctx);
        const level = (request.params as { level?: unknown } | undefined)?.level;
        if (isLogLevel(level)) this.logLevel = level;
        return answer;
      };
    if (method !== "tools/call") return wrapped;
    // A task-augmented call answers with its task, which the SDK's tools/call result check would
    // refuse; so does a 2026-07-28 call that became a task, which leaves that check as a TaskAnswer.
    const call = async (request: JSONRPCRequest, ctx: ServerContext): Promise<Result> => {
      if (!wellFormedCall(request.params) || (request.params as CallToolParams).task !== undefined)
        return handler(request, ctx);
      try {
        return await wrapped(request, ctx);
      } catch (thrown) {
        if (thrown instanceof TaskAnswer) return thrown.result;
        throw thrown;
      }
    };
    return async (request, ctx) => {
      try {
        return await call(request, ctx);
      } finally {
        // Cancelled: the SDK sends no answer once the handler ends (it reads the same signal next).
        if (ctx.mcpReq.signal.aborted) this.unsent(request.id);
      }
    };
  }
}

/**
 * A 2026-07-28 tools/call answered with the task it became (CreateTaskResult): thrown past the
 * SDK's tools/call result check, which knows no `resultType: "task"`, and returned as the answer
 * by `GatewayServer`.
 */
export class TaskAnswer {
  constructor(readonly result: Result) {}
}

type Dispatch = (request: JSONRPCRequest, extra: MessageExtraInfo | undefined) => void;

/**
 * The SDK's request dispatch of `server`, which its transport handler calls for a message it finds to be a request
 * after parsing it three times more (as a result, as an error, as a request: two failing parses per request). For a
 * message a transport already parsed (`parsed.ts`) the answer is known, so the handler toolgate wraps the SDK's with goes
 * straight to the dispatch, as the SDK's would. Undefined when the SDK has no such method (then every message takes
 * the SDK's own way).
 */
export function dispatchOf(server: Server): Dispatch | undefined {
  const dispatch = (server as unknown as { _onrequest?: unknown })._onrequest;
  return typeof dispatch === "function" ? (dispatch as Dispatch).bind(server) : undefined;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** tools/call params the SDK's request schema accepts. */
function wellFormedCall(params: unknown): boolean {
  return (
    isObject(params) &&
    typeof params.name === "string" &&
    (params.arguments === undefined || isObject(params.arguments)) &&
    (params._meta === undefined || isObject(params._meta))
  );
}

/**
 * How `server` (made by `createMcpServer` with a task runner) shows one of its caller's tasks on
 * 2026-07-28, as tasks/get would: what a listen stream's `notifications/tasks` carries. `elicit`:
 * the listener's client may be asked for an approval. Undefined for a server that runs no tasks.
 */
export function taskDetailOf(
  server: Server,
): ((t: TaskRecord, elicit: boolean) => Promise<Record<string, unknown>>) | undefined {
  return server instanceof GatewayServer ? server.taskDetail : undefined;
}

/** Where the questions of `server`'s 2025-11-25 tasks go; undefined for a server `createMcpServer` did not make. */
export function taskRoutesOf(server: Server): TaskRoutes | undefined {
  return server instanceof GatewayServer ? server.taskRoutes : undefined;
}

/**
 * Resolves once every tools/call this server received has its answer handed to the transport,
 * or after `timeoutMs` (a call may be waiting on a person's elicitation answer). Close a
 * transport only after this: the SDK drops answers of requests still running at close.
 */
export async function answersSent(server: Server, timeoutMs = 2_000): Promise<void> {
  if (!(server instanceof GatewayServer) || server.unanswered.size === 0) return;
  await server.unanswered.idle(timeoutMs);
}
