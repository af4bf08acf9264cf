/**
 * `createAggregateProxy`: N upstream MCP servers behind one gateway. Each is started (stdio, with
 * only the environment its entry names beside the SDK's short safe list) or reached (Streamable
 * HTTP); its catalog is read, linted (TG011 tool poisoning among the rules), shaped by its settings
 * (`aggregate-catalog.ts`: include/exclude, namespaced names, effects) and checked against the pins
 * in the guard store: a tool whose whole definition differs from its pin is held — left out of
 * tools/list, every call refused with an observation saying it awaits review — until an operator
 * accepts it (`toolgate pins accept`) and the proxy restarts. The same happens to a tool whose
 * definition changes while the proxy runs (`notifications/tools/list_changed`). Calls in flight
 * to one upstream are capped (`concurrency`).
 */
import type { Client, Tool } from "@modelcontextprotocol/client";
import type { CheckIssue, ToolSpec } from "../../core/tool.js";
import type { GuardStore } from "../../idempotency/guard-store.js";
import { reviewPins } from "../../idempotency/pins.js";
import { ChangeSignal, type ChangeFeed } from "../../core/changes.js";
import type { Gateway } from "../../runtime/types.js";
import { formatReport } from "../../schema/lint/format.js";
import { lintTool } from "../../schema/lint/index.js";
import { lintSources, type LintReport } from "../../schema/lint/report.js";
import { callGate } from "../../tools/bash.js";
import {
  checkCollisions,
  effectFor,
  publishedName,
  selectTools,
  type CatalogSettings,
  type ListFilter,
} from "./aggregate-catalog.js";
import { servedTools } from "./proxy.js";
import { DEFAULT_PROXY_TASK_TIMEOUT_MS, DEFAULT_PROXY_TIMEOUT_MS, proxyGrant, proxyToolSpec } from "./proxy-tools.js";
import { upstreamDeclaresTasks } from "./upstream-tasks.js";
import { connectUpstream, describeTarget, listAllTools, type UpstreamTarget } from "./upstream.js";
import { catalogFingerprint, UpstreamLink } from "./upstream-link.js";
import { openPassThrough, type PassThroughSource, type UpstreamPassThrough } from "./pass-through.js";
import { coalesced, findingLines, holdRelisted, relist } from "./list-watch.js";
import { UpstreamNotices } from "./upstream-notices.js";

export interface AggregateUpstream extends CatalogSettings {
  target: UpstreamTarget;
  timeout_ms?: number;
  /**
   * The bound of a call it runs as a task (a tool with `execution.taskSupport`, or any tool of an
   * upstream that declares the tasks extension), each tool's own first; default an hour
   * (`DEFAULT_PROXY_TASK_TIMEOUT_MS`), never less than the tool's `timeout_ms`.
   */
  task_timeout_ms?: number;
  budget_tokens?: number;
  /** Calls in flight at once to this upstream; one more is refused (nothing run). */
  concurrency?: number;
  /** Which of its prompts are served (absent: all). */
  prompts?: ListFilter;
  /** Which of its resources and templates are served (absent: all). */
  resources?: ListFilter;
}

export interface AggregateOptions {
  upstreams: readonly AggregateUpstream[];
  /** Between a namespace and a tool's name. Default `__`. */
  separator?: string;
  /** Where pins are kept (shared by replicas). */
  guard: GuardStore;
  /** Builds the gateway over the served tools; `published` says where each comes from. */
  gateway: (tools: ToolSpec[], published: readonly PublishedTool[]) => Gateway | Promise<Gateway>;
  log?: (line: string) => void;
  openSchemas?: boolean;
  clock?: () => number;
}

/** One published tool: where it comes from, and whether it is held for review. */
export interface PublishedTool {
  name: string;
  server: string;
  tool: string;
  held: boolean;
}

export interface AggregateProxy {
  gateway: Gateway;
  tools: ToolSpec[];
  published: PublishedTool[];
  /** Each upstream's lint report, by server name. */
  lint: Map<string, LintReport>;
  /** The upstreams' resources, prompts and completions, for `McpServerOptions.passThrough` (`pass-through.ts`). */
  passThrough: UpstreamPassThrough;
  /** Emits when a served tool is newly held (the list clients see changed): hand it to the MCP server's `toolsChanged`. */
  toolsChanged: ChangeFeed;
  close(options?: { grace_ms?: number }): Promise<void>;
}

/** One upstream, connected and read. */
interface Opened {
  upstream: AggregateUpstream;
  client: Client;
  listed: Tool[];
}

