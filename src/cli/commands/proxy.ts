/**
 * `toolgate proxy [flags] -- CMD ARGS...` (or `--upstream-url URL`): any MCP server behind the
 * gateway. The upstream's catalog is linted at start (findings and a summary on stderr).
 */
import type { Command } from "commander";
import { gatewayFromSettings, prepareState } from "../host/gateway-settings.js";
import { cwdCountsAsWorkspace } from "../../state/placement.js";
import { gatewayFlagOptions, parseGatewayFlags, type GatewayFlags } from "../host/flags.js";
import { createProxy } from "../../mcp/proxy/proxy.js";
import { runGatewayServer } from "../host/run.js";
import { httpFlagOptions } from "../host/http-flags.js";
import { targetFromArgv } from "../../mcp/proxy/list-tools.js";
import type { UpstreamTarget } from "../../mcp/proxy/upstream.js";
import { CliError } from "../io.js";
import { stateWhere } from "../store.js";

interface ProxyFlags extends GatewayFlags {
  upstreamUrl?: string;
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
    .option("--upstream-url <url>", "an upstream reached over Streamable HTTP instead of a command");
  gatewayFlagOptions(proxy, "current folder")
    .option("--open-schemas", "validate against the upstream's schemas exactly as declared (default: objects left open, without additionalProperties, are closed so unknown fields are refused before the upstream sees them)");
  httpFlagOptions(proxy)
    .action(async (argv: string[], flags: ProxyFlags) => {
      const upstream = upstreamTarget(argv, flags.upstreamUrl);
      const { settings, run } = parseGatewayFlags(flags);
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
          ...run,
          onListening: (where) => process.stderr.write(`toolgate proxy: serving on ${where}; state in ${stateWhere(state)}\n`),
        });
      } finally {
        await proxy.close();
      }
    });
}
