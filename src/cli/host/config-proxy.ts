/**
 * What `toolgate proxy --config FILE` builds from a checked `mcpServers` file: the upstreams of
 * the aggregate (each server's transport and toolgate block) and the rate windows of each
 * published tool (per tool, per server, per grant holder), counted in the guard store.
 */
import { ToolgateError } from "../../core/errors.js";
import type { ListPatterns, ServerConfig, ServersConfig } from "../config/types.js";
import type { ListFilter } from "../../mcp/proxy/aggregate-catalog.js";
import {
  createAggregateProxy,
  type AggregateProxy,
  type AggregateUpstream,
  type PublishedTool,
} from "../../mcp/proxy/aggregate.js";
import { openGuardStore } from "../../idempotency/open-guard.js";
import type { GuardStore } from "../../idempotency/guard-store.js";
import type { ToolSpec } from "../../core/tool.js";
import type { StatePlacement } from "../../state/placement.js";
import { openGateway, type GatewaySettings } from "./gateway-settings.js";
import type { Store } from "../../idempotency/store.js";
import type { UpstreamTarget } from "../../mcp/proxy/upstream.js";
import type { RateStore } from "../../idempotency/guard-store.js";
import type { LabelledWindow, RateLimits } from "../../runtime/rate-limit.js";

function target(server: ServerConfig): UpstreamTarget {
  const t = server.transport;
  if (t.kind === "http") return { url: t.url, ...(Object.keys(t.headers).length > 0 ? { headers: t.headers } : {}) };
  // Only what the entry names: the SDK adds its short safe list (HOME, PATH, USER, …), nothing else of ours.
  return { command: t.command, args: t.args, env: t.env, ...(t.cwd !== undefined ? { cwd: t.cwd } : {}) };
}

/**
 * The upstreams of a checked file. An entry asking for `"sandbox": true` is refused: starting
 * upstreams inside the envelope is not built yet, and starting one outside it when the file asks
 * for it would be worse than not starting it.
 */
export function aggregateUpstreams(config: ServersConfig): AggregateUpstream[] {
  const boxed = config.servers.filter((s) => s.sandbox).map((s) => s.name);
  if (boxed.length > 0)
    throw new ToolgateError(
      "invalid_config",
      `${config.file}: mcpServers.${boxed[0]}.toolgate.sandbox is true, but this toolgate cannot start upstreams inside the envelope yet, so nothing was started; remove "sandbox": true to start ${boxed.join(", ")} as the client would (with only the environment the entry names)`,
    );
  return config.servers.map((s) => ({
    name: s.name,
    namespace: s.namespace,
    target: target(s),
    ...(s.include !== undefined ? { include: s.include } : {}),
    exclude: s.exclude,
    ...(s.effect !== undefined ? { effect: s.effect } : {}),
    tools: s.tools,
    ...(s.timeout_ms !== undefined ? { timeout_ms: s.timeout_ms } : {}),
    ...(s.task_timeout_ms !== undefined ? { task_timeout_ms: s.task_timeout_ms } : {}),
    ...(s.budget_tokens !== undefined ? { budget_tokens: s.budget_tokens } : {}),
    ...(s.concurrency !== undefined ? { concurrency: s.concurrency } : {}),
    ...(s.prompts ? { prompts: listFilter(s.name, "prompts", s.prompts) } : {}),
    ...(s.resources ? { resources: listFilter(s.name, "resources", s.resources) } : {}),
  }));
}

/** A server's include_/exclude_ lists of one kind, with the keys they were written under for messages. */
function listFilter(server: string, kind: "prompts" | "resources", patterns: ListPatterns): ListFilter {
  const at = `mcpServers.${server}.toolgate`;
  return {
    ...(patterns.include !== undefined ? { include: patterns.include } : {}),
    exclude: patterns.exclude,
    said: { include: `${at}.include_${kind}`, exclude: `${at}.exclude_${kind}` },
  };
}

