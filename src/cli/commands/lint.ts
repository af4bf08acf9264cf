/**
 * `toolgate lint FILE... [--format text|json|sarif]`: lints tool descriptors, `tools/list`
 * results and catalog files (`-` = stdin). Exit 0 without error-level findings, 1 with, 2 for
 * usage or input errors (an empty catalog is one). (`--mcp -- CMD`, linting a live server, is added by the MCP area:
 * it builds `LintSource`s from the server's tools and calls the same `lintSources`.)
 */
import { Option, type Command } from "commander";
import { formatReport, LINT_FORMATS, type LintFormat } from "../../schema/lint/format.js";
import { lintSources, toolsOf, type LintSource } from "../../schema/lint/report.js";
import { CliError, EXIT, parseJson, readInput } from "../io.js";

/** Reads and parses the files; a bad file stops with exit 2 and one clear line. */
export function readSources(files: readonly string[]): LintSource[] {
  if (files.length === 0) throw new CliError("lint needs at least one FILE (or - for standard input)");
  return files.map((file) => ({
    source: file,
    value: parseJson(readInput(file), file === "-" ? "standard input" : file),
  }));
}

/**
 * An empty catalog would otherwise print "0 tools, 0 clean": almost always the wrong file (or a
 * server that lists nothing), so it stops with exit 2. Checked here, not in `lintSources`, so
 * the proxy still serves an upstream that lists no tools.
 */
function refuseEmpty(sources: readonly LintSource[]): void {
  const empty = sources.find((s) => toolsOf(s.value, s.source).length === 0);
  if (empty)
    throw new CliError(
      `no tool descriptors found in ${empty.source}: expected a tool, an array of tools or {"tools": [...]}`,
    );
}

export function register(program: Command): void {
  program
    .command("lint")
    .description("lint tool schemas (descriptor, array, tools/list result or catalog file) against rules TG001–TG011")
    .argument("[files...]", "JSON files to lint; - reads standard input")
    .addOption(new Option("--format <format>", "output format").choices(LINT_FORMATS as string[]).default("text"))
    .option("--mcp", "lint a live MCP server's tools/list (every page): lint --mcp -- CMD ARGS... or lint --mcp URL")
    .option(
      "--config <file>",
      "lint the merged catalog of an mcpServers file's servers as toolgate proxy --config publishes it",
    )
    .option("--json", "same as --format json (every command has --json)")
    .action(async (files: string[], opts: { format: LintFormat; mcp?: boolean; config?: string; json?: boolean }) => {
      if (opts.config !== undefined && (files.length > 0 || opts.mcp))
        throw new CliError("--config names the catalog: give no FILE and no --mcp beside it");
      // The MCP client loads only for --mcp and --config: linting a file starts like a small CLI.
      const sources = opts.config
        ? [
            {
              source: `config:${opts.config}`,
              value: { tools: (await (await import("../config/catalog.js")).configCatalog(opts.config)).published },
            },
          ]
        : opts.mcp
          ? [await (await import("../../mcp/proxy/list-tools.js")).mcpLintSource(files)]
          : readSources(files);
      refuseEmpty(sources);
      const report = lintSources(sources);
      process.stdout.write(formatReport(report, opts.json ? "json" : opts.format));
      process.exitCode = report.summary.errors > 0 ? EXIT.findings : EXIT.ok;
    });
}
