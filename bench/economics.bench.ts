/**
 * The economics over the largest real catalog (GitHub's MCP server, 117 tools): token cost
 * through catalogCost vs serialising and encoding the same definitions with gpt-tokenizer by
 * hand (the cost of our bookkeeping), and single timings for TG009 overlap,
 * the OpenAI strict check, the GBNF export and recognising one call with the grammar.
 */
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { catalogCost } from "../src/economics/cost.js";
import { toToolDescriptors } from "../src/schema/descriptor.js";
import { gbnfAccepts, parseGbnf } from "../test/support/gbnf-check.js";
import { toGbnf } from "../src/export/gbnf/grammar.js";
import { checkOpenAIStrict } from "../src/export/openai-strict.js";
import { overlapFindings } from "../src/schema/lint/rules/overlap.js";
import { testdataDir } from "../test/support/require.js";
import type { Harness } from "./harness.js";

const require = createRequire(import.meta.url);

export default async function (h: Harness): Promise<void> {
  const raw = JSON.parse(readFileSync(join(testdataDir, "mcp-catalogs", "github-mcp-server.json"), "utf8")) as {
    tools: unknown[];
  };
  const tools = toToolDescriptors(raw.tools);
  const o200k = require("gpt-tokenizer/cjs/encoding/o200k_base") as { encode(t: string, o?: unknown): number[] };
  const asText = { disallowedSpecial: new Set<string>() };
  await h.compare({
    area: "economics",
    hot_path: "catalogCost, 117-tool GitHub catalog",
    toolgate: () => catalogCost(tools),
    // The same work by hand: serialise each definition, encode it, sum.
    peer: {
      name: "JSON.stringify + gpt-tokenizer ×117",
      fn: () =>
        tools.reduce(
          (n, t) =>
            n +
            o200k.encode(
              JSON.stringify({ name: t.name, description: t.description, inputSchema: t.inputSchema }),
              asText,
            ).length,
          0,
        ),
    },
    goal: { op: "<=", value: 1.2, label: "≤ 1.2×" },
    batch: 2,
    rounds: 20,
  });
  await h.compare({
    area: "economics",
    hot_path: "TG009 overlap, 117 tools (6,786 pairs)",
    toolgate: () => overlapFindings(tools),
    batch: 2,
    rounds: 10,
  });
  await h.compare({
    area: "economics",
    hot_path: "OpenAI strict check, 117 tools",
    toolgate: () => tools.map(checkOpenAIStrict),
    batch: 5,
    rounds: 10,
  });
  await h.compare({
    area: "economics",
    hot_path: "GBNF export, 117 tools",
    toolgate: () => toGbnf(tools),
    batch: 5,
    rounds: 10,
  });
  const rules = parseGbnf(toGbnf(tools).grammar);
  const call = JSON.stringify({
    name: "get_file_contents",
    arguments: { owner: "github", path: "README.md", repo: "github-mcp-server" },
  }); // declared order
  if (!gbnfAccepts(rules, call)) throw new Error("the GitHub grammar refuses a valid get_file_contents call");
  // Properties come in the order the schema declares them (see src/export/gbnf/grammar.ts); another order is refused.
  if (gbnfAccepts(rules, JSON.stringify({ name: "get_file_contents", arguments: { repo: "r", owner: "o" } })))
    throw new Error("the grammar admitted properties out of declared order");
  await h.compare({
    area: "economics",
    hot_path: "GBNF recognise one call (test recogniser)",
    toolgate: () => gbnfAccepts(rules, call),
    batch: 5,
    rounds: 10,
  });
}
