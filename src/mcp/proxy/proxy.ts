/**
 * `toolgate proxy`: toolgate in front of any MCP server. The upstream's catalog is read at start
 * (every page; again when a dead upstream is restarted, see `UpstreamLink`), linted (findings and a summary line for
 * the operator), turned into ToolSpecs
 * and handed to a real Gateway, so every call meets validation, capability, idempotency,
 * approval and budgets before the upstream sees it. Serve the result with `serveStdio` or
 * `serveHttp` like any gateway, handing them `toolsChanged` and `logging: true`.
 *
 * While it runs: the upstream's progress and log messages reach the caller of the call they
 * belong to (`upstream-notices.ts`), and a `notifications/tools/list_changed` re-reads the
 * catalog (`list-watch.ts`): a tool whose definition is no longer the one read at start — the
 * proxy's pin, kept in memory — or that is gone is held (not listed, its calls refused) until a
 * restart, and the clients are told their list changed.
 */
import type { Client, Tool } from "@modelcontextprotocol/client";
import { closeOpenObjects } from "../../schema/close.js";
import { formatReport } from "../../schema/lint/format.js";
import { lintSources, type LintReport } from "../../schema/lint/report.js";
import { AUTHORITY, type AuthorityLevel, type ToolSpec } from "../../core/tool.js";
import { ToolgateError } from "../../core/errors.js";
import type { Gateway } from "../../runtime/types.js";
import { DEFAULT_PROXY_TASK_TIMEOUT_MS, DEFAULT_PROXY_TIMEOUT_MS, proxyToolSpec } from "./proxy-tools.js";
import { upstreamDeclaresTasks } from "./upstream-tasks.js";
import { connectUpstream, describeTarget, listAllTools, type UpstreamTarget } from "./upstream.js";
import { catalogFingerprint, UpstreamLink } from "./upstream-link.js";
import type { ListFilter } from "./aggregate-catalog.js";
import { openPassThrough, type PassThroughSource, type UpstreamPassThrough } from "./pass-through.js";
import { boundedText, UpstreamNotices } from "./upstream-notices.js";
import { coalesced, findingLines, holdRelisted, relist } from "./list-watch.js";
import { ChangeSignal, type ChangeFeed } from "../../core/changes.js";
import { definitionHash, pinnedDefinition } from "../../idempotency/pins.js";
import { lintTool } from "../../schema/lint/index.js";
import type { CheckIssue } from "../../core/tool.js";

export interface ProxyOptions {
  upstream: UpstreamTarget;
  /** Builds the gateway over the proxied tools, e.g. `(tools) => createGateway({ tools, store })`. */
  gateway: (tools: ToolSpec[]) => Gateway | Promise<Gateway>;
  /** Operator log (lint findings, the summary, upstream exit); default stderr. Never stdout. */
  log?: (line: string) => void;
  /**
   * Validate against the upstream's schemas exactly as declared. Default false: object schemas
   * the upstream left open (no `additionalProperties`) are closed (`schema/close.ts`), so an
   * unknown field is refused with toolgate's error before the upstream sees it.
   */
  openSchemas?: boolean;
  /** Every proxied call's time limit, ms (default 60 s); `toolTimeoutMs` overrides it per tool name. */
  timeoutMs?: number;
  toolTimeoutMs?: Record<string, number>;
  /**
   * The limit of a call the upstream runs as a task, ms (default an hour), in place of its tool's:
   * for a tool listed with `execution.taskSupport`, and every tool of an upstream that declares the
   * 2026-07-28 tasks extension (`upstream-tasks.ts`); the tool's own limit still bounds each request.
   */
  taskTimeoutMs?: number;
  /** How the operator raises a tool's limit (`task`: a task's), said when a call is cut at it (the CLI names its flags). */
  timeoutHint?: (tool: string, ms: number, task: boolean) => string;
  /** Which of the upstream's prompts are served (`aggregate-catalog.ts` `ListFilter`); absent: all. */
  prompts?: ListFilter;
  /** Which of its resources and templates are served, and which URIs read; absent: all. */
  resources?: ListFilter;
}

