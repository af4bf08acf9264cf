/**
 * `toolgate serve`: the coding tools (or a `--catalog` module's tools) behind the gateway, over
 * MCP stdio or Streamable HTTP. Nothing but protocol goes to stdout; logs go to stderr.
 */
import { realpathSync, statSync } from "node:fs";
import { resolve } from "node:path";
import type { Command } from "commander";
import { openGateway, prepareState } from "../host/gateway-settings.js";
import { loadCatalogModule } from "../host/catalog-module.js";
import { runGatewayServer } from "../host/run.js";
import { startConfigAggregate } from "../host/config-proxy.js";
import { loadServersConfig } from "../config/load.js";
import { createTaskRunner } from "../../runtime/tasks.js";
import { createCodingCatalog, type CodingCatalogOptions } from "../../tools/catalog.js";
import { HIDDEN_DEFAULT, PROTECTED_DEFAULT } from "../../tools/workspace.js";
import { SYSTEM_WORKSPACE_FIX, systemWorkspace } from "../../tools/workspace-places.js";
import type { StatePlacement } from "../../state/placement.js";
import { httpFlagOptions } from "../host/http-flags.js";
import { CliError } from "../io.js";
import { stateWhere } from "../store.js";
import { parseMsFlag } from "../host/ms-flag.js";
import { gatewayFlagOptions, parseGatewayFlags, type GatewayFlags } from "../host/flags.js";
import { egressFlagOptions, parseEgressFlags, type EgressFlags } from "../host/egress-flags.js";

interface ServeFlags extends GatewayFlags, EgressFlags {
  workspace?: string;
  catalog?: string;
  graceMs?: string;
  gitWritable?: boolean;
  config?: string;
}

/** `path` as one shell word, for a command a message suggests. */
const shellWord = (path: string) => (/^[\w@%+=:,./-]+$/.test(path) ? path : `'${path.replaceAll("'", "'\\''")}'`);

function workspaceDir(dir: string | undefined): string {
  const workspace = resolve(dir ?? process.cwd());
  let isDir: boolean | undefined;
  let code: string | undefined;
  try {
    isDir = statSync(workspace).isDirectory();
  } catch (err) {
    code = (err as NodeJS.ErrnoException).code; // reported below
  }
  if (isDir !== true) {
    const why =
      isDir === false
        ? "is not a directory"
        : code === "ENOTDIR"
          ? "does not exist: a folder on its path is a file"
          : code === "EACCES"
            ? "cannot be reached by this user (a folder on its path denies it)"
            : "does not exist";
    const create = code === "ENOENT" ? ` (or create it first: mkdir -p ${shellWord(workspace)})` : "";
    throw new CliError(
      `--workspace ${dir ?? workspace} ${why}; pass the project root, e.g. --workspace /path/to/project${create}`,
    );
  }
  return workspace;
}

/** The coding tools' workspace, refused before any state is made when it is the file system or a system folder. */
function codingWorkspace(workspace: string, given: boolean): void {
  let real = workspace;
  try {
    real = realpathSync(workspace);
  } catch {
    // workspaceDir has seen it
  }
  const system = systemWorkspace(real);
  if (system !== undefined)
    throw new CliError(
      `the workspace ${real} ${given ? "(--workspace)" : "(the folder toolgate serve was started in; no --workspace)"} ${system}: ${SYSTEM_WORKSPACE_FIX}`,
    );
}

/**
 * The coding catalog's options: state folders inside the workspace are hidden from the shell
 * and closed to the file tools from the first call.
 */
export function codingCatalogOptions(
  workspace: string,
  state: StatePlacement,
  gitWritable = false,
): CodingCatalogOptions {
  // --git-writable: the repository's .git is no longer read-only as a whole; the entries under it that run on the host
  // stay so.
  const git = gitWritable ? { protectedPaths: PROTECTED_DEFAULT.filter((p) => p !== ".git") } : {};
  if (state.hidden.length === 0) return { workspace, ...git };
  // The catalog's default hidden places stay hidden too.
  return { workspace, hiddenPaths: [...HIDDEN_DEFAULT, ...state.hidden], ...git };
}

