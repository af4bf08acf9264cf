/**
 * `toolgate proxy [flags] -- CMD ARGS...` (or `--upstream-url URL`): any MCP server behind the
 * gateway. The upstream's catalog is linted at start (findings and a summary on stderr).
 */
import type { Command } from "commander";
import { openGateway, prepareState } from "../host/gateway-settings.js";
import { createTaskRunner } from "../../runtime/tasks.js";
import type { Store } from "../../idempotency/store.js";
import { cwdCountsAsWorkspace } from "../../state/placement.js";
import { gatewayFlagOptions, parseGatewayFlags, type GatewayFlags } from "../host/flags.js";
import { createProxy } from "../../mcp/proxy/proxy.js";
import { closeOrExitOnSignal, runGatewayServer } from "../host/run.js";
import { httpFlagOptions } from "../host/http-flags.js";
import { targetFromArgv } from "../../mcp/proxy/list-tools.js";
import type { UpstreamTarget } from "../../mcp/proxy/upstream.js";
import { CliError } from "../io.js";
import { shownValue } from "../../observation/escape.js";
import { filterPatternProblem, type ListFilter } from "../../mcp/proxy/aggregate-catalog.js";
import { parseMsFlag } from "../host/ms-flag.js";
import { stateWhere } from "../store.js";
import { loadServersConfig } from "../config/load.js";
import { startConfigAggregate } from "../host/config-proxy.js";

interface ProxyFlags extends GatewayFlags {
  upstreamUrl?: string;
  config?: string;
  openSchemas?: boolean;
  timeoutMs?: string;
  toolTimeoutMs?: string[];
  taskTimeoutMs?: string;
  includePrompt?: string[];
  excludePrompt?: string[];
  includeResource?: string[];
  excludeResource?: string[];
}

const LIST_FLAGS = {
  prompt: { include: "includePrompt", exclude: "excludePrompt", example: "summarise" },
  resource: { include: "includeResource", exclude: "excludeResource", example: "file:///docs/*" },
} as const;

/** `--include-prompt`/`--exclude-prompt` or `--include-resource`/`--exclude-resource`, each value checked; undefined when none is given. */
function listFilter(flags: ProxyFlags, kind: "prompt" | "resource"): ListFilter | undefined {
  const names = LIST_FLAGS[kind];
  const read = (which: "include" | "exclude") => {
    const values = flags[names[which]];
    for (const value of values ?? []) {
      const problem = filterPatternProblem(kind, value);
      if (problem !== null)
        throw new CliError(
          `--${which}-${kind} must be a ${kind === "prompt" ? "prompt name" : "resource URI"} or a * pattern; received ${shownValue(value)} (${problem}); e.g. --${which}-${kind} ${names.example}`,
        );
    }
    return values;
  };
  const include = read("include");
  const exclude = read("exclude");
  if (include === undefined && exclude === undefined) return undefined;
  return {
    ...(include !== undefined ? { include } : {}),
    exclude: exclude ?? [],
    said: { include: `--include-${kind}`, exclude: `--exclude-${kind}` },
  };
}

/** Shorter than this, no upstream round trip completes; a limit this low is a typo. */
const MIN_PROXY_TIMEOUT_MS = 100;

/** `--tool-timeout-ms NAME=MS`, repeatable: each tool's own limit. */
function toolTimeouts(values: string[] | undefined): Record<string, number> {
  const out: Record<string, number> = {};
  for (const value of values ?? []) {
    const eq = value.lastIndexOf("=");
    if (eq <= 0)
      throw new CliError(
        `--tool-timeout-ms must be NAME=MS, e.g. --tool-timeout-ms read_text_file=300000; received ${JSON.stringify(value)}`,
      );
    out[value.slice(0, eq)] = parseMsFlag(`--tool-timeout-ms ${value.slice(0, eq)}=`, value.slice(eq + 1), {
      min: MIN_PROXY_TIMEOUT_MS,
      example: 300_000,
    });
  }
  return out;
}

/** The longest timer Node keeps, ms (about 24.8 days): a longer one fires at once. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/** `--task-timeout-ms MS`: the limit of a call the upstream runs as a task; undefined when absent (an hour). */
function taskTimeout(text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  const ms = parseMsFlag("--task-timeout-ms", text, { min: MIN_PROXY_TIMEOUT_MS, example: 7_200_000 });
  if (ms > MAX_TIMER_MS)
    throw new CliError(
      `--task-timeout-ms must be at most ${MAX_TIMER_MS} (about 24 days, the longest timer Node keeps), e.g. --task-timeout-ms 7200000; received ${JSON.stringify(text)}`,
    );
  return ms;
}

