/**
 * `toolgate cost`: the token cost of a catalog (docs/economics.md,
 * equation 2, T = N·K·S).
 *   toolgate cost [FILE... | --mcp -- CMD ARGS... | --catalog MODULE] [--turns N] [--tokenizer o200k|cl100k] [--json]
 *   toolgate cost --shape 80x350 --shape 4x250 [--turns 40]     (compare two catalog shapes)
 * With no source, the built-in coding catalog. Each definition is counted as the compact JSON
 * of {name, description, inputSchema}. Exit 0; 2 for bad input.
 */
import { Option, type Command } from "commander";
import { catalogCost, compareCatalogShapes, DEFAULT_TURNS, type CatalogShape } from "../../economics/cost.js";
import { renderComparison, renderCost } from "../economics-text.js";
import { loadCatalogs } from "../catalog-sources.js";
import type { TokenizerName } from "../../observation/tokens.js";
import { CliError, printJson } from "../io.js";

interface Options {
  turns: string;
  tokenizer: TokenizerName;
  json?: boolean;
  mcp?: boolean;
  catalog?: string;
  config?: string;
  shape?: string[];
}

/** Catalogs at least this large show a progress line on a terminal. */
const PROGRESS_FROM = 50;

function parseShape(text: string): CatalogShape {
  const m = /^(\d+)\s*[x×*]\s*(\d+(?:\.\d+)?)$/.exec(text.trim());
  if (!m)
    throw new CliError(`--shape must be K×S (tools × tokens each), e.g. 80x350; received ${JSON.stringify(text)}`);
  return { k: Number(m[1]), s: Number(m[2]) };
}

function progress(source: string): ((done: number, total: number) => void) | undefined {
  if (!process.stderr.isTTY) return undefined;
  return (done, total) => {
    if (total < PROGRESS_FROM) return;
    process.stderr.write(`\rcounting ${source}: ${done}/${total} tools`);
    if (done === total) process.stderr.write("\r\x1b[K");
  };
}

export function register(program: Command): void {
  program
    .command("cost")
    .description(
      "token cost of a catalog's definitions: per tool, K, mean S and N·K·S over a trajectory (docs/economics.md, equation 2)",
    )
    .argument(
      "[files...]",
      "catalog files (descriptor, array, tools/list result, catalog file; - = stdin), or with --mcp the server command after --",
    )
    .option("--mcp", "list the tools of the MCP server started by the command after --")
    .option("--catalog <module>", "a module exporting defineTool results")
    .option(
      "--config <file>",
      "an mcpServers file: the merged catalog of its servers, before and after include/exclude",
    )
    .option("--turns <N>", "turns in the trajectory (N)", String(DEFAULT_TURNS))
    .addOption(new Option("--tokenizer <name>", "tokenizer").choices(["o200k", "cl100k"]).default("o200k"))
    .option(
      "--shape <KxS>",
      "compare catalog shapes instead (K tools × S tokens); give it twice",
      (v: string, prev: string[] = []) => [...prev, v],
    )
    .option("--json", "print the result as JSON")
    .action(async (files: string[], opts: Options) => {
      const turns = Number(opts.turns);
      if (!Number.isInteger(turns) || turns < 1)
        throw new CliError(`--turns must be an integer ≥ 1; received ${JSON.stringify(opts.turns)}`);
      if (opts.shape) {
        // Each shape is read first, so a malformed one is named rather than miscounted.
        const shapes = opts.shape.map(parseShape);
        if (shapes.length !== 2 || files.length > 0 || opts.mcp || opts.catalog)
          throw new CliError("--shape compares exactly two shapes: --shape 80x350 --shape 4x250, and takes no catalog");
        const cmp = compareCatalogShapes(shapes[0]!, shapes[1]!, turns);
        if (opts.json) printJson(cmp);
        else process.stdout.write(renderComparison(cmp));
        return;
      }
      const catalogs = await loadCatalogs({
        files: opts.mcp ? [] : files,
        ...(opts.mcp ? { mcp: files } : {}),
        ...(opts.catalog ? { catalog: opts.catalog } : {}),
        ...(opts.config ? { config: opts.config } : {}),
      });
      const results = catalogs.map((c) => {
        const onProgress = progress(c.source);
        return {
          source: c.source,
          ...catalogCost(c.tools, { turns, tokenizer: opts.tokenizer, ...(onProgress ? { onProgress } : {}) }),
        };
      });
      if (opts.json) printJson({ catalogs: results });
      else process.stdout.write(results.map((r) => renderCost(r, r.source)).join("\n"));
    });
}
