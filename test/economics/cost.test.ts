import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { catalogCost, compareCatalogShapes, definitionText } from "../../src/economics/cost.js";
import { toToolDescriptor } from "../../src/schema/descriptor.js";
import { toMcpTool } from "../../src/mcp/server/listing.js";
import { createCodingCatalog } from "../../src/tools/catalog.js";
import { countTokens } from "../../src/observation/tokens.js";
import { testdataAvailable } from "../support/require.js";
import { mcpCatalogs, seedListing5 } from "../support/catalogs.js";

describe("compareCatalogShapes (equation 2)", () => {
  it("reproduces the worked example: 80 × 350 against 4 × 250 over 40 turns is 1,120,000 against 40,000 tokens, about 96 % less", () => {
    const c = compareCatalogShapes({ k: 80, s: 350 }, { k: 4, s: 250 }, 40);
    expect(c.a).toEqual({ k: 80, s: 350, per_turn: 28_000, total: 1_120_000 });
    expect(c.b).toEqual({ k: 4, s: 250, per_turn: 1_000, total: 40_000 });
    expect(c.reduction).toBe(1 - 40_000 / 1_120_000);
    expect(Math.round(c.reduction * 100)).toBe(96);
  });

  it("rejects shapes and turns that are not counts", () => {
    expect(() => compareCatalogShapes({ k: 80, s: 350 }, { k: 4, s: 250 }, 0)).toThrowErrorMatchingInlineSnapshot(
      `[ToolgateError: turns (N) must be an integer ≥ 1; received 0. Pass --turns 40 for the trajectory of docs/economics.md's worked example.]`,
    );
    expect(() => compareCatalogShapes({ k: -1, s: 350 }, { k: 4, s: 250 })).toThrowErrorMatchingInlineSnapshot(
      `[ToolgateError: shape a: k must be an integer ≥ 0; received -1]`,
    );
    expect(() => compareCatalogShapes({ k: 1, s: 350 }, { k: 4, s: Number.NaN })).toThrow(/shape b: s/);
  });
});

describe("catalogCost", () => {
  it("counts each definition as the compact JSON of {name, description, inputSchema}", () => {
    const tool = toToolDescriptor({ name: "t", description: "d", parameters: { type: "object" }, title: "T" });
    expect(definitionText(tool)).toBe(`{"name":"t","description":"d","inputSchema":{"type":"object"}}`);
  });

  it("costs seed-listing-5.json as written: 392 o200k tokens per turn (388 with the key `parameters`)", () => {
    const c = catalogCost(seedListing5(), { turns: 40 });
    expect(c.tools.map((t) => t.tokens)).toMatchInlineSnapshot(`
      [
        98,
        102,
        94,
        98,
      ]
    `);
    expect([c.k, c.per_turn, c.mean_s, c.total]).toEqual([4, 392, 98, 15_680]);
    expect(catalogCost(seedListing5(), { tokenizer: "cl100k" }).per_turn).toMatchInlineSnapshot(`386`);
    // The same definitions serialised as the listing writes them ("parameters") count 388.
    const asWritten = seedListing5().map((t) =>
      countTokens(JSON.stringify({ name: t.name, description: t.description, parameters: t.inputSchema })),
    );
    expect(asWritten.reduce((a, b) => a + b, 0)).toBe(388);
  });

  it("pins the cost of the built-in coding catalog", () => {
    const tools = createCodingCatalog({ workspace: mkdtempSync(join(tmpdir(), "tg-econ-cost-")) }).map((s, i) =>
      toToolDescriptor(toMcpTool(s), "tool", i),
    );
    const c = catalogCost(tools, { turns: 40 });
    expect(c.tools).toMatchInlineSnapshot(`
      [
        {
          "name": "bash_execute",
          "tokens": 105,
        },
        {
          "name": "file_view",
          "tokens": 118,
        },
        {
          "name": "file_edit",
          "tokens": 184,
        },
        {
          "name": "grep_search",
          "tokens": 152,
        },
      ]
    `);
    expect([c.k, c.per_turn, c.total]).toMatchInlineSnapshot(`
      [
        4,
        559,
        22360,
      ]
    `);
  });

  it("reports progress per tool and rejects a bad N", () => {
    const seen: string[] = [];
    catalogCost(seedListing5(), { onProgress: (d, t) => seen.push(`${d}/${t}`) });
    expect(seen).toEqual(["1/4", "2/4", "3/4", "4/4"]);
    expect(() => catalogCost(seedListing5(), { turns: 2.5 })).toThrow(
      /turns \(N\) must be an integer ≥ 1; received 2.5/,
    );
    expect(catalogCost([])).toMatchObject({ k: 0, mean_s: 0, total: 0 });
  });

  it.runIf(testdataAvailable("mcp-catalogs"))("costs the real MCP catalogs", () => {
    const rows = mcpCatalogs().map(({ id, tools }) => {
      const c = catalogCost(tools);
      return `${id}: K=${c.k} S=${c.mean_s.toFixed(1)} K·S=${c.per_turn} N·K·S(40)=${c.total}`;
    });
    expect(rows).toMatchInlineSnapshot(`
      [
        "desktop-commander: K=26 S=416.6 K·S=10832 N·K·S(40)=433280",
        "everything: K=13 S=82.7 K·S=1075 N·K·S(40)=43000",
        "filesystem: K=14 S=117.9 K·S=1650 N·K·S(40)=66000",
        "github-mcp-server: K=117 S=214.5 K·S=25101 N·K·S(40)=1004040",
        "memory: K=9 S=99.0 K·S=891 N·K·S(40)=35640",
        "playwright: K=25 S=149.8 K·S=3745 N·K·S(40)=149800",
      ]
    `);
  });
});