/** What a call cut at its limit says to do: the flags that raise it (`task`: the limit of a call run as an upstream task). */
const timeoutHint = (tool: string, ms: number, task: boolean) =>
  task
    ? `That is the time limit toolgate proxy sets for ${tool} while the upstream runs it as a task (${ms} ms). If the work needs longer, tell the user: whoever runs toolgate proxy can raise it with --task-timeout-ms MS; or split the work into smaller calls.`
    : `That is the time limit toolgate proxy sets for ${tool} (${ms} ms). If the work needs longer, tell the user: whoever runs toolgate proxy can raise it with --timeout-ms MS (every tool of this server) or --tool-timeout-ms ${tool}=MS; or split the work into smaller calls.`;

function upstreamTarget(argv: string[], url: string | undefined): UpstreamTarget {
  if (url !== undefined && argv.length > 0)
    throw new CliError("give the upstream either as -- CMD ARGS... or as --upstream-url URL, not both");
  if (url !== undefined) {
    try {
      new URL(url);
    } catch {
      throw new CliError(
        `--upstream-url must be an absolute URL; received ${JSON.stringify(url)}; example http://127.0.0.1:3001/mcp`,
      );
    }
    return { url };
  }
  if (argv.length === 0)
    throw new CliError(
      "name the upstream MCP server: toolgate proxy -- npx -y @modelcontextprotocol/server-memory (or --upstream-url URL)",
    );
  // The upstream runs as the user's own command would: with this process's environment (its API keys, PATH, …).
  return targetFromArgv(argv);
}

const repeat = (value: string, previous: string[] = []) => [...previous, value];

export function register(program: Command): void {
  const proxy = program
    .command("proxy")
    .description(
      "serve another MCP server's tools through the gateway: validation, capability, idempotency, approval and budgets before the upstream sees a call",
    )
    .argument(
      "[upstream...]",
      "the upstream server command after --, e.g. -- npx -y @modelcontextprotocol/server-memory",
    )
    .option("--upstream-url <url>", "an upstream reached over Streamable HTTP instead of a command")
    .option(
      "--config <file>",
      "every server of an mcpServers file (Claude Desktop, Claude Code, Cursor or VS Code format) behind one endpoint, tools named SERVER__TOOL",
    );
  gatewayFlagOptions(proxy, "current folder")
    .option(
      "--open-schemas",
      "validate against the upstream's schemas exactly as declared (default: objects left open, without additionalProperties, are closed so unknown fields are refused before the upstream sees them)",
    )
    .option(
      "--timeout-ms <ms>",
      "time limit of every upstream call, ms (default 60000); a call past it is aborted, and a write is then in doubt",
    )
    .option("--tool-timeout-ms <name=ms>", "one tool's own time limit, e.g. read_text_file=300000 (repeatable)", repeat)
    .option(
      "--task-timeout-ms <ms>",
      "time limit of a call the upstream runs as a task, ms (default 3600000), in place of --timeout-ms, which still bounds each of its requests; with --config, of the servers whose toolgate block sets no task_timeout_ms",
    )
    .option(
      "--include-prompt <name>",
      "serve only the upstream's prompts of this name or * pattern (repeatable; default all)",
      repeat,
    )
    .option(
      "--exclude-prompt <name>",
      "never serve the upstream's prompts of this name or * pattern (repeatable)",
      repeat,
    )
    .option(
      "--include-resource <uri>",
      "serve only the upstream's resources and templates of this URI or * pattern, and read only such URIs (repeatable; default all)",
      repeat,
    )
    .option(
      "--exclude-resource <uri>",
      "never serve or read the upstream's resources and templates of this URI or * pattern (repeatable)",
      repeat,
    );
  httpFlagOptions(proxy).action(async (argv: string[], flags: ProxyFlags) => {
    if (flags.config !== undefined) return runConfigProxy(argv, flags);
    const upstream = upstreamTarget(argv, flags.upstreamUrl);
    const timeoutMs =
      flags.timeoutMs === undefined
        ? undefined
        : parseMsFlag("--timeout-ms", flags.timeoutMs, { min: MIN_PROXY_TIMEOUT_MS, example: 300_000 });
    const toolTimeoutMs = toolTimeouts(flags.toolTimeoutMs);
    const taskTimeoutMs = taskTimeout(flags.taskTimeoutMs);
    const prompts = listFilter(flags, "prompt");
    const resources = listFilter(flags, "resource");
    const { settings, run, tasks: taskLimits } = parseGatewayFlags(flags);
    // The proxy's workspace is the folder it runs in (state is kept outside it), prepared before the upstream starts.
    const state = prepareState(settings, { guard: cwdCountsAsWorkspace(process.cwd()) });
    for (const note of state.notes) process.stderr.write(`toolgate proxy: ${note}\n`);
    let store: Store | undefined;
    const proxy = await createProxy({
      upstream,
      openSchemas: flags.openSchemas === true,
      ...(timeoutMs !== undefined ? { timeoutMs } : {}),
      toolTimeoutMs,
      ...(taskTimeoutMs !== undefined ? { taskTimeoutMs } : {}),
      timeoutHint,
      ...(prompts ? { prompts } : {}),
      ...(resources ? { resources } : {}),
      gateway: async (tools) => {
        const opened = await openGateway(tools, settings, state);
        store = opened.store;
        return opened.gateway;
      },
    });
    try {
      await runGatewayServer(proxy.gateway, {
        name: "toolgate-proxy",
        ...run,
        passThrough: proxy.passThrough,
        toolsChanged: proxy.toolsChanged,
        logging: true,
        // A3 calls (their approval wait) and tools the upstream runs as tasks may run as MCP tasks, in toolgate's store.
        tasks: createTaskRunner(proxy.gateway, { store: store!, ...taskLimits }),
        onListening: (where) =>
          process.stderr.write(`toolgate proxy: serving on ${where}; state in ${stateWhere(state)}\n`),
      });
    } finally {
      await closeOrExitOnSignal(() => proxy.close());
    }
  });
}

