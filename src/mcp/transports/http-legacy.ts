/**
 * The 2025-11-25 path of the HTTP endpoint: sessions. An `initialize` without `Mcp-Session-Id`
 * opens one (admitted by `http-sessions.ts`'s `SessionTable`: bounded in all and per principal,
 * the oldest idle one evicted), with its own SDK session transport and MCP server; a request
 * naming a session is served in it when the session is its caller's (else 404, as an unknown one);
 * a session with no request open for `sessionIdleMs` is closed (`expireIdle`), answers still being
 * prepared sent first. The session's tasks are told while its GET stream is open (`task-routes.ts`:
 * a task's question goes there when no tasks/result of the task waits).
 */
import type http from "node:http";
import { randomUUID } from "node:crypto";
import { isLegacyRequest, WebStandardStreamableHTTPServerTransport, type Server } from "@modelcontextprotocol/server";
import type { Gateway } from "../../runtime/types.js";
import { escapeUntrusted } from "../../observation/escape.js";
import { principalOf, SessionTable, type Principal, type Tracked } from "./http-sessions.js";
import {
  announceListChanges,
  answersSent,
  createMcpServer,
  taskRoutesOf,
  type McpServerOptions,
} from "../server/server.js";
import type { HttpOptions } from "./http-options.js";
import { echoedId, jsonError, messageMethod, parsed, readPost } from "./http-replies.js";
import { toWebRequest } from "./node-web.js";

interface Session extends Tracked {
  transport: WebStandardStreamableHTTPServerTransport;
  server: Server;
}

/** What the session path is given by `serveHttp`. */
export interface LegacyContext {
  gateway: Gateway;
  options: HttpOptions;
  /** The options each session's MCP server is built with. */
  serverOptions: McpServerOptions;
  /** Sessions open at once, in all and per principal. */
  limits: { total: number; perClient: number };
  idleMs: number;
  maxBytes: number;
  now: () => number;
  /** Writes an answer to its client (`close()` waits for what is being written). */
  respond: (res: http.ServerResponse, response: Response) => Promise<void>;
}

/** The sessions of one endpoint and the two ways a 2025-11-25 request reaches them. */
export function legacySessions(context: LegacyContext) {
  const { gateway, options, serverOptions, idleMs, maxBytes, now, respond } = context;
  const sessions = new SessionTable<Session>(context.limits);
  /** Sessions still closing (expired, evicted); `close()` waits for them. */
  const closing = new Set<Promise<void>>();

  /** Counts `res` as open on `session` until it ends; the idle time starts when the last one does. */
  function track(session: Session, res: http.ServerResponse): void {
    session.open++;
    session.lastActive = now();
    res.once("close", () => {
      session.open--;
      session.lastActive = now();
    });
  }

  async function shut(session: Session): Promise<void> {
    await answersSent(session.server);
    await session.server.close();
  }

  /** Closes `list` (already out of the table); resolves with how many, once they are closed. */
  function closeAll(list: Session[]): Promise<number> {
    if (list.length === 0) return Promise.resolve(0);
    const done = Promise.all(list.map((s) => shut(s).catch((err: unknown) => options.onError?.(err as Error)))).then(
      () => {},
    );
    closing.add(done);
    return done.then(() => {
      closing.delete(done);
      return list.length;
    });
  }

  const expireIdle = () => closeAll(sessions.takeIdle(now() - idleMs));

  async function open(principal: Principal): Promise<Session> {
    const id = randomUUID();
    const server = createMcpServer(gateway, {
      ...serverOptions,
      sessionId: id,
      principal: principal.label,
      quota: principal.quota.label,
    });
    const transport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: () => id,
      onsessioninitialized: (sid) => sessions.initialised(session, sid),
      onsessionclosed: () => sessions.remove(session),
      maxRequestBodySize: maxBytes,
    });
    const session: Session = { transport, server, principal, open: 0, lastActive: now() };
    sessions.add(session);
    // A change of the tool list goes to this session's GET stream while the session lives.
    const stopAnnouncing = announceListChanges(() => server, options);
    transport.onclose = () => {
      stopAnnouncing();
      sessions.remove(session);
    };
    if (options.onError) server.onerror = options.onError;
    // A question of the session's tasks reaches the client outside a tasks/result only on its GET stream.
    taskRoutesOf(server)?.needsGetStream();
    await server.connect(transport);
    return session;
  }

  /** A request naming session `sid`: served in it when it is the caller's and of its revision. */
  async function inSession(req: http.IncomingMessage, res: http.ServerResponse, sid: string): Promise<void> {
    const principal = principalOf(req);
    // Another caller's session answers exactly like an unknown one: its id opens nothing.
    const session = sessions.lookup(sid, principal);
    if (!session)
      return jsonError(
        res,
        404,
        -32001,
        `Session not found: ${escapeUntrusted(sid.slice(0, 100))} is unknown, expired or closed; start a new session with initialize`,
      );
    track(session, res);
    const read = await readPost(req, res, maxBytes);
    if (read === null) return;
    const request = toWebRequest(req, res, read.bytes);
    // A session is 2025-11-25's; a request of the 2026-07-28 revision in it is another era's.
    if (read.json !== undefined && !(await isLegacyRequest(request, read.json, { maxRequestBodySize: maxBytes })))
      return jsonError(
        res,
        400,
        -32600,
        `this request is of the 2026-07-28 revision (its _meta envelope or MCP-Protocol-Version header says so), but it names session ${escapeUntrusted(sid.slice(0, 100))}, which speaks 2025-11-25: send a 2026-07-28 request without Mcp-Session-Id, or a 2025-11-25 one (no io.modelcontextprotocol/protocolVersion in _meta, MCP-Protocol-Version: 2025-11-25) in the session`,
        {},
        echoedId(read.json),
      );
    const response = await session.transport.handleRequest(request, parsed(read));
    // A GET answered with its stream is the session's stream for requests outside any request, until it ends.
    if (req.method === "GET" && response.ok && response.headers.get("content-type")?.startsWith("text/event-stream"))
      res.once("close", taskRoutesOf(session.server)?.getStreamOpened() ?? (() => {}));
    return respond(res, response);
  }

  /** A 2025-11-25 message without a session: only an initialize may open one. */
  async function initialize(
    res: http.ServerResponse,
    request: Request,
    read: { json: unknown },
    caller: Principal,
  ): Promise<void> {
    const method = messageMethod(read.json);
    if (method !== undefined && method !== "initialize")
      return jsonError(
        res,
        400,
        -32000,
        `Bad Request: ${method === null ? "a JSON-RPC response" : escapeUntrusted(JSON.stringify(method.slice(0, 100)))} without a session: a 2025-11-25 request needs the Mcp-Session-Id of a session its initialize opened, and a 2026-07-28 request needs the _meta envelope (io.modelcontextprotocol/protocolVersion, clientCapabilities, clientInfo) with MCP-Protocol-Version, Mcp-Method and Mcp-Name headers`,
        {},
        echoedId(read.json),
      );
    const admitted = sessions.admit(caller);
    if (!admitted.ok) return jsonError(res, admitted.status, -32000, admitted.message, { "retry-after": "5" });
    void closeAll(admitted.evict);
    const session = await open(caller);
    track(session, res);
    const response = await session.transport.handleRequest(request, parsed(read));
    if (session.transport.sessionId === undefined) {
      sessions.remove(session);
      await session.server.close();
    }
    await respond(res, response);
  }

  return { sessions, closing, shut, expireIdle, inSession, initialize };
}
