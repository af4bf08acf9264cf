/**
 * What toolgate adds to a 2026-07-28 `subscriptions/listen`, the same over Streamable HTTP
 * (`http-listen.ts`, with `listen-stream.ts` for its SSE answer) and stdio (`stdio-listen.ts`). The SDK's
 * entries serve the core filter (its four change types); around them toolgate
 *
 * - reads the filter first (`readListen`): each core field checked and named in a -32602,
 *   `resourceSubscriptions` bounded, `taskIds` read by `server/tasks-push.ts` when tasks are served;
 * - holds the upstream resource subscriptions a listen names while it is open (`ListenResources`:
 *   one upstream subscription per URI across a transport's listens, each update published once,
 *   for the SDK to put on the listens naming that URI), checked as a 2025-11-25
 *   resources/subscribe is (`ListenGate`: when the gateway has keys, a capability that verifies,
 *   from the listen's `_meta`, the bearer header or the session's default) and audited as one is
 *   (a `kind: "read"` line per URI, operation `subscriptions/listen`);
 * - pushes the tasks extension's `notifications/tasks` for the listener's own tasks
 *   (`watchListenTasks`), stamped with the listen's subscription id, after an acknowledgement that
 *   names the `taskIds` the SDK dropped (`ackWithTaskIds`);
 * - ends a listen that has been open for `maxListenMs` (default one hour; each up to a tenth sooner,
 *   at random: `listenCutoffMs`) with the revision's
 *   graceful close, the empty `subscriptions/listen` result (`listenEnded`), on which a client
 *   listens again: a stream no longer read still frees its place, its upstream subscriptions and
 *   its connection, and one that is read hears of it rather than of a dropped connection.
 */
import {
  SERVER_INFO_META_KEY,
  SUBSCRIPTION_ID_META_KEY,
  type ClientCapabilities,
  type Implementation,
  type RequestId,
} from "@modelcontextprotocol/server";
import { ToolgateError } from "../../core/errors.js";
import { isPlainObject } from "../../core/json.js";
import { shownValue } from "../../observation/escape.js";
import type { TaskRecord } from "../../idempotency/tasks.js";
import type { TaskRunner } from "../../runtime/tasks.js";
import { READ_REASON_CHARS, type Gateway, type ReadAudit } from "../../runtime/types.js";
import { META_KEYS } from "../server/meta.js";
import { traceOfMeta } from "../server/trace-of.js";
import {
  MAX_SUBSCRIPTIONS_PER_CLIENT,
  type ResourceSubscriber,
  type ResourceSubscriptions,
} from "../server/pass-through.js";
import { readTaskListen, watchTasks } from "../server/tasks-push.js";

/** `subscriptions/listen` streams one client may hold open at once (a principal over HTTP, a stdio connection). */
export const DEFAULT_MAX_LISTENS_PER_CLIENT = 8;

/** How long a `subscriptions/listen` stays open before toolgate ends it gracefully, ms (one hour). */
export const DEFAULT_MAX_LISTEN_MS = 3_600_000;
/** The most `maxListenMs` may be (a day; Node's timers hold at most 2^31-1 ms). */
export const MAX_LISTEN_MS = 86_400_000;

/** What bounds the `subscriptions/listen` streams of a transport (HTTP and stdio alike). */
export interface ListenOptions {
  /**
   * Listens open at once per client (over HTTP a principal, over stdio the connection); default
   * `DEFAULT_MAX_LISTENS_PER_CLIENT` (8).
   */
  maxListensPerClient?: number;
  /**
   * How long one listen stays open, ms, before it is ended with the graceful `subscriptions/listen`
   * result (the client listens again); default `DEFAULT_MAX_LISTEN_MS` (one hour); 0: no cutoff.
   */
  maxListenMs?: number;
}

/** `maxListenMs` checked (0: none), its default when absent; a bad value names the option. */
export function listenLifetime(value: number | undefined): number {
  if (value === undefined) return DEFAULT_MAX_LISTEN_MS;
  if (!Number.isSafeInteger(value) || value < 0 || value > MAX_LISTEN_MS)
    throw new ToolgateError(
      "invalid_input",
      `maxListenMs must be a whole number of milliseconds from 0 (no cutoff) to ${MAX_LISTEN_MS}; received ${String(value)}; e.g. ${DEFAULT_MAX_LISTEN_MS}`,
    );
  return value;
}

/**
 * When one listen of lifetime `maxMs` (> 0) is ended: up to a tenth sooner, at random, so that
 * listens opened together (clients that reconnected at once) do not all end, and listen again,
 * in the same moment.
 */
export function listenCutoffMs(maxMs: number): number {
  return maxMs - Math.floor(Math.random() * Math.floor(maxMs / 10));
}

/**
 * The revision's graceful end of the listen `subscriptionId`: its empty result, naming the
 * subscription and, as every 2026-07-28 result may (the SDK puts it on the results it writes), the
 * server that wrote it (`serverInfo`, `server/options.ts` `serverInfoOf`).
 */