/** `proxy --config FILE`: every server of the file behind one gateway, pins and rate limits in the store. */
async function runConfigProxy(argv: string[], flags: ProxyFlags): Promise<void> {
  if (argv.length > 0 || flags.upstreamUrl !== undefined)
    throw new CliError("--config names the upstreams: give no -- CMD ARGS... and no --upstream-url beside it");
  if (flags.toolTimeoutMs !== undefined)
    throw new CliError(
      'with --config, a tool\'s time limit is set in its server\'s toolgate block: "tools": {"NAME": {"timeout_ms": MS}}',
    );
  for (const kind of ["prompt", "resource"] as const)
    for (const which of ["include", "exclude"] as const)
      if (flags[LIST_FLAGS[kind][which]] !== undefined)
        throw new CliError(
          `with --config, each server's ${kind}s are chosen in its toolgate block: "toolgate": {"${which}_${kind}s": [...]}; drop --${which}-${kind}`,
        );
  // The default of the servers whose toolgate block sets no task_timeout_ms.
  const taskTimeoutMs = taskTimeout(flags.taskTimeoutMs);
  const config = loadServersConfig(flags.config!);
  const timeoutMs =
    flags.timeoutMs === undefined
      ? undefined
      : parseMsFlag("--timeout-ms", flags.timeoutMs, { min: MIN_PROXY_TIMEOUT_MS, example: 300_000 });
  const { settings, run, tasks: taskLimits } = parseGatewayFlags(flags);
  const state = prepareState(settings, { guard: cwdCountsAsWorkspace(process.cwd()) });
  for (const note of state.notes) process.stderr.write(`toolgate proxy: ${note}\n`);
  const started = await startConfigAggregate(config, settings, state, {
    ...(timeoutMs !== undefined ? { timeoutMs } : {}),
    ...(taskTimeoutMs !== undefined ? { taskTimeoutMs } : {}),
    openSchemas: flags.openSchemas === true,
  });
  try {
    await runGatewayServer(started.proxy.gateway, {
      name: "toolgate-proxy",
      ...run,
      passThrough: started.proxy.passThrough,
      toolsChanged: started.proxy.toolsChanged,
      logging: true,
      tasks: createTaskRunner(started.proxy.gateway, { store: started.store, ...taskLimits }),
      onListening: (where) =>
        process.stderr.write(`toolgate proxy: serving on ${where}; state in ${stateWhere(state)}\n`),
    });
  } finally {
    await closeOrExitOnSignal(() => started.close());
  }
}
