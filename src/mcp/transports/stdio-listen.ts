/**
 * 2026-07-28 `subscriptions/listen` over stdio, as over Streamable HTTP (`listen-hold.ts`). The
 * SDK's stdio entry answers a listen itself: it keeps the four core filter fields (drops
 * `taskIds`), ends a listen when a `notifications/cancelled` names it, and bounds listens only at
 * 1,024. `StdioListens` sits between the line transport and that entry. A listen is read first
 * (`readListen`: -32602 naming the field), bounded at `DEFAULT_MAX_LISTENS_PER_CLIENT` open on the
 * connection, its `resourceSubscriptions` subscribed upstream (the proxy's pass-through), and it
 * reaches the entry without `taskIds`; the entry's acknowledgement gets them back, and from then on
 * the connection's own tasks among them are pushed as `notifications/tasks` stamped with the
 * listen's id. A listen ends — its upstream subscriptions given up, its watch stopped — when a
 * `notifications/cancelled` names it (which the entry also hears), when the entry answers it (an
 * error, or the graceful result as the connection closes) or at `closeAll()`. Toolgate also ends
 * one itself, with the graceful result (`listenEnded`), as over HTTP: once it has been open for
 * `maxListenMs`, and, when it names only tasks (the entry's acknowledgement honored nothing of the
 * core filter), once each of its tasks is final. The entry, which would hold it until the
 * connection closes, is then told it was cancelled (`forget`), and a notification still stamped
 * with its id is not sent.
 */
import {
  isJSONRPCErrorResponse,
  isJSONRPCNotification,
  isJSONRPCResultResponse,
  SUBSCRIPTION_ID_META_KEY,
  type Implementation,
  type JSONRPCMessage,
  type JSONRPCNotification,
  type JSONRPCRequest,
  type RequestId,
} from "@modelcontextprotocol/server";
import { ToolgateError } from "../../core/errors.js";
import { shownValue } from "../../observation/escape.js";
import { isKind } from "../server/parsed.js";
import type { ResourceSubscriptions } from "../server/pass-through.js";
import {
  ackWithTaskIds,
  DEFAULT_MAX_LISTENS_PER_CLIENT,
  ListenResources,
  listenCutoffMs,
  listenEnded,
  listenLifetime,
  readListen,
  watchListenTasks,
  type ListenCaller,
  type ListenGate,
  type ListenTaskIds,
  type TaskListener,
} from "./listen-hold.js";

export interface StdioListenOptions {
  /** Writes one message to the client. */
  send: (message: JSONRPCMessage) => Promise<void>;
  /** Upstream resource subscriptions (the proxy's pass-through), when the server has them. */
  subscriptions: ResourceSubscriptions | undefined;
  /** What checks and audits a listen's resourceSubscriptions (the gateway's keys, its audit trail). */
  gate?: ListenGate;
  /** The connection's client: its default capability and audit principal. */
  caller?: ListenCaller;
  /** Tells the connection's listens a resource changed: the entry puts it on the listens naming the URI. */
  updated: (uri: string) => void;
  /** Who hears the listens' tasks, when the server runs tasks. */
  tasks: TaskListener | undefined;
  /** Listens open at once; default `DEFAULT_MAX_LISTENS_PER_CLIENT` (8), as over HTTP. */
  maxListens?: number;
  /** How long one listen stays open, ms (`ListenOptions.maxListenMs`: default one hour, 0 none). */
  maxListenMs?: number;
  /** Tells the entry a listen toolgate ended is gone (a `notifications/cancelled` naming it, delivered in order). */
  forget?: (message: JSONRPCMessage) => void;
  /** The server, as the graceful end toolgate writes names it (`serverInfoOf`). */
  serverInfo: Implementation;
}

interface Open {
  tasks: ListenTaskIds | null;
  abort: AbortController;
  release: () => void;
  stop: () => void;
  /** Its lifetime's end, when it has one. */
  timer?: NodeJS.Timeout;
}

export class StdioListens {
  private readonly open = new Map<RequestId, Open>();
  private readonly resources: ListenResources;
  private readonly max: number;
  private readonly lifetime: number;

  constructor(private readonly o: StdioListenOptions) {
    this.resources = new ListenResources(o.subscriptions, { updated: o.updated }, o.gate);
    this.max = o.maxListens ?? DEFAULT_MAX_LISTENS_PER_CLIENT;
    if (!Number.isSafeInteger(this.max) || this.max < 1)
      throw new ToolgateError(
        "invalid_input",
        `maxListensPerClient must be a whole number of at least 1; received ${String(this.max)}; e.g. ${DEFAULT_MAX_LISTENS_PER_CLIENT}`,
      );
    this.lifetime = listenLifetime(o.maxListenMs);
  }

  /** Listens open now. */
  get size(): number {
    return this.open.size;
  }

  /**
   * An inbound message as the entry should see it, or null when it was answered here; a promise
   * while a listen's resources are being subscribed (later messages must wait for it).
   */
  inbound(message: JSONRPCMessage): JSONRPCMessage | null | Promise<JSONRPCMessage | null> {
    // A message the line transport parsed has a known kind (`parsed.ts`); another is parsed as that kind.
    const method = (message as { method?: unknown }).method;
    if (method === "notifications/cancelled" && isKind(message, "notification")) {
      const id = ((message as JSONRPCNotification).params as { requestId?: RequestId } | undefined)?.requestId;
      if (id !== undefined) this.end(id);
      return message;
    }
    if (method !== "subscriptions/listen" || !isKind(message, "request")) return message;
    return this.listen(message as JSONRPCRequest);
  }

