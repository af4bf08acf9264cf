/**
 * The 2026-07-28 `subscriptions/listen` streams of the HTTP endpoint: a listen request read before
 * the SDK sees it and its `resourceSubscriptions` held until its stream closes (`holdListen`, one
 * upstream subscription per URI across every stream naming it), and the SDK's stream ended
 * gracefully after `maxListenMs`, carrying `notifications/tasks` for the caller's tasks it names
 * (`listenStream`). `close()` ends the open ones (`listenStreams`).
 */
import type http from "node:http";
import type { Gateway } from "../../runtime/types.js";
import { createMcpServer, serverInfoOf, taskDetailOf, type McpServerOptions } from "../server/server.js";
import type { Principal } from "./http-sessions.js";
import type { HttpOptions } from "./http-options.js";
import { jsonError, type JsonRpcId } from "./http-replies.js";
import { withListenStream } from "./listen-stream.js";
import {
  ListenResources,
  readListen,
  watchListenTasks,
  type ListenCaller,
  type ListenTaskIds,
  type TaskListener,
} from "./listen-hold.js";
import type { ResourceSubscriber } from "../server/pass-through.js";

/** What the listen streams are given by `serveHttp`. */
export interface ListenContext {
  gateway: Gateway;
  options: HttpOptions;
  serverOptions: McpServerOptions;
  /** How long a stream lasts, ms (`listenLifetime`). */
  listenMs: number;
  /** Where each resource update is published once, for the handler to put on the streams naming it. */
  updates: ResourceSubscriber;
}

/** The listen streams of one endpoint. */
export function httpListens(context: ListenContext) {
  const { gateway, options, serverOptions, listenMs } = context;
  // A listen stream's resourceSubscriptions: one upstream subscription per URI across every stream
  // naming it, each update published once for the handler to put on those streams.
  const listenResources = new ListenResources(options.passThrough?.resources?.subscriptions, context.updates, {
    gateway,
    ...(options.passThrough?.audit ? { audit: options.passThrough.audit } : {}),
  });

  /**
   * Reads a listen request and holds its `resourceSubscriptions` until its stream closes; what it
   * asks of tasks, or null when it was refused (answered here).
   */
  async function holdListen(
    json: unknown,
    res: http.ServerResponse,
    id: JsonRpcId,
    caller: ListenCaller,
  ): Promise<{ tasks: ListenTaskIds | null } | null> {
    const asked = readListen((json as { params?: unknown }).params, options.tasks !== undefined);
    if (!asked.ok) {
      jsonError(res, 200, asked.code, asked.message, {}, id, asked.data);
      return null;
    }
    const signal = new AbortController();
    res.once("close", () => signal.abort());
    const held = await listenResources.hold(asked.uris, signal.signal, (json as { params?: unknown }).params, caller);
    if (!held.ok) {
      jsonError(res, 200, held.code, held.message, {}, id);
      return null;
    }
    if (signal.signal.aborted) held.release();
    else res.once("close", held.release);
    return { tasks: asked.tasks };
  }

  /** Listen streams open now: `close()` ends them gracefully. */
  const listenStreams = new Set<() => void>();
  /**
   * `response` (the SDK's listen stream), ended gracefully after `listenMs`, with
   * `notifications/tasks` for `caller`'s tasks among `asked`'s ids when it names any.
   */
  function listenStream(
    response: Response,
    asked: ListenTaskIds | null,
    subscriptionId: string | number,
    caller: Principal,
  ): Response {
    const listener: TaskListener | null = asked && {
      runner: options.tasks!,
      owner: caller.label,
      // The detail as tasks/get shows it to this caller (an unconnected server, only for its results' shape).
      detail: taskDetailOf(createMcpServer(gateway, { ...serverOptions, principal: caller.label }))!,
      approveVia: serverOptions.approveVia,
      ...(options.onError ? { onError: options.onError } : {}),
    };
    const wrapped = withListenStream(response, {
      subscriptionId,
      maxMs: listenMs,
      serverInfo: serverInfoOf(serverOptions),
      ...(asked && listener
        ? {
            tasks: {
              ids: asked.ids,
              watch: (send, done) => watchListenTasks(listener, asked, subscriptionId, send, done),
            },
          }
        : {}),
      ended: () => listenStreams.delete(wrapped.end),
    });
    listenStreams.add(wrapped.end);
    return wrapped.response;
  }
  return { holdListen, listenStream, listenStreams };
}
