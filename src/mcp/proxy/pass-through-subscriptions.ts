/**
 * Resource subscriptions, counted per URI across the MCP server's clients: one subscription held
 * at the upstream that serves the URI (at most `MAX_SUBSCRIBED_URIS` in all), given up when its
 * last subscriber leaves; an update told only to that URI's subscribers, a storm of them folded to
 * one per `UPDATE_GAP_MS`; a restarted upstream asked again for what its last one held.
 */
import { ProtocolError, ProtocolErrorCode, type Client } from "@modelcontextprotocol/client";
import { identifierProblem, MAX_URI_CHARS } from "./upstream-bounds.js";
import { coalesced } from "./list-watch.js";
import { ask, invalid, shown, type PassThroughSource, type Routed } from "./pass-through-ask.js";

/** Upstream subscriptions toolgate proxy holds at once, across all its clients and upstreams. */
export const MAX_SUBSCRIBED_URIS = 10_000;
/**
 * The least time between two resources/updated told for one URI, ms: the first is told at once,
 * every one that arrives within the gap after it is folded into one told when the gap ends (an
 * update names only its URI, so nothing is lost), and a storm of them costs each subscriber a
 * notification (and a re-read) per gap, not one per upstream message.
 */
export const UPDATE_GAP_MS = 250;

/** Who hears an update of a URI it subscribed to (the MCP server's connection or listen streams). */
export interface ResourceSubscriber {
  updated(uri: string): void;
}

/** Subscriptions counted per URI across subscribers (the shape of the server's `ResourceSubscriptions`). */
export interface ResourceSubscriptions {
  subscribe(uri: string, subscriber: ResourceSubscriber, request: Routed): Promise<void>;
  unsubscribe(uri: string, subscriber: ResourceSubscriber): void;
}

/** The subscriptions over the upstreams of `withResources` that declare them, and the hook that hears their updates. */
export function openSubscriptions(
  withResources: readonly PassThroughSource[],
  ownerOf: (uri: string, method: string) => PassThroughSource | undefined,
): {
  withSubscribe: PassThroughSource[];
  subscriptions: ResourceSubscriptions;
  /** Hears `source`'s resources/updated on `client` and subscribes it again to what it held (`UpstreamPassThrough.watch`). */
  watch(source: PassThroughSource, client: Client): void;
} {
  const withSubscribe = withResources.filter((s) => {
    const r = s.link.client?.getServerCapabilities()?.resources as { subscribe?: unknown } | undefined;
    return r?.subscribe === true;
  });
  const subscribed = new Map<
    string,
    { source: PassThroughSource; subscribers: Set<ResourceSubscriber>; tell: () => void }
  >();
  const subscriptions: ResourceSubscriptions = {
    async subscribe(uri, subscriber, request) {
      const problem = identifierProblem(uri, MAX_URI_CHARS);
      if (problem !== null)
        throw invalid(
          `resources/subscribe params.uri must be a resource's URI (at most ${MAX_URI_CHARS} characters); received ${problem}`,
        );
      const held = subscribed.get(uri);
      if (held) {
        // Held at that upstream already: its audit line names it, though nothing more is asked of it.
        request.routed?.(held.source.server);
        held.subscribers.add(subscriber);
        return;
      }
      const owner = ownerOf(uri, "resources/subscribe");
      if (!owner || !withSubscribe.includes(owner))
        throw invalid(
          `resources/subscribe params.uri ${shown(uri)} is ${owner ? `served by ${owner.server}, which offers no subscriptions` : "not a resource any upstream lists, and matches none of their templates"}; call resources/list for the resources served`,
        );
      if (subscribed.size >= MAX_SUBSCRIBED_URIS)
        throw new ProtocolError(
          ProtocolErrorCode.InternalError,
          `resources/subscribe: toolgate proxy already holds ${MAX_SUBSCRIBED_URIS} upstream subscriptions, the most it keeps; try again once others are given up`,
        );
      const subscribers = new Set([subscriber]);
      const tell = coalesced(
        async () => {
          for (const s of [...subscribers]) s.updated(uri);
        },
        { gapMs: UPDATE_GAP_MS },
      );
      const entry = { source: owner, subscribers, tell };
      subscribed.set(uri, entry);
      request.routed?.(owner.server);
      try {
        await ask(owner, "resources/subscribe", { uri }, request.signal);
      } catch (err) {
        if (subscribed.get(uri) === entry) subscribed.delete(uri);
        throw err;
      }
    },
    unsubscribe(uri, subscriber) {
      const held = subscribed.get(uri);
      if (!held || !held.subscribers.delete(subscriber) || held.subscribers.size > 0) return;
      subscribed.delete(uri);
      void ask(held.source, "resources/unsubscribe", { uri }).catch(() => {});
    },
  };

  return {
    withSubscribe,
    subscriptions,
    watch(source, client) {
      if (!withSubscribe.includes(source)) return;
      // An update is told only to the subscribers of its URI at the upstream that holds it, at most
      // once per UPDATE_GAP_MS (`tell`); any other is dropped.
      client.setNotificationHandler("notifications/resources/updated", (note) => {
        const uri = (note.params as { uri?: unknown } | undefined)?.uri;
        const held = typeof uri === "string" ? subscribed.get(uri) : undefined;
        if (!held || held.source !== source) return;
        held.tell();
      });
      // A restarted upstream knows nothing of what the last one was asked: subscribe again.
      for (const [uri, held] of subscribed)
        if (held.source === source) void client.subscribeResource({ uri }).catch(() => {});
    },
  };
}