  /** A subscriptions/listen request, opened here or refused (`inbound`). */
  private listen(message: JSONRPCRequest): JSONRPCMessage | null | Promise<JSONRPCMessage | null> {
    const { id } = message;
    if (this.open.has(id))
      return this.refuse(
        id,
        -32600,
        `subscriptions/listen id ${shownValue(id)} names a listen already open on this connection; give each listen its own request id`,
      );
    if (this.open.size >= this.max)
      return this.refuse(
        id,
        -32000,
        `too many subscriptions/listen streams at once on this stdio connection: ${this.open.size} are open, the most toolgate allows (${this.max}); cancel one you no longer read (notifications/cancelled naming its request id), or ask for several notification types on one listen`,
        { limit: this.max },
      );
    const asked = readListen(message.params, this.o.tasks !== undefined);
    if (!asked.ok) return this.refuse(id, asked.code, asked.message, asked.data);
    const entry: Open = { tasks: asked.tasks, abort: new AbortController(), release: () => {}, stop: () => {} };
    this.open.set(id, entry);
    if (this.lifetime > 0)
      entry.timer = setTimeout(() => void this.endGracefully(id), listenCutoffMs(this.lifetime)).unref();
    const forwarded = asked.tasks ? withoutTaskIds(message) : message;
    if (asked.uris.length === 0 || !this.o.subscriptions) return forwarded;
    return this.resources.hold(asked.uris, entry.abort.signal, message.params, this.o.caller).then((held) => {
      if (!held.ok) {
        clearTimeout(entry.timer);
        this.open.delete(id);
        return this.refuse(id, held.code, held.message);
      }
      // Ended while subscribing (the connection closed): nothing is held for it.
      if (this.open.get(id) !== entry) {
        held.release();
        return null;
      }
      entry.release = held.release;
      return forwarded;
    });
  }

  /**
   * Sends an outbound message: the acknowledgement of a listen that names tasks gets them back and
   * starts their watch; an answer to a listen (an error, the graceful result) ends it.
   */
  async send(message: JSONRPCMessage): Promise<void> {
    // Without a method it is no notification; without a listen open, an answer ends none: neither is parsed then.
    if ((message as { method?: unknown }).method !== undefined && isJSONRPCNotification(message)) {
      const id = (message.params?._meta as Record<string, unknown> | undefined)?.[SUBSCRIPTION_ID_META_KEY];
      const entry = typeof id === "string" || typeof id === "number" ? this.open.get(id) : undefined;
      // A listen toolgate ended hears nothing more, though the entry may not have heard of it yet.
      if (id !== undefined && !entry) return;
      const listener = this.o.tasks;
      if (message.method === "notifications/subscriptions/acknowledged" && entry?.tasks && listener) {
        const honored = (message.params as { notifications?: Record<string, unknown> }).notifications ?? {};
        const tasksOnly = Object.keys(honored).length === 0;
        await this.o.send(ackWithTaskIds(message, entry.tasks.ids));
        if (this.open.get(id as RequestId) === entry)
          entry.stop = watchListenTasks(
            listener,
            entry.tasks,
            id as RequestId,
            (note) => void this.o.send(note),
            // Nothing but its tasks kept it open: each is final, so it ends, as over HTTP.
            () => void (tasksOnly && this.endGracefully(id as RequestId)),
          );
        return;
      }
    }
    if (this.open.size > 0 && (isJSONRPCResultResponse(message) || isJSONRPCErrorResponse(message)))
      if (message.id !== undefined) this.end(message.id);
    return this.o.send(message);
  }

  /** Ends every listen open now (the connection is closing). */
  closeAll(): void {
    for (const id of [...this.open.keys()]) this.end(id);
  }

  private end(id: RequestId): void {
    const entry = this.open.get(id);
    if (!entry) return;
    this.open.delete(id);
    clearTimeout(entry.timer);
    entry.abort.abort();
    entry.stop();
    entry.release();
  }

  /** Ends the listen `id` with the graceful result, the entry told it is gone first. */
  private async endGracefully(id: RequestId): Promise<void> {
    if (!this.open.has(id)) return;
    this.end(id);
    this.o.forget?.({ jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: id } });
    await this.o.send(listenEnded(id, this.o.serverInfo)).catch(() => {});
  }

  private async refuse(id: RequestId, code: number, message: string, data?: Record<string, unknown>): Promise<null> {
    await this.o.send({ jsonrpc: "2.0", id, error: { code, message, ...(data ? { data } : {}) } });
    return null;
  }
}

/** `listen` as the entry should see it: its filter without `taskIds`, which toolgate serves. */
function withoutTaskIds(listen: JSONRPCRequest): JSONRPCRequest {
  const params = listen.params as { notifications: Record<string, unknown> };
  const { taskIds: _served, ...notifications } = params.notifications;
  return { ...listen, params: { ...params, notifications } };
}