/** The rate windows of every published tool, or null when the file sets none. */
export function configRateLimits(
  config: ServersConfig,
  published: readonly PublishedTool[],
  store: RateStore,
): RateLimits | null {
  const byName = new Map(config.servers.map((s) => [s.name, s]));
  const windows = new Map<
    string,
    { fixed: LabelledWindow[]; grant: ServerConfig["rate_limits"]["grant"]; server: string }
  >();
  for (const p of published) {
    const s = byName.get(p.server)!;
    const fixed: LabelledWindow[] = [];
    const own = s.tools[p.tool]?.rate_limit ?? s.rate_limits.tool;
    const id = JSON.stringify([p.server, p.tool]);
    if (own) fixed.push({ key: `tool:${id}`, limit: own.calls, window_ms: own.window_ms, label: `calls of ${p.name}` });
    if (s.rate_limits.server)
      fixed.push({
        key: `server:${JSON.stringify(p.server)}`,
        limit: s.rate_limits.server.calls,
        window_ms: s.rate_limits.server.window_ms,
        label: `calls to ${p.server}'s tools`,
      });
    windows.set(p.name, { fixed, grant: s.rate_limits.grant, server: p.server });
  }
  const perHolder = config.servers.some((s) => s.rate_limits.grant !== undefined);
  if (!perHolder && [...windows.values()].every((w) => w.fixed.length === 0)) return null;
  return {
    store,
    perHolder,
    windows(tool, holder) {
      const w = windows.get(tool);
      if (!w) return [];
      if (!w.grant) return w.fixed;
      return [
        ...w.fixed,
        {
          key: `grant:${holder ?? "(no capability)"}:${JSON.stringify(w.server)}`,
          limit: w.grant.calls,
          window_ms: w.grant.window_ms,
          label: `your calls to ${w.server}'s tools`,
        },
      ];
    },
  };
}

export interface ConfigAggregate {
  proxy: AggregateProxy;
  /** The gateway's store (which the gateway closes), for what runs beside it: the task runner. */
  store: Store;
  /** Closes the proxy (gateway, then upstreams), then the guard store. */
  close(): Promise<void>;
}

/**
 * Starts every server of a checked file behind one gateway built from the command's settings,
 * with `local` tools beside them (`serve --config`: the coding catalog); pins and rate windows
 * live in the guard store at the state's store URL.
 */
export async function startConfigAggregate(
  config: ServersConfig,
  settings: GatewaySettings,
  state: StatePlacement,
  /** `timeoutMs`, `taskTimeoutMs`: the bounds of a server whose toolgate block sets none (the proxy's flags). */
  options: { local?: readonly ToolSpec[]; timeoutMs?: number; taskTimeoutMs?: number; openSchemas?: boolean } = {},
): Promise<ConfigAggregate> {
  const upstreams = aggregateUpstreams(config).map((u) => ({
    ...u,
    ...(u.timeout_ms === undefined && options.timeoutMs !== undefined ? { timeout_ms: options.timeoutMs } : {}),
    ...(u.task_timeout_ms === undefined && options.taskTimeoutMs !== undefined
      ? { task_timeout_ms: options.taskTimeoutMs }
      : {}),
  }));
  const guard: GuardStore = await openGuardStore(state.store, { workspace: state.workspace });
  let store: Store | undefined;
  try {
    const proxy = await createAggregateProxy({
      upstreams,
      separator: config.separator,
      guard,
      openSchemas: options.openSchemas === true,
      gateway: async (tools, published) => {
        const limits = configRateLimits(config, published, guard.rates);
        const opened = await openGateway(
          [...(options.local ?? []), ...tools],
          settings,
          state,
          limits ? { rate_limits: limits } : {},
        );
        store = opened.store;
        return opened.gateway;
      },
    });
    return {
      proxy,
      store: store!,
      async close() {
        try {
          await proxy.close();
        } finally {
          await guard.close();
        }
      },
    };
  } catch (err) {
    await guard.close();
    throw err;
  }
}