export interface Proxy {
  gateway: Gateway;
  tools: ToolSpec[];
  /** The upstream catalog's lint report, as logged at start. */
  lint: LintReport;
  /** Emits when a served tool is newly held (the list clients see changed): hand it to the MCP server's `toolsChanged`. */
  toolsChanged: ChangeFeed;
  /** The upstream client now connected; null while the upstream is down (the next call restarts it). */
  readonly client: Client | null;
  /**
   * The upstream's resources, prompts and completions, for `McpServerOptions.passThrough` (what it
   * declared, read at start; empty when it declares none of them).
   */
  passThrough: UpstreamPassThrough;
  /** Closes the gateway (waiting up to `grace_ms` for in-flight calls), then the upstream. */
  close(options?: { grace_ms?: number }): Promise<void>;
}

function summary(
  target: string,
  tools: ToolSpec[],
  lint: LintReport,
  closed: { objects: number; tools: number },
): string {
  const levels: Record<AuthorityLevel, number> = { A0: 0, A1: 0, A2: 0, A3: 0 };
  for (const t of tools) levels[AUTHORITY[t.effect]] += 1;
  const levelText = (Object.keys(levels) as AuthorityLevel[]).map((l) => `${l} ${levels[l]}`).join(", ");
  const closedText =
    closed.objects === 0
      ? ""
      : `; closed ${closed.objects} open object schema${closed.objects === 1 ? "" : "s"} in ${closed.tools} tool${closed.tools === 1 ? "" : "s"} (unknown fields are refused before the upstream sees them; --open-schemas keeps them as declared)`;
  return `toolgate proxy: ${tools.length} tools from ${target} (${levelText}); lint: ${lint.summary.errors} errors, ${lint.summary.warnings} warnings${closedText}`;
}

/** The tools as served: open object schemas closed unless the operator keeps them open. */
export function servedTools(listed: Tool[], open: boolean): { tools: Tool[]; objects: number; closedTools: number } {
  if (open) return { tools: listed, objects: 0, closedTools: 0 };
  let objects = 0;
  let closedTools = 0;
  const tools = listed.map((tool) => {
    const { schema, closed } = closeOpenObjects(tool.inputSchema as Record<string, unknown>);
    if (closed.length === 0) return tool;
    objects += closed.length;
    closedTools += 1;
    return { ...tool, inputSchema: schema as Tool["inputSchema"] };
  });
  return { tools, objects, closedTools };
}

