/**
 * `toolgate export`: a catalog in another ecosystem's tool format.
 *   toolgate export [FILE... | --mcp -- CMD ARGS... | --catalog MODULE] --format mcp|openai|anthropic|vercel-ai|gbnf|json-schema
 * [--strict] [--max-repeat N]
 * With no source, the built-in coding catalog. The export goes to stdout; what does not carry
 * over goes to stderr: with `--format openai --strict`, each tool that cannot be strict and
 * why (those tools are emitted with strict: false, and the exit code is 1); with `gbnf`, what
 * the grammar cannot express. Exit 2 for bad input.
 */
import { Option, type Command } from "commander";
import { exportCatalog } from "../../export/catalog.js";
import { EXPORT_FORMATS, type ExportFormat } from "../../export/formats.js";
import { loadCatalogs } from "../catalog-sources.js";
import { CliError, EXIT, printJson } from "../io.js";
import { numberOption } from "./breakeven.js";

interface Options {
  format: ExportFormat;
  strict?: boolean;
  maxRepeat?: string;
  mcp?: boolean;
  catalog?: string;
}

export function register(program: Command): void {
  program
    .command("export")
    .description(
      "a catalog in MCP, OpenAI, Anthropic or Vercel AI SDK tool format, as a llama.cpp GBNF grammar of its calls, or as JSON Schema documents (each with its $schema)",
    )
    .argument(
      "[files...]",
      "catalog files (descriptor, array, tools/list result, catalog file; - = stdin), or with --mcp the server command after --",
    )
    .addOption(
      new Option("--format <format>", "target format").choices(EXPORT_FORMATS as string[]).makeOptionMandatory(),
    )
    .option(
      "--strict",
      "with --format openai: check each tool against OpenAI strict mode and report those that cannot be strict",
    )
    .option("--max-repeat <n>", "with --format gbnf: largest length/item bound written as repetition (default 64)")
    .option("--mcp", "list the tools of the MCP server started by the command after --")
    .option("--catalog <module>", "a module exporting defineTool results")
    .action(async (files: string[], opts: Options) => {
      if (opts.strict && opts.format !== "openai")
        throw new CliError(`--strict applies to --format openai only; received --format ${opts.format}`);
      const catalogs = await loadCatalogs({
        files: opts.mcp ? [] : files,
        ...(opts.mcp ? { mcp: files } : {}),
        ...(opts.catalog ? { catalog: opts.catalog } : {}),
      });
      const tools = catalogs.flatMap((c) => c.tools);
      const names = new Set<string>();
      for (const t of tools) {
        if (names.has(t.name))
          throw new CliError(
            `two tools are named ${t.name}; an exported catalog needs unique names (export the files one at a time)`,
          );
        names.add(t.name);
      }
      if (opts.maxRepeat !== undefined && opts.format !== "gbnf")
        throw new CliError(`--max-repeat applies to --format gbnf only; received --format ${opts.format}`);
      const maxRepeat = numberOption("--max-repeat", opts.maxRepeat);
      const r = exportCatalog(tools, opts.format, {
        strict: opts.strict === true,
        ...(maxRepeat !== undefined ? { max_repeat: maxRepeat } : {}),
      });
      if (typeof r.output === "string") process.stdout.write(r.output);
      else printJson(r.output);
      if (r.notes.length > 0) process.stderr.write(r.notes.join("\n") + "\n");
      process.exitCode = r.failed ? EXIT.findings : EXIT.ok;
    });
}