export async function createAggregateProxy(options: AggregateOptions): Promise<AggregateProxy> {
  const log = options.log ?? ((line: string) => process.stderr.write(line + "\n"));
  const clock = options.clock ?? Date.now;
  const separator = options.separator ?? "__";
  const opened = await openAll(options.upstreams, log);
  const links: UpstreamLink[] = [];
  const toolsChanged = new ChangeSignal();
  let passThrough: UpstreamPassThrough | undefined;
  try {
    const published: PublishedTool[] = [];
    const tools: ToolSpec[] = [];
    const lint = new Map<string, LintReport>();
    const sources: PassThroughSource[] = [];
    for (const { upstream, client, listed } of opened) {
      const report = lintSources([{ source: `mcp:${upstream.name}`, value: { tools: listed } }]);
      lint.set(upstream.name, report);
      if (report.findings.length > 0) log(formatReport(report, "text").trimEnd());
      const selected = selectTools(upstream, listed);
      const verdicts = await reviewPins(options.guard.pins, upstream.name, selected, clock());
      const held = new Set(verdicts.filter((v) => v.state === "held").map((v) => v.tool));
      const served = new Map(verdicts.map((v) => [v.tool, v.hash]));
      for (const name of held) log(heldLine(upstream.name, name, "its definition differs from the one pinned"));
      const notices = new UpstreamNotices(upstream.name, log);
      const link = new UpstreamLink(upstream.target, client, catalogFingerprint(listed), log, (c) => {
        notices.listen(c);
        // A client the link connects after start (a restarted upstream) is heard by the pass-through too.
        if (passThrough) passThrough.watch(source, c);
        onToolsChanged(c, async () => {
          if (await recheck(upstream, c, served, held, options.guard, clock, log)) toolsChanged.emit();
        });
      });
      links.push(link);
      const source: PassThroughSource = {
        server: upstream.name,
        link,
        namespace: upstream.namespace,
        timeoutMs: upstream.timeout_ms ?? DEFAULT_PROXY_TIMEOUT_MS,
        inFlight: () => notices.enter(undefined),
        ...(upstream.prompts ? { prompts: upstream.prompts } : {}),
        ...(upstream.resources ? { resources: upstream.resources } : {}),
      };
      sources.push(source);
      const gate = upstream.concurrency === undefined ? null : concurrencyGate(upstream);
      for (const t of servedTools(selected, options.openSchemas === true).tools) {
        const name = publishedName(upstream.namespace, separator, t.name);
        published.push({ name, server: upstream.name, tool: t.name, held: held.has(t.name) });
        tools.push(
          guardedSpec(link, t, name, upstream, { held, gate, log, notices, tasks: upstreamDeclaresTasks(client) }),
        );
      }
    }
    checkCollisions(published);
    // Read before the summary line, which stays the last line of the start.
    passThrough = await openPassThrough(sources, { separator, log });
    for (const [i, o] of opened.entries()) passThrough.watch(sources[i]!, o.client);
    log(
      `toolgate proxy: ${published.length - published.filter((p) => p.held).length} tools from ${opened.length} servers (${opened.map((o) => o.upstream.name).join(", ")}); ${published.filter((p) => p.held).length} held for review`,
    );
    const gateway = await options.gateway(tools, published);
    // Each resource read, prompt and completion leaves its line in the gateway's audit trail.
    passThrough.audit = (read) => gateway.recordRead?.(read);
    return {
      gateway,
      tools,
      published,
      lint,
      passThrough,
      toolsChanged,
      async close(closeOptions) {
        try {
          await gateway.close(closeOptions);
        } finally {
          await Promise.all(links.map((l) => l.close()));
        }
      },
    };
  } catch (err) {
    await Promise.all(opened.map((o, i) => (links[i] ? links[i]!.close() : o.client.close()).catch(() => {})));
    throw err;
  }
}

/** Starts every upstream at once; if one fails, the others are closed and the first failure names its server. */
async function openAll(upstreams: readonly AggregateUpstream[], log: (line: string) => void): Promise<Opened[]> {
  const settled = await Promise.allSettled(
    upstreams.map(async (upstream) => {
      const client = await connectUpstream(upstream.target, undefined, log);
      try {
        return { upstream, client, listed: await listAllTools(client) };
      } catch (err) {
        await client.close().catch(() => {});
        throw err;
      }
    }),
  );
  const failed = settled.findIndex((s) => s.status === "rejected");
  if (failed < 0) return settled.map((s) => (s as PromiseFulfilledResult<Opened>).value);
  await Promise.all(settled.map((s) => (s.status === "fulfilled" ? s.value.client.close().catch(() => {}) : null)));
  const err = (settled[failed] as PromiseRejectedResult).reason as Error;
  err.message = `server ${upstreams[failed]!.name} (${describeTarget(upstreams[failed]!.target)}): ${err.message}`;
  throw err;
}

