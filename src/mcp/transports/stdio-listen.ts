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
 * error, or the graceful result as the connection closes) or at `closeAll()`. One that names only
 * tasks stays open, as the entry holds every listen, until then.
 */
import {
  isJSONRPCErrorResponse,
  isJSONRPCNotification,
  isJSONRPCRequest,
  isJSONRPCResultResponse,
  SUBSCRIPTION_ID_META_KEY,
  type JSONRPCMessage,
  type JSONRPCRequest,
  type RequestId,
} from "@modelcontextprotocol/server";
import { shownValue } from "../../observation/escape.js";
import type { ResourceSubscriptions } from "../server/pass-through.js";
import {
  ackWithTaskIds,
  DEFAULT_MAX_LISTENS_PER_CLIENT,
  ListenResources,
  readListen,
  watchListenTasks,
  type ListenTaskIds,
  type TaskListener,
} from "./listen-hold.js";

export interface StdioListenOptions {
  /** Writes one message to the client. */
  send: (message: JSONRPCMessage) => Promise<void>;
  /** Upstream resource subscriptions (the proxy's pass-through), when the server has them. */
  subscriptions: ResourceSubscriptions | undefined;
  /** Tells the connection's listens a resource changed: the entry puts it on the listens naming the URI. */
  updated: (uri: string) => void;
  /** Who hears the listens' tasks, when the server runs tasks. */
  tasks: TaskListener | undefined;
  /** Listens open at once; default `DEFAULT_MAX_LISTENS_PER_CLIENT` (8), as over HTTP. */
  maxListens?: number;
}

interface Open {
  tasks: ListenTaskIds | null;
  abort: AbortController;
  release: () => void;
  stop: () => void;
}

export class StdioListens {
  private readonly open = new Map<RequestId, Open>();
  private readonly resources: ListenResources;
  private readonly max: number;

  constructor(private readonly o: StdioListenOptions) {
    this.resources = new ListenResources(o.subscriptions, { updated: o.updated });
    this.max = o.maxListens ?? DEFAULT_MAX_LISTENS_PER_CLIENT;
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
    if (isJSONRPCNotification(message) && message.method === "notifications/cancelled") {
      const id = (message.params as { requestId?: RequestId } | undefined)?.requestId;
      if (id !== undefined) this.end(id);
      return message;
    }
    if (!isJSONRPCRequest(message) || message.method !== "subscriptions/listen") return message;
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
    const forwarded = asked.tasks ? withoutTaskIds(message) : message;
    if (asked.uris.length === 0 || !this.o.subscriptions) return forwarded;
    return this.resources.hold(asked.uris, entry.abort.signal).then((held) => {
      if (!held.ok) {
        this.open.delete(id);
        return this.refuse(id, -32602, held.message);
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
    if (isJSONRPCNotification(message) && message.method === "notifications/subscriptions/acknowledged") {
      const id = (message.params?._meta as Record<string, unknown> | undefined)?.[SUBSCRIPTION_ID_META_KEY];
      const entry = typeof id === "string" || typeof id === "number" ? this.open.get(id) : undefined;
      const listener = this.o.tasks;
      if (entry?.tasks && listener) {
        await this.o.send(ackWithTaskIds(message, entry.tasks.ids));
        if (this.open.get(id as RequestId) === entry)
          entry.stop = watchListenTasks(
            listener,
            entry.tasks,
            id as RequestId,
            (note) => void this.o.send(note),
            () => {},
          );
        return;
      }
    }
    if (isJSONRPCResultResponse(message) || isJSONRPCErrorResponse(message))
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
    entry.abort.abort();
    entry.stop();
    entry.release();
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
