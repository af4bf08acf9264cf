/** What `createMcpServer` takes (`McpServerOptions`) and the defaults it applies. */
import type { ChangeFeed } from "../../core/changes.js";
import type { LogLevel } from "../../core/tool.js";
import type { ApproveVia } from "../../runtime/approvals.js";
import type { TaskRunner } from "../../runtime/tasks.js";
import type { PassThrough } from "./pass-through.js";

/** The server as it names itself (`serverInfo`): in initialize and discover, and on every 2026-07-28 result. */
export function serverInfoOf(options: Pick<McpServerOptions, "name" | "version">): { name: string; version: string } {
  return { name: options.name ?? "toolgate", version: options.version ?? "0.1.0" };
}

export interface McpServerOptions {
  /** Reported in `serverInfo`; default "toolgate". */
  name?: string;
  /** Reported in `serverInfo`; default the package version. */
  version?: string;
  instructions?: string;
  /**
   * Session id the derived trajectory ids are built from (one-way); default a random UUID per server.
   * One that outlives this server (a caller's, used again by the next one) needs `requestScoped`.
   */
  sessionId?: string;
  /**
   * The server answers a single request and `sessionId` names a caller that outlives it (the
   * 2026-07-28 HTTP path): a call without `toolgate/call_id` gets a random call id instead of the
   * next of the session's sequence (mcp-call-1, 2, …), which would restart with every request.
   */
  requestScoped?: boolean;
  /**
   * Who the session's caller is, as authenticated by the transport: recorded as the approver of
   * an A3 call approved through this session's elicitation. Default `stdio client` (the process
   * that started toolgate); over HTTP the bearer credential's digest or the peer address.
   */
  principal?: string;
  /**
   * Whom this caller's bounds in the process count it as, and name it in their refusals (the calls it
   * may have held for its retries, `call-held.ts`, and its tasks running, `max_live_per_owner`), when
   * coarser than `principal`: over HTTP the grant its bearer verifies as, else its peer (the label of
   * `Principal.quota`), which a client cannot multiply by sending a new bearer string with each
   * request. Default `principal`.
   */
  quota?: string;
  /** Capability used when a call carries neither `_meta["toolgate/capability"]` nor a bearer token. */
  capability?: string;
  /**
   * Who may approve A3 calls: `cli` (a person with `toolgate approvals`, or the embedder's own
   * code through `gateway.approvals`; the client is never asked), `elicitation` (the person the
   * client asks through `elicitation/create`) or `both`. Default `both`; `serveHttp` makes it `cli`
   * when the gateway requires no capability.
   */
  approveVia?: ApproveVia;
  /** How long a person has to answer an elicitation, ms. Default 10 minutes. */
  approvalTimeoutMs?: number;
  /**
   * How often a call waiting for a person's answer sends a progress notification, when its
   * request carries a progressToken (clients that reset their timeout on progress then wait), ms.
   * Default 10,000.
   */
  approvalProgressMs?: number;
  /**
   * The gateway enforces no capabilities (no keys): a capability a call carries is ignored, and
   * the first such call of the session prints one warning through `warn`.
   */
  capabilitiesIgnored?: boolean;
  /** Operator warnings; default stderr (never stdout: over stdio that is the protocol). */
  warn?: (line: string) => void;
  /**
   * How long a 2026-07-28 client may keep this server's tools/list before asking again, ms
   * (`ttlMs`; the scope is `private`: a list may depend on who asks), and its resources/list,
   * resources/templates/list and prompts/list when `passThrough` serves them. Default 300,000: a
   * server's catalog is fixed for its life, and a list that changes is announced
   * (`notifications/…/list_changed`), which tells the client its copy is stale. 0 asks the
   * client to keep nothing. A 2025-11-25 answer carries no cache fields.
   */
  listTtlMs?: number;
  /**
   * Runs calls as tasks: a task-augmented tools/call (2025-11-25 tasks: tasks/get, result, list and
   * cancel), and on 2026-07-28 each call of a tool that may run as one from a client that declares
   * the `io.modelcontextprotocol/tasks` extension (tasks/get, update and cancel). Without it the
   * server advertises no tasks and a call carrying `task` is refused.
   */
  tasks?: TaskRunner;
  /**
   * Resources, prompts and completions served beside the tools (a proxy's upstreams'); each
   * capability is declared only when it is given.
   */
  passThrough?: PassThrough;
  /**
   * Emits when the tools this server lists changed while it runs (a proxy held a tool whose
   * upstream definition changed): the server declares `tools.listChanged`, and the transports
   * tell their clients (`announceListChanges`: each 2025-11-25 session and stdio connection,
   * each 2026-07-28 `subscriptions/listen` stream).
   */
  toolsChanged?: ChangeFeed;
  /**
   * The tools pass log messages on to their callers (a proxy relaying its upstream's): the server
   * declares `logging`, answers `logging/setLevel` (2025-11-25; default `info`) and reads a
   * 2026-07-28 request's level from its `_meta` (none there: no log messages for it).
   */
  logging?: boolean;
}

/** The level a 2025-11-25 session gets log messages at before it sends logging/setLevel. */
export const DEFAULT_LOG_LEVEL: LogLevel = "info";

/** A client may keep tools/list this long by default, ms. */
export const DEFAULT_LIST_TTL_MS = 300_000;

/** The caller a server's transport authenticated (`McpServerOptions.principal`): it owns the tasks the server starts. */
export function sessionPrincipal(options: Pick<McpServerOptions, "principal">): string {
  return options.principal ?? "stdio client";
}
