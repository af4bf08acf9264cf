/**
 * `toolgate serve`: the coding tools (or a `--catalog` module's tools) behind the gateway, over
 * MCP stdio or Streamable HTTP. Nothing but protocol goes to stdout; logs go to stderr.
 */
import { statSync } from "node:fs";
import { resolve } from "node:path";
import type { Command } from "commander";
import { gatewayFromSettings, keysConfigured, prepareState, type GatewaySettings } from "../host/gateway-settings.js";
import { loadCatalogModule } from "../host/catalog-module.js";
import { runGatewayServer } from "../host/run.js";
import { createCodingCatalog, type CodingCatalogOptions } from "../../tools/catalog.js";
import { HIDDEN_DEFAULT } from "../../tools/workspace.js";
import type { StatePlacement } from "../../state/placement.js";
import { httpFlagOptions, parseHttpFlags, type HttpFlags } from "../host/http-flags.js";
import { CliError } from "../io.js";
import { stateDirHelp, stateWhere } from "../store.js";
import { parseMsFlag, parseSessionIdle } from "../host/ms-flag.js";
import { parseBudget, parseListenAddress, type GatewayFlags } from "../host/flags.js";

interface ServeFlags extends GatewayFlags, HttpFlags {
  workspace?: string;
  stateDir?: string;
  catalog?: string;
  graceMs?: string;
  sessionIdleMs?: string;
}

function workspaceDir(dir: string | undefined): string {
  const workspace = resolve(dir ?? process.cwd());
  let isDir = false;
  try {
    isDir = statSync(workspace).isDirectory();
  } catch {
    // reported below
  }
  if (!isDir) throw new CliError(`--workspace ${dir ?? workspace} is not a directory; pass the project root, e.g. --workspace /path/to/project`);
  return workspace;
}

/**
 * The coding catalog's options: state folders inside the workspace are hidden from the shell
 * and closed to the file tools from the first call.
 */
export function codingCatalogOptions(workspace: string, state: StatePlacement): CodingCatalogOptions {
  if (state.hidden.length === 0) return { workspace };
  // The catalog's default hidden places stay hidden too.
  return { workspace, hiddenPaths: [...HIDDEN_DEFAULT, ...state.hidden] };
}

export function register(program: Command): void {
  const serve = program
    .command("serve")
    .description("serve the four coding tools (or a catalog module) through the gateway over MCP stdio, or Streamable HTTP with --http")
    .option("--workspace <dir>", "workspace root the coding tools are confined to (default: the current directory)")
    .option("--catalog <module>", "serve the tools a JS/TS module exports (defineTool results) instead of the coding tools")
    .option("--state-dir <dir>", stateDirHelp("workspace"))
    .option("--store <url>", "idempotency/approval store: sqlite: (default, state.db in the state folder), sqlite:PATH, memory:, redis://…, postgres://…")
    .option("--keys <file>", "capability key file, outside the workspace (e.g. ~/.config/toolgate/keys.json); calls then need a capability (default: TOOLGATE_KEYS when set, else none)")
    .option("--capability <token>", "capability for calls that carry none in _meta or an Authorization header")
    .option("--audit <file>", "audit trail JSONL (default audit.jsonl in the state folder)")
    .option("--budget-tokens <n>", "default observation budget in o200k tokens (default 2000)")
    .option("--http <host:port>", "serve MCP Streamable HTTP on this address (loopback by default) instead of stdio")
    .option("--grace-ms <ms>", "on SIGINT/SIGTERM, how long in-flight calls may finish before they are aborted (default 10000)")
    .option("--session-idle-ms <ms>", "with --http: close a session after this long without a request (default 1800000, 30 minutes); its client gets 404 and starts a new one");
  httpFlagOptions(serve)
    .action(async (flags: ServeFlags) => {
      const workspace = workspaceDir(flags.workspace);
      const budgetTokens = parseBudget(flags.budgetTokens);
      const http = flags.http !== undefined ? parseListenAddress(flags.http) : undefined;
      const sessionIdleMs = parseSessionIdle(flags.sessionIdleMs, http !== undefined);
      const served = parseHttpFlags(flags, http, keysConfigured(flags));
      const graceMs = flags.graceMs !== undefined ? parseMsFlag("--grace-ms", flags.graceMs, { min: 0, example: 10_000 }) : undefined;
      const settings: GatewaySettings = {
        workspace,
        ...(flags.stateDir !== undefined ? { stateDir: flags.stateDir } : {}),
        ...(flags.store !== undefined ? { store: flags.store } : {}),
        ...(flags.keys !== undefined ? { keys: flags.keys } : {}),
        ...(flags.audit !== undefined ? { audit: flags.audit } : {}),
        ...(budgetTokens !== undefined ? { budgetTokens } : {}),
        approveVia: served.approveVia,
      };
      // Before the tools exist: state folders inside the workspace are made now, so they are hidden from the first call.
      const state = prepareState(settings);
      for (const note of state.notes) process.stderr.write(`toolgate serve: ${note}\n`);
      const tools = flags.catalog ? await loadCatalogModule(flags.catalog) : createCodingCatalog(codingCatalogOptions(workspace, state));
      const gateway = await gatewayFromSettings(tools, settings, state);
      await runGatewayServer(gateway, {
        ...(http ? { http } : {}),
        ...served.http,
        approveVia: served.approveVia,
        ...(graceMs !== undefined ? { graceMs } : {}),
        ...(sessionIdleMs !== undefined ? { sessionIdleMs } : {}),
        ...(flags.capability !== undefined ? { capability: flags.capability } : {}),
        capabilitiesIgnored: !keysConfigured(flags),
        onListening: (where) =>
          process.stderr.write(`toolgate serve: ${gateway.tools.size} tool${gateway.tools.size === 1 ? "" : "s"} (${[...gateway.tools.keys()].join(", ")}) on ${where}; workspace ${workspace}; state in ${stateWhere(state)}\n`),
      });
    });
}