export function listenEnded(subscriptionId: RequestId, serverInfo: Implementation) {
  return {
    jsonrpc: "2.0" as const,
    id: subscriptionId,
    result: {
      resultType: "complete",
      _meta: { [SUBSCRIPTION_ID_META_KEY]: subscriptionId, [SERVER_INFO_META_KEY]: serverInfo },
    },
  };
}

/** The tasks a listen asks to hear of, and the capabilities its client declared on it. */
export interface ListenTaskIds {
  ids: string[];
  capabilities: ClientCapabilities | undefined;
}

export type ListenAsk =
  | { ok: true; uris: string[]; tasks: ListenTaskIds | null }
  | { ok: false; code: number; message: string; data?: Record<string, unknown> };

const FILTER = "subscriptions/listen params.notifications";
const FLAGS = ["toolsListChanged", "promptsListChanged", "resourcesListChanged"] as const;
const INVALID_PARAMS = -32602;

const refused = (message: string): ListenAsk => ({ ok: false, code: INVALID_PARAMS, message });

/**
 * What a `subscriptions/listen` request's params ask for, or why they are refused (-32602 naming
 * the field; `taskIds` as `readTaskListen` refuses them, -32021 without the extension). `tasks`:
 * whether this server runs tasks (else `taskIds` is left to the SDK, which drops it).
 */
export function readListen(params: unknown, tasks: boolean): ListenAsk {
  const filter = isPlainObject(params) ? params.notifications : undefined;
  if (!isPlainObject(filter))
    return refused(
      `${FILTER} must be an object naming what to hear, e.g. {"toolsListChanged":true}; received ${shownValue(filter)}`,
    );
  for (const flag of FLAGS)
    if (filter[flag] !== undefined && typeof filter[flag] !== "boolean")
      return refused(`${FILTER}.${flag} must be true or false; received ${shownValue(filter[flag])}`);
  const wanted = filter.resourceSubscriptions ?? [];
  if (!Array.isArray(wanted))
    return refused(
      `${FILTER}.resourceSubscriptions must be an array of resource URIs (strings); received ${shownValue(wanted)}`,
    );
  if (wanted.length > MAX_SUBSCRIPTIONS_PER_CLIENT)
    return refused(
      `${FILTER}.resourceSubscriptions must be at most ${MAX_SUBSCRIPTIONS_PER_CLIENT} resource URIs (strings); received ${wanted.length} entries; open another listen stream for the rest`,
    );
  const bad = wanted.findIndex((uri) => typeof uri !== "string");
  if (bad >= 0)
    return refused(
      `${FILTER}.resourceSubscriptions[${bad}] must be a resource URI (a string); received ${shownValue(wanted[bad])}`,
    );
  const read = tasks ? readTaskListen(params) : ({ kind: "none" } as const);
  if (read.kind === "refused")
    return { ok: false, code: read.code, message: read.message, ...(read.data ? { data: read.data } : {}) };
  return {
    ok: true,
    uris: [...new Set(wanted as string[])],
    tasks: read.kind === "tasks" ? { ids: read.ids, capabilities: read.capabilities } : null,
  };
}

export type Held = { ok: true; release: () => void } | { ok: false; code: number; message: string };

/** What checks and records a listen's `resourceSubscriptions`: the gateway's keys, and the audit trail. */
export interface ListenGate {
  gateway: Pick<Gateway, "requiresCapability" | "holder">;
  /** Where each URI's audit line goes (`PassThrough.audit`); absent: none is written. */
  audit?: (read: ReadAudit) => void;
}

/** Who opens a listen, as its transport knows them. */
export interface ListenCaller {
  /** The capability it carries besides `_meta` (HTTP: its bearer token; stdio: the session's default). */
  capability: string | undefined;
  /** The audit line's principal. */
  principal: string;
  /** Whether a refusal may point to the Authorization header. */
  http: boolean;
}

/** The capability a listen's params carry in `_meta`, else `fallback`. */
function capabilityOf(params: unknown, fallback: string | undefined): string | undefined {
  const meta = isPlainObject(params) && isPlainObject(params._meta) ? params._meta : undefined;
  const sent = meta?.[META_KEYS.capability];
  return typeof sent === "string" ? sent : fallback;
}

const LISTEN_URIS = `${FILTER}.resourceSubscriptions`;

/**
 * The upstream resource subscriptions of one transport's listens, as one `subscriber` (that
 * transport's way of telling its listens): a URI is subscribed upstream when the first listen
 * naming it opens and given up when the last one ends.
 */
export class ListenResources {
  private readonly counts = new Map<string, number>();

  constructor(
    private readonly subscriptions: ResourceSubscriptions | undefined,
    private readonly subscriber: ResourceSubscriber,
    private readonly gate?: ListenGate,
  ) {}