export function register(program: Command): void {
  const serve = program
    .command("serve")
    .description(
      "serve the four coding tools (or a catalog module) through the gateway over MCP stdio, or Streamable HTTP with --http",
    )
    .option("--workspace <dir>", "workspace root the coding tools are confined to (default: the current directory)")
    .option(
      "--catalog <module>",
      "serve the tools a JS/TS module exports (defineTool results) instead of the coding tools",
    )
    .option(
      "--config <file>",
      "also serve every server of an mcpServers file (Claude Desktop, Claude Code, Cursor or VS Code format) beside the coding tools, as toolgate proxy --config does",
    )
    .option(
      "--git-writable",
      "let bash_execute write the repository's .git (add, commit, checkout); its hooks, config and the like stay read-only (default: all of .git is read-only in the sandbox)",
    );
  gatewayFlagOptions(serve, "workspace").option(
    "--grace-ms <ms>",
    "on SIGINT/SIGTERM, how long in-flight calls may finish before they are aborted (default 10000)",
  );
  egressFlagOptions(httpFlagOptions(serve)).action(async (flags: ServeFlags) => {
    const workspace = workspaceDir(flags.workspace);
    if (flags.catalog === undefined) codingWorkspace(workspace, flags.workspace !== undefined);
    if (flags.catalog !== undefined && flags.gitWritable === true)
      throw new CliError(
        "--git-writable configures the built-in coding tools and means nothing with --catalog (a catalog module sets its own protectedPaths); drop one of the two",
      );
    const { settings, run, tasks: taskLimits } = parseGatewayFlags(flags, workspace);
    const egress = parseEgressFlags(flags, run.http ? [run.http.port] : []);
    if (flags.catalog !== undefined && egress !== null)
      throw new CliError(
        "--egress-allow, --egress-deny and --egress-config configure the built-in bash_execute and mean nothing with --catalog; drop one of the two",
      );
    const graceMs =
      flags.graceMs !== undefined ? parseMsFlag("--grace-ms", flags.graceMs, { min: 0, example: 10_000 }) : undefined;
    // Before the tools exist: state folders inside the workspace are made now, so they are hidden from the first call.
    const state = prepareState(settings);
    for (const note of state.notes) process.stderr.write(`toolgate serve: ${note}\n`);
    const tools = flags.catalog
      ? await loadCatalogModule(flags.catalog)
      : createCodingCatalog({
          ...codingCatalogOptions(workspace, state, flags.gitWritable === true),
          ...(egress ? { sandbox: { egress } } : {}),
        });
    // With --config, the upstreams' tools are served beside these, by one gateway.
    const aggregate = flags.config
      ? await startConfigAggregate(loadServersConfig(flags.config), settings, state, { local: tools })
      : null;
    const opened = aggregate ? null : await openGateway(tools, settings, state);
    const gateway = aggregate ? aggregate.proxy.gateway : opened!.gateway;
    try {
      await runGatewayServer(gateway, {
        ...run,
        // Long calls and approval waits may run as MCP tasks, kept in the same store as the calls.
        tasks: createTaskRunner(gateway, { store: (opened ?? aggregate!).store, ...taskLimits }),
        // The upstreams' resources, prompts and completions, beside their tools.
        ...(aggregate ? { passThrough: aggregate.proxy.passThrough } : {}),
        // The upstreams' log messages reach their callers, and a held tool's clients hear their list changed.
        ...(aggregate ? { toolsChanged: aggregate.proxy.toolsChanged, logging: true } : {}),
        ...(graceMs !== undefined ? { graceMs } : {}),
        onListening: (where) =>
          process.stderr.write(
            `toolgate serve: ${gateway.tools.size} tool${gateway.tools.size === 1 ? "" : "s"} (${[...gateway.tools.keys()].join(", ")}) on ${where}; workspace ${workspace}; state in ${stateWhere(state)}\n`,
          ),
      });
    } finally {
      await aggregate?.close();
    }
  });
}
