/**
 * Where the economics commands (`cost`, `export`) get a catalog from: catalog files in any
 * form `toolgate lint` reads, a live MCP server's `tools/list` (`--mcp -- CMD ARGS...`), a
 * module of `defineTool` results (`--catalog MODULE`), or, with none of these, toolgate's own
 * coding catalog. Tools defined in toolgate become what `toolgate serve` lists (toMcpTool),
 * so an export matches what a client would see.
 */
import { mkdtempSync, realpathSync, rmSync } from "node:fs";
import { join } from "node:path";
import { tmpdir } from "node:os";
import { parseJson, readInput } from "./io.js";
import { systemWorkspace } from "../tools/workspace-places.js";
import { toolsOf } from "../schema/lint/report.js";
import { ToolgateError } from "../core/errors.js";
import type { ToolSpec } from "../core/tool.js";
import { toToolDescriptor, type ToolDescriptor } from "../schema/descriptor.js";

export interface CatalogSourceOptions {
  files?: readonly string[];
  /** Command and arguments of an MCP server to start over stdio. */
  mcp?: readonly string[];
  /** A module exporting defineTool results. */
  catalog?: string;
  /** An mcpServers file: its servers' merged catalog, before and after include/exclude. */
  config?: string;
  /** Workspace for the built-in coding catalog (default: the current directory). */
  workspace?: string;
}

export interface LoadedCatalog {
  /** The file name, `mcp:CMD`, `module:PATH` or `built-in coding catalog`. */
  source: string;
  tools: ToolDescriptor[];
}

function fromSpecs(specs: readonly ToolSpec[], toMcpTool: (s: ToolSpec) => unknown, source: string): LoadedCatalog {
  return { source, tools: specs.map((s, i) => toToolDescriptor(toMcpTool(s), `${source} tools[${i}]`, i)) };
}

function fromValue(value: unknown, source: string): LoadedCatalog {
  return { source, tools: toolsOf(value, source).map((t, i) => toToolDescriptor(t, `${source} tools[${i}]`, i)) };
}

/**
 * `build` (the coding tools, when only their definitions and schemas are wanted: cost, export, a
 * settled result's check, which do not depend on the workspace) over `dir`, or over an empty folder
 * of its own, removed as soon as they are built, when `dir` cannot be a workspace (the file system,
 * a system folder, a home folder: a command run from `/` or `~`, where an MCP client starts its
 * servers; the temporary folder itself is not one either). Removed at once, not at exit: a process
 * ended by a signal, or a worker thread, never reaches its exit handlers, and each run would leave one.
 */
export function overDefinitionsWorkspace<T>(dir: string, build: (workspace: string) => T): T {
  let real: string;
  try {
    real = realpathSync(dir);
  } catch {
    return build(dir); // createCodingCatalog names it
  }
  if (systemWorkspace(real) === undefined) return build(dir);
  const empty = mkdtempSync(join(tmpdir(), "toolgate-definitions-"));
  try {
    return build(empty);
  } finally {
    rmSync(empty, { recursive: true, force: true });
  }
}

/** Loads the catalogs the options name; exactly one kind of source may be given. */
export async function loadCatalogs(options: CatalogSourceOptions): Promise<LoadedCatalog[]> {
  const files = options.files ?? [];
  const kinds = [files.length > 0 && !options.mcp, !!options.mcp, !!options.catalog, !!options.config].filter(
    Boolean,
  ).length;
  if (kinds > 1)
    throw new ToolgateError(
      "invalid_input",
      `give one catalog source: FILE..., --mcp -- CMD ARGS...${options.config ? ", --catalog MODULE or --config FILE" : " or --catalog MODULE"}`,
    );
  if (options.config) {
    const { configCatalog } = await import("./config/catalog.js");
    const { all, published } = await configCatalog(options.config);
    return [
      fromValue(all, `config:${options.config} (every tool)`),
      fromValue(published, `config:${options.config} (as published)`),
    ];
  }
  if (options.mcp) {
    const [command, ...args] = options.mcp;
    if (!command)
      throw new ToolgateError(
        "invalid_input",
        "--mcp needs the server command after --, e.g. --mcp -- npx @modelcontextprotocol/server-memory",
      );
    const { listMcpTools } = await import("../mcp/proxy/list-tools.js");
    return [fromValue(await listMcpTools({ command, args }), `mcp:${options.mcp.join(" ")}`)];
  }
  const { toMcpTool } = await import("../mcp/server/listing.js");
  if (options.catalog) {
    const { loadCatalogModule } = await import("./host/catalog-module.js");
    return [fromSpecs(await loadCatalogModule(options.catalog), toMcpTool, `module:${options.catalog}`)];
  }
  if (files.length > 0)
    return files.map((f) => fromValue(parseJson(readInput(f), f === "-" ? "standard input" : f), f));
  const { createCodingCatalog } = await import("../tools/catalog.js");
  return [
    fromSpecs(
      overDefinitionsWorkspace(options.workspace ?? process.cwd(), (workspace) => createCodingCatalog({ workspace })),
      toMcpTool,
      "built-in coding catalog",
    ),
  ];
}