function concurrencyGate(upstream: AggregateUpstream) {
  return callGate(upstream.concurrency!, `${upstream.name} tools`, `mcpServers.${upstream.name}.toolgate.concurrency`);
}

function heldLine(server: string, tool: string, why: string): string {
  return `toolgate proxy: ${server}'s tool ${JSON.stringify(tool)} is held for review (${why}): it is not listed and its calls are refused; see toolgate pins diff ${server} ${tool}, then toolgate pins accept ${server} ${tool} and restart`;
}

/** One upstream tool as the gateway serves it: renamed, its effect and limits set, refused while held. */
function guardedSpec(
  link: UpstreamLink,
  tool: Tool,
  name: string,
  upstream: AggregateUpstream,
  around: {
    held: ReadonlySet<string>;
    gate: ReturnType<typeof callGate> | null;
    log: (line: string) => void;
    notices: UpstreamNotices;
    /** The upstream declared the tasks extension: any of its calls may come back as a task. */
    tasks: boolean;
  },
): ToolSpec {
  const { held, gate, log, notices } = around;
  const own = upstream.tools[tool.name] ?? {};
  const timeout_ms = own.timeout_ms ?? upstream.timeout_ms ?? DEFAULT_PROXY_TIMEOUT_MS;
  const spec = proxyToolSpec(link, tool, {
    timeout_ms,
    task_timeout_ms: own.task_timeout_ms ?? upstream.task_timeout_ms ?? DEFAULT_PROXY_TASK_TIMEOUT_MS,
    upstream_tasks: around.tasks,
    log: (line) => log(line.replace("toolgate proxy: ", `toolgate proxy: ${upstream.name}'s `)),
    notices,
    upstream_name: upstream.name,
  });
  // A call cut at a task's bound names where the file sets it (a request cut at the tool's limit says nothing new).
  if (spec.timeout_ms !== timeout_ms)
    spec.timeout_hint = `That is the time limit toolgate proxy sets for ${name} while its server (${upstream.name}) runs it as a task (${spec.timeout_ms} ms). If the work needs longer, tell the user: whoever runs toolgate proxy can raise it with "task_timeout_ms" in mcpServers.${upstream.name}.toolgate (or in its "tools": {"${tool.name}": {...}}); or split the work into smaller calls.`;
  const effect = effectFor(upstream, tool);
  const budget = own.budget_tokens ?? upstream.budget_tokens;
  const handler = spec.handler;
  const awaiting: CheckIssue = {
    path: "",
    code: "awaiting_review",
    message: `${name}'s definition changed at its server (${upstream.name}) after it was pinned, so it is held until an operator reviews the change; nothing was executed. Use other tools meanwhile, or tell the user that ${name} awaits review (toolgate pins diff ${upstream.name} ${tool.name})`,
  };
  return {
    ...spec,
    name,
    effect,
    ...(budget !== undefined ? { budget_tokens: budget } : {}),
    grant: (args) => proxyGrant(name, effect, args),
    check: () => (held.has(tool.name) ? [awaiting] : undefined),
    mcp: { ...spec.mcp, hidden: () => held.has(tool.name) },
    handler: gate
      ? async (args, ctx) => {
          const leave = gate.enter();
          try {
            return await handler(args, ctx);
          } finally {
            leave();
          }
        }
      : handler,
  };
}

/** Hears `notifications/tools/list_changed` from one client: one re-list at a time, a storm folded into one more. */
function onToolsChanged(client: Client, changed: () => Promise<void>): void {
  client.setNotificationHandler("notifications/tools/list_changed", coalesced(changed));
}

/**
 * After a list_changed: reads the catalog again and holds every served tool whose definition is
 * no longer the one served (its new definition is kept pending in the pins, with its lint
 * findings logged). A tool that appeared is not served until a restart. Returns whether a tool
 * was newly held (the served list changed).
 */
async function recheck(
  upstream: AggregateUpstream,
  client: Client,
  served: ReadonlyMap<string, string>,
  held: Set<string>,
  guard: GuardStore,
  clock: () => number,
  log: (line: string) => void,
): Promise<boolean> {
  const listed = await relist(client, upstream.name, log);
  if (!listed) return false;
  await reviewPins(
    guard.pins,
    upstream.name,
    listed.filter((t) => served.has(t.name)),
    clock(),
  );
  return holdRelisted(listed, served, held, {
    held: (h) => {
      const why = h.why === "gone" ? "its server no longer lists it" : "its definition changed while the proxy ran";
      log(heldLine(upstream.name, h.tool, why));
      for (const line of findingLines(h.now ? lintTool(h.now) : [])) log(line);
    },
    added: (names) =>
      log(`toolgate proxy: ${upstream.name} now lists ${names.join(", ")}, not served until toolgate proxy restarts`),
  });
}
