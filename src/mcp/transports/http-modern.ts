/**
 * The 2026-07-28 path of the HTTP endpoint: stateless. Each request is served on its own by the
 * SDK's per-request handler (`createMcpHandler`), with one MCP server built for it; requests and
 * listen streams in flight are bounded per principal (`http-admission.ts`: one more answered 429),
 * and a request's slot is held until the gateway calls it started end (`holding`). List changes
 * reach the listen streams through the handler's `notify`.
 */
import type http from "node:http";
import { createMcpHandler, type Server } from "@modelcontextprotocol/server";
import type { Gateway } from "../../runtime/types.js";
import type { Principal } from "./http-sessions.js";
import { PrincipalSlots, type Slot } from "./http-admission.js";
import { bearerToken } from "../server/meta.js";
import { createMcpServer, type McpServerOptions } from "../server/server.js";
import type { HttpOptions } from "./http-options.js";
import { jsonError, requestOf } from "./http-replies.js";
import { LruCache } from "../../core/lru.js";
import { httpListens } from "./http-listen.js";

/**
 * `gateway`, whose calls hold `slot` until they end: a client that goes away mid-call frees its
 * request's slot only once the call it started is over, not when its connection closes.
 */
function holding(gateway: Gateway, slot: Slot): Gateway {
  return {
    get tools() {
      return gateway.tools;
    },
    get requiresCapability() {
      return gateway.requiresCapability;
    },
    get approvals() {
      return gateway.approvals;
    },
    call: (proposal, options) => gateway.call(proposal, options).finally(slot.hold()),
    holder: (capability) => gateway.holder(capability),
    visible: (capability) => gateway.visible(capability),
    close: (options) => gateway.close(options),
  };
}

/** How long a client over its request bound waits before it retries, s. */
const REQUEST_RETRY_AFTER_S = "1";
/** How long a client over its listen bound waits before it retries, s. */
const LISTEN_RETRY_AFTER_S = "5";

/** What the stateless path is given by `serveHttp`. */
export interface ModernContext {
  gateway: Gateway;
  options: HttpOptions;
  serverOptions: McpServerOptions;
  maxBytes: number;
  /** 2026-07-28 requests in flight, and listen streams open, at once per principal. */
  maxRequests: number;
  maxListens: number;
  /** How long a listen stream lasts, ms. */
  listenMs: number;
  /** Writes an answer to its client (`close()` waits for what is being written). */
  respond: (res: http.ServerResponse, response: Response) => Promise<void>;
}

/** How many distinct operator warnings the 2026-07-28 path remembers having printed. */
const WARNED_LINES = 1024;

/** The per-request handler of one endpoint, and what `close()` must end of it. */
export function modernPath(context: ModernContext) {
  const { gateway, options, serverOptions, maxBytes, listenMs, respond } = context;
  const requestSlots = new PrincipalSlots(context.maxRequests, {
    noun: "2026-07-28 requests",
    state: "in flight",
    flag: "--max-requests-per-client",
    advice: "wait for an answer before sending another request",
  });
  const listenSlots = new PrincipalSlots(context.maxListens, {
    noun: "subscriptions/listen streams",
    state: "open",
    flag: "--max-listens-per-client",
    advice:
      "close a stream you no longer read (a stream ends when its connection closes) or ask for several notification types on one stream",
  });
  /** The slot each 2026-07-28 request holds, and whom the bounds count its caller as, by the AuthInfo its server is built with. */
  const slots = new WeakMap<object, Slot>();
  const quotas = new WeakMap<object, string>();
  // Each request has a server of its own, so a warning its server prints once (a capability
  // ignored without keys) would be printed at every request of a caller: here once per line,
  // that is per caller and kind, among the last WARNED_LINES.
  const warnedLines = new LruCache<string, true>(WARNED_LINES);
  const operatorWarn = serverOptions.warn ?? ((line: string) => void process.stderr.write(line + "\n"));
  const warn = (line: string) => {
    if (warnedLines.has(line)) return;
    warnedLines.set(line, true);
    operatorWarn(line);
  };

  /** Servers answering a 2026-07-28 request now; `close()` lets them send their answers first. */
  const modernServers = new Set<Server>();
  const modern = createMcpHandler(
    (ctx) => {
      const label = ctx.authInfo?.clientId ?? "unknown peer";
      const slot = ctx.authInfo ? slots.get(ctx.authInfo) : undefined;
      const quota = ctx.authInfo ? quotas.get(ctx.authInfo) : undefined;
      const server = createMcpServer(slot ? holding(gateway, slot) : gateway, {
        ...serverOptions,
        warn,
        sessionId: `principal ${label}`,
        requestScoped: true,
        principal: label,
        ...(quota !== undefined ? { quota } : {}),
      });
      if (options.onError) server.onerror = options.onError;
      modernServers.add(server);
      const prior = server.onclose;
      server.onclose = () => {
        prior?.();
        modernServers.delete(server);
      };
      return server;
    },
    { legacy: "reject", maxRequestBodySize: maxBytes, ...(options.onError ? { onerror: options.onError } : {}) },
  );
  // A 2026-07-28 client hears of a list change on its subscriptions/listen stream (when it asked for that list).
  const modernFeeds = [
    options.toolsChanged?.subscribe(() => modern.notify.toolsChanged()),
    options.passThrough?.resourcesChanged?.subscribe(() => modern.notify.resourcesChanged()),
    options.passThrough?.promptsChanged?.subscribe(() => modern.notify.promptsChanged()),
  ];
  const stopAnnouncingModern = () => {
    for (const stop of modernFeeds) stop?.();
  };

  const { holdListen, listenStream, listenStreams } = httpListens({
    gateway,
    options,
    serverOptions,
    listenMs,
    updates: { updated: (uri) => modern.notify.resourceUpdated(uri) },
  });

  /**
   * One 2026-07-28 request. Its server is built for it alone; the caller's principal names the
   * trajectory, so a retry that carries an approval's answer (a new request) is the same caller's
   * call to the gateway, and the approval the gateway finds for it is the one it was asked about.
   */
  async function serveModern(
    request: Request,
    json: unknown,
    caller: Principal,
    res: http.ServerResponse,
  ): Promise<void> {
    const authInfo = { token: "", clientId: caller.label, scopes: [] };
    quotas.set(authInfo, caller.quota.label);
    const asked = requestOf(json);
    if (asked) {
      const kind = asked.listen ? listenSlots : requestSlots;
      const taken = kind.take(caller.quota);
      if (!taken.ok)
        return jsonError(
          res,
          429,
          -32000,
          taken.message,
          { "retry-after": asked.listen ? LISTEN_RETRY_AFTER_S : REQUEST_RETRY_AFTER_S },
          asked.id,
          { limit: taken.limit, flag: kind.kind.flag },
        );
      res.once("close", taken.slot.hold());
      slots.set(authInfo, taken.slot);
    }
    // Only a listen needs its caller's bearer read here (a tools/call's is read by the server).
    const listen =
      asked?.listen === true
        ? await holdListen(json, res, asked.id, {
            capability: bearerToken(request.headers.get("authorization") ?? undefined),
            principal: caller.label,
            http: true,
          })
        : undefined;
    if (listen === null) return;
    const response = await modern.fetch(request, { parsedBody: json, authInfo });
    if (!listen) return respond(res, response);
    await respond(res, listenStream(response, listen.tasks, asked!.id ?? 0, caller));
  }
  return { modern, modernServers, listenStreams, stopAnnouncingModern, serveModern };
}
