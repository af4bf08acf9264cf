/**
 * How a client learns its copy of a list is stale: the change announcements
 * (`announceListChanges`) and, on 2026-07-28, the cache fields of the lists (`listCacheHints`).
 */
import type { Server, ServerOptions } from "@modelcontextprotocol/server";
import type { McpServerOptions } from "./options.js";
import type { PassThrough } from "./pass-through.js";

/**
 * Tells the client of `server()` (the one serving the connection now) each time one of its lists
 * changed: `toolsChanged` as `notifications/tools/list_changed`, the pass-through's
 * `resourcesChanged`/`promptsChanged` as `notifications/resources/list_changed` and
 * `notifications/prompts/list_changed` (on a 2025-11-25 connection unsolicited, on a 2026-07-28
 * stdio connection the SDK's entry puts them on the `subscriptions/listen` streams that asked for
 * them); returns the function that stops. For a server that lives as long as its connection (not
 * one built per 2026-07-28 HTTP request: those hear through the handler's `notify`).
 */
export function announceListChanges(
  server: () => Server | undefined,
  feeds: Pick<McpServerOptions, "toolsChanged" | "passThrough">,
): () => void {
  const told = (send: (s: Server) => Promise<void>) => () => {
    const s = server();
    if (s) void send(s).catch(() => {});
  };
  const stops = [
    feeds.toolsChanged?.subscribe(told((s) => s.sendToolListChanged())),
    feeds.passThrough?.resourcesChanged?.subscribe(told((s) => s.sendResourceListChanged())),
    feeds.passThrough?.promptsChanged?.subscribe(told((s) => s.sendPromptListChanged())),
  ];
  return () => {
    for (const stop of stops) stop?.();
  };
}

/**
 * The cache fields of this server's lists on 2026-07-28 (the SDK stamps them on the results of
 * that revision only): tools/list, and the pass-through's lists when it serves them. They are
 * `private` like tools/list: a shared cache would hand them to callers the server never admitted
 * (with keys, only a grant's holder may read them). Each list's change is announced to the clients
 * (`announceListChanges`, and over HTTP the handler's `notify`), which invalidates what they kept.
 */
export function listCacheHints(ttlMs: number, passThrough: PassThrough | undefined): ServerOptions["cacheHints"] {
  const hint = { ttlMs, cacheScope: "private" } as const;
  return {
    "tools/list": hint,
    ...(passThrough?.resources ? { "resources/list": hint, "resources/templates/list": hint } : {}),
    ...(passThrough?.prompts ? { "prompts/list": hint } : {}),
  };
}
