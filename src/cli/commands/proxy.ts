/**
 * `toolgate proxy [flags] -- CMD ARGS...` (or `--upstream-url URL`): any MCP server behind the
 * gateway. The upstream's catalog is linted at start (findings and a summary on stderr).
 */
import type { Command } from "commander";
import { gatewayFromSettings, keysConfigured, prepareState, type GatewaySettings } from "../host/gateway-settings.js";
import { cwdCountsAsWorkspace } from "../../state/placement.js";
import { parseBudget, parseListenAddress, type GatewayFlags } from "../host/flags.js";
import { createProxy } from "../../mcp/proxy/proxy.js";
import { runGatewayServer } from "../host/run.js";
import { httpFlagOptions, parseHttpFlags, type HttpFlags } from "../host/http-flags.js";
import { targetFromArgv } from "../../mcp/proxy/list-tools.js";
import type { UpstreamTarget } from "../../mcp/proxy/upstream.js";
import { CliError } from "../io.js";
import { parseSessionIdle } from "../host/ms-flag.js";
import { stateDirHelp, stateWhere } from "../store.js";

interface ProxyFlags extends GatewayFlags, HttpFlags {
  upstreamUrl?: string;
  stateDir?: string;
  sessionIdleMs?: string;
  openSchemas?: boolean;
}

function upstreamTarget(argv: string[], url: string | undefined): UpstreamTarget {
  if (url !== undefined && argv.length > 0) throw new CliError("give the upstream either as -- CMD ARGS... or as --upstream-url URL, not both");
  if (url !== undefined) {
    try {
      new URL(url);
    } catch {
      throw new CliError(`--upstream-url must be an absolute URL; received ${JSON.stringify(url)}; example http://127.0.0.1:3001/mcp`);
    }
    return { url };
  }
  if (argv.length === 0) throw new CliError("name the upstream MCP server: toolgate proxy -- npx -y @modelcontextprotocol/server-memory (or --upstream-url URL)");
  // The upstream runs as the user's own command would: with this process's environment (its API keys, PATH, …).
  return targetFromArgv(argv);
}

export function register(program: Command): void {
  const proxy = program
    .command("proxy")
    .description("serve another MCP server's tools through the gateway: validation, capability, idempotency, approval and budgets before the upstream sees a call")
    .argument("[upstream...]", "the upstream server command after --, e.g. -- npx -y @modelcontextprotocol/server-memory")
    .option("--upstream-url <url>", "an upstream reached over Streamable HTTP instead of a command")
    .option("--state-dir <dir>", stateDirHelp("current folder"))
    .option("--store <url>", "idempotency/approval store: sqlite: (default, state.db in the state folder), sqlite:PATH, memory:, redis://…, postgres://…")
    .option("--keys <file>", "capability key file, outside the current folder (e.g. ~/.config/toolgate/keys.json); calls then need a capability (default: TOOLGATE_KEYS when set, else none)")
    .option("--capability <token>", "capability for calls that carry none in _meta or an Authorization header")
    .option("--audit <file>", "audit trail JSONL (default audit.jsonl in the state folder)")
    .option("--budget-tokens <n>", "default observation budget in o200k tokens (default 2000)")
    .option("--http <host:port>", "serve MCP Streamable HTTP on this address (loopback by default) instead of stdio")
    .option("--open-schemas", "validate against the upstream's schemas exactly as declared (default: objects left open, without additionalProperties, are closed so unknown fields are refused before the upstream sees them)")
    .option("--session-idle-ms <ms>", "with --http: close a session after this long without a request (default 1800000, 30 minutes); its client gets 404 and starts a new one");
  httpFlagOptions(proxy)
    .action(async (argv: string[], flags: ProxyFlags) => {
      const upstream = upstreamTarget(argv, flags.upstreamUrl);
      const budgetTokens = parseBudget(flags.budgetTokens);
      const http = flags.http !== undefined ? parseListenAddress(flags.http) : undefined;
      const sessionIdleMs = parseSessionIdle(flags.sessionIdleMs, http !== undefined);
      const served = parseHttpFlags(flags, http, keysConfigured(flags));
      const settings: GatewaySettings = {
        ...(flags.stateDir !== undefined ? { stateDir: flags.stateDir } : {}),
        ...(flags.store !== undefined ? { store: flags.store } : {}),
        ...(flags.keys !== undefined ? { keys: flags.keys } : {}),
        ...(flags.audit !== undefined ? { audit: flags.audit } : {}),
        ...(budgetTokens !== undefined ? { budgetTokens } : {}),
        approveVia: served.approveVia,
      };
      // The proxy's workspace is the folder it runs in (state is kept outside it), prepared before the upstream starts.
      const state = prepareState(settings, { guard: cwdCountsAsWorkspace(process.cwd()) });
      for (const note of state.notes) process.stderr.write(`toolgate proxy: ${note}\n`);
      const proxy = await createProxy({
        upstream,
        openSchemas: flags.openSchemas === true,
        gateway: (tools) => gatewayFromSettings(tools, settings, state),
      });
      try {
        await runGatewayServer(proxy.gateway, {
          name: "toolgate-proxy",
          ...(http ? { http } : {}),
          ...served.http,
          approveVia: served.approveVia,
          ...(sessionIdleMs !== undefined ? { sessionIdleMs } : {}),
          ...(flags.capability !== undefined ? { capability: flags.capability } : {}),
          capabilitiesIgnored: !keysConfigured(flags),
          onListening: (where) => process.stderr.write(`toolgate proxy: serving on ${where}; state in ${stateWhere(state)}\n`),
        });
      } finally {
        await proxy.close();
      }
    });
}