/** Starts (or reaches) the upstream, reads and lints its catalog, and builds the gateway. */
export async function createProxy(options: ProxyOptions): Promise<Proxy> {
  const log = options.log ?? ((line: string) => process.stderr.write(line + "\n"));
  const target = describeTarget(options.upstream);
  const client = await connectUpstream(options.upstream, undefined, log);
  let link: UpstreamLink | null = null;
  const toolsChanged = new ChangeSignal();
  // The pass-through hears its lists' changes on every client the link connects, once it is open.
  let passThrough: UpstreamPassThrough | undefined;
  let source: PassThroughSource | undefined;
  try {
    const listed = await listAllTools(client);
    // The same report `toolgate lint --mcp` prints; the proxy serves the tools regardless.
    const lint = lintSources([{ source: `mcp:${target}`, value: { tools: listed } }]);
    if (lint.findings.length > 0) log(formatReport(lint, "text").trimEnd());
    // The definitions read at start are the pins a list_changed is checked against.
    const pins = new Map(listed.map((t) => [t.name, definitionHash(pinnedDefinition(t))]));
    const held = new Set<string>();
    const serverName = client.getServerVersion()?.name;
    // One proxied server has no name in the operator's configuration: it is named as its logs are.
    const upstreamName = typeof serverName === "string" && serverName !== "" ? boundedText(serverName, 64) : "upstream";
    const notices = new UpstreamNotices(upstreamName, log);
    link = new UpstreamLink(options.upstream, client, catalogFingerprint(listed), log, (c) => {
      notices.listen(c);
      if (passThrough && source) passThrough.watch(source, c);
      c.setNotificationHandler(
        "notifications/tools/list_changed",
        coalesced(async () => {
          if (await recheck(c, pins, held, log)) toolsChanged.emit();
        }),
      );
    });
    const served = servedTools(listed, options.openSchemas === true);
    const perTool = options.toolTimeoutMs ?? {};
    const unknown = Object.keys(perTool).filter((name) => !served.tools.some((t) => t.name === name));
    if (unknown.length > 0) {
      const names = served.tools.map((t) => t.name);
      throw new ToolgateError(
        "invalid_option",
        `a time limit names ${unknown.map((n) => JSON.stringify(n)).join(", ")}, which ${target} does not serve; its tools are ${names.join(", ")}`,
      );
    }
    const upstream_tasks = upstreamDeclaresTasks(client);
    const task_timeout_ms = options.taskTimeoutMs ?? DEFAULT_PROXY_TASK_TIMEOUT_MS;
    const tools = served.tools.map((t) => {
      const timeout_ms = perTool[t.name] ?? options.timeoutMs ?? DEFAULT_PROXY_TIMEOUT_MS;
      const spec = proxyToolSpec(link!, t, {
        timeout_ms,
        task_timeout_ms,
        upstream_tasks,
        upstream_name: upstreamName,
        notices,
        ...(options.timeoutHint ? { timeout_hint: options.timeoutHint(t.name, timeout_ms, false) } : {}),
        log,
      });
      // A call cut at a task's limit names that limit (a request cut at the tool's names the tool's).
      if (options.timeoutHint && spec.timeout_ms !== timeout_ms)
        spec.timeout_hint = options.timeoutHint(t.name, spec.timeout_ms!, true);
      const issue: CheckIssue = {
        path: "",
        code: "awaiting_restart",
        message: `${t.name}'s definition changed at its upstream server while toolgate proxy ran, so it is held: nothing was executed. Use other tools meanwhile, or tell the user that ${t.name} changed and toolgate proxy must be restarted to serve it`,
      };
      const isHeld = () => held.has(t.name);
      return { ...spec, check: () => (isHeld() ? [issue] : undefined), mcp: { ...spec.mcp, hidden: isHeld } };
    });
    source = {
      server: target,
      link,
      namespace: "",
      timeoutMs: options.timeoutMs ?? DEFAULT_PROXY_TIMEOUT_MS,
      inFlight: () => notices.enter(undefined),
      ...(options.prompts ? { prompts: options.prompts } : {}),
      ...(options.resources ? { resources: options.resources } : {}),
    };
    passThrough = await openPassThrough([source], { separator: "", log });
    passThrough.watch(source, client);
    log(summary(target, tools, lint, { objects: served.objects, tools: served.closedTools }));
    const gateway = await options.gateway(tools);
    // Each resource read, prompt and completion leaves its line in the gateway's audit trail.
    passThrough.audit = (read) => gateway.recordRead?.(read);
    return {
      gateway,
      tools,
      lint,
      passThrough,
      toolsChanged,
      get client() {
        return link!.client;
      },
      async close(closeOptions) {
        try {
          await gateway.close(closeOptions);
        } finally {
          await link!.close();
        }
      },
    };
  } catch (err) {
    await (link ? link.close() : client.close());
    throw err;
  }
}

/** After a list_changed: re-reads the catalog and holds what changed or went (see the top); whether one was held. */
async function recheck(
  client: Client,
  served: ReadonlyMap<string, string>,
  held: Set<string>,
  log: (line: string) => void,
): Promise<boolean> {
  const listed = await relist(client, "the upstream", log);
  if (!listed) return false;
  return holdRelisted(listed, served, held, {
    held: (h) => {
      log(
        `toolgate proxy: the upstream's tool ${JSON.stringify(h.tool)} is held (${h.why === "gone" ? "the upstream no longer lists it" : "its definition changed while the proxy ran"}): it is not listed and its calls are refused until toolgate proxy restarts`,
      );
      for (const line of findingLines(h.now ? lintTool(h.now) : [])) log(line);
    },
    added: (names) =>
      log(`toolgate proxy: the upstream now lists ${names.join(", ")}, not served until toolgate proxy restarts`),
  });
}