  /**
   * Holds `uris` until `release` (idempotent); a URI nothing can subscribe to refuses them all,
   * naming why. With the gateway's keys, `params` (the listen's) must carry a capability that
   * verifies, as a resources/subscribe must (-32600 naming where to send it).
   */
  async hold(uris: readonly string[], signal: AbortSignal, params?: unknown, caller?: ListenCaller): Promise<Held> {
    const subscriptions = this.subscriptions;
    if (!subscriptions || uris.length === 0) return { ok: true, release: () => {} };
    const started = performance.now();
    const meta = isPlainObject(params) && isPlainObject(params._meta) ? params._meta : undefined;
    const trace = traceOfMeta(meta);
    let grant: string | null = null;
    const line = (uri: string, outcome: ReadAudit["outcome"], source: string | null, reason?: string) =>
      this.gate?.audit?.({
        operation: "subscriptions/listen",
        target: uri,
        source,
        principal: caller?.principal ?? "unknown",
        grant,
        outcome,
        ...(reason !== undefined ? { reason: reason.slice(0, READ_REASON_CHARS) } : {}),
        answer_chars: 0,
        latency_ms: Math.round(performance.now() - started),
        ...(trace !== undefined ? { trace } : {}),
      });
    const refuse = (code: number, message: string): Held => {
      for (const uri of uris) line(uri, "refused", null, message);
      return { ok: false, code, message };
    };
    if (this.gate?.gateway.requiresCapability) {
      const capability = capabilityOf(params, caller?.capability);
      if (capability === undefined)
        return refuse(
          -32600,
          `${LISTEN_URIS} needs a capability on this server: send it in params._meta["${META_KEYS.capability}"]${caller?.http ? " or an Authorization: Bearer header" : ""} (any grant the server verifies may read)`,
        );
      let holder: Awaited<ReturnType<Gateway["holder"]>>;
      try {
        holder = await this.gate.gateway.holder(capability);
      } catch (err) {
        return refuse(-32603, `${LISTEN_URIS}: the capability could not be checked: ${(err as Error).message}`);
      }
      if (holder === null)
        return refuse(
          -32600,
          `${LISTEN_URIS}: the capability sent does not verify on this server (expired, revoked or not issued by its keys); ask its operator for a grant`,
        );
      grant = holder.grant;
    }
    const held: string[] = [];
    const release = () => {
      for (const uri of held.splice(0)) {
        const n = (this.counts.get(uri) ?? 1) - 1;
        if (n > 0) this.counts.set(uri, n);
        else {
          this.counts.delete(uri);
          subscriptions.unsubscribe(uri, this.subscriber);
        }
      }
    };
    for (const uri of uris) {
      let source: string | null = null;
      try {
        if (!this.counts.has(uri))
          await subscriptions.subscribe(uri, this.subscriber, { signal, routed: (s) => void (source = s) });
      } catch (err) {
        release();
        const message = `${LISTEN_URIS}: ${(err as Error).message}`;
        line(uri, source === null ? "refused" : "error", source, message);
        return { ok: false, code: INVALID_PARAMS, message };
      }
      this.counts.set(uri, (this.counts.get(uri) ?? 0) + 1);
      held.push(uri);
      line(uri, "ok", source);
    }
    return { ok: true, release };
  }
}

/** Who hears a listen's tasks: the runner, the listener (only its own tasks are heard) and the task as tasks/get shows it. */
export interface TaskListener {
  runner: TaskRunner;
  owner: string;
  /** The DetailedTask as tasks/get answers the listener (`GatewayServer.taskDetail`). */
  detail: (t: TaskRecord, elicit: boolean) => Promise<Record<string, unknown>>;
  /** Who may approve A3 calls (`McpServerOptions.approveVia`): an approval is shown as an elicitation unless `cli`. */
  approveVia: string | undefined;
  onError?: (error: Error) => void;
}

/** A `notifications/tasks` message on the listen `subscriptionId`. */
export function taskNotification(params: Record<string, unknown>, subscriptionId: RequestId) {
  return {
    jsonrpc: "2.0" as const,
    method: "notifications/tasks",
    params: { ...params, _meta: { [SUBSCRIPTION_ID_META_KEY]: subscriptionId } },
  };
}

/** The SDK's `notifications/subscriptions/acknowledged` message, naming `ids` beside what the SDK honored. */
export function ackWithTaskIds<M extends { params?: unknown }>(ack: M, ids: readonly string[]): M {
  const params = (isPlainObject(ack.params) ? ack.params : {}) as { notifications?: Record<string, unknown> };
  return { ...ack, params: { ...params, notifications: { ...params.notifications, taskIds: ids } } };
}

/**
 * Watches `asked`'s tasks for `listener` (`watchTasks`), each change sent as a whole message by
 * `send`; `done` is told once none is left to watch. Returns the function that stops.
 */
export function watchListenTasks(
  listener: TaskListener,
  asked: ListenTaskIds,
  subscriptionId: RequestId,
  send: (message: ReturnType<typeof taskNotification>) => void,
  done: () => void,
): () => void {
  const elicit = listener.approveVia !== "cli" && asked.capabilities?.elicitation !== undefined;
  return watchTasks({
    runner: listener.runner,
    owner: listener.owner,
    ids: asked.ids,
    detail: (t) => listener.detail(t, elicit),
    send: (params) => send(taskNotification(params, subscriptionId)),
    done,
    ...(listener.onError ? { onError: listener.onError } : {}),
  });
}
