/** `toolgate cost`: output, --json and the exit codes (0, 2 bad input). */
import { createRequire } from "node:module";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { testdataAvailable, testdataDir } from "../../support/require.js";
import { seedListing5Path } from "../../support/catalogs.js";
import { cli } from "../../support/cli.js";
import { catalogModulePath, each, scratch } from "./scratch.js";

const { dir, file } = scratch("tg-econ-cli-");

describe("toolgate cost", () => {
  it("reproduces the worked example's shapes (docs/economics.md)", async () => {
    const r = await cli("cost", "--shape", "80x350", "--shape", "4x250", "--turns", "40");
    expect(r.out).toMatchInlineSnapshot(`
      "A: 80 tools × 350 tokens = 28,000 per turn, 1,120,000 over 40 turns
      B: 4 tools × 250 tokens = 1,000 per turn, 40,000 over 40 turns
      B sends 96.4 % less than A
      "
    `);
  });

  it("costs a catalog file, as text and JSON", async () => {
    const r = await cli("cost", seedListing5Path, "--turns", "10");
    expect(r.code).toBe(0);
    expect(r.out.replace(seedListing5Path, "LISTING5")).toMatchInlineSnapshot(`
      "LISTING5
      tool          tokens (o200k)
      bash_execute  98
      file_view     102
      file_edit     94
      grep_search   98
      K = 4 tool(s), mean S = 98.0 tokens, K·S = 392 tokens per turn
      N·K·S = 10 × 4 × 98.0 = 3,920 tokens over 10 turns
      "
    `);
    const j = JSON.parse((await cli("cost", seedListing5Path, "--json", "--tokenizer", "cl100k")).out);
    expect(j.catalogs[0]).toMatchObject({ tokenizer: "cl100k", k: 4, turns: 40 });
  });

  it.runIf(testdataAvailable("mcp-catalogs"))("shows progress for a large catalog on a terminal only", async () => {
    const github = join(testdataDir, "mcp-catalogs", "github-mcp-server.json");
    const piped = await cli("cost", github);
    expect(piped.err).toBe("");
    const had = Object.getOwnPropertyDescriptor(process.stderr, "isTTY");
    Object.defineProperty(process.stderr, "isTTY", { value: true, configurable: true });
    try {
      const tty = await cli("cost", github);
      expect(tty.err).toContain(`\rcounting ${github}: 1/117 tools`);
      expect(tty.err).toContain(`\rcounting ${github}: 117/117 tools\r\x1b[K`);
      expect(tty.out).toBe(piped.out);
    } finally {
      if (had) Object.defineProperty(process.stderr, "isTTY", had);
      else delete (process.stderr as { isTTY?: boolean }).isTTY;
    }
  });

  it("costs the built-in coding catalog with no argument", async () => {
    const j = JSON.parse((await cli("cost", "--json")).out);
    expect(j.catalogs[0].source).toBe("built-in coding catalog");
    expect(j.catalogs[0].tools.map((t: { name: string }) => t.name)).toEqual([
      "bash_execute",
      "file_view",
      "file_edit",
      "grep_search",
    ]);
  });

  it("costs a module of defineTool results", async () => {
    const j = JSON.parse((await cli("cost", "--catalog", catalogModulePath, "--json")).out);
    expect(j.catalogs[0].tools.map((t: { name: string }) => t.name)).toEqual(["get_order"]);
  });

  it.runIf(testdataAvailable("mcp-catalogs"))("costs a live MCP server the same as its captured catalog", async () => {
    const require = createRequire(import.meta.url);
    const server = require.resolve("@modelcontextprotocol/server-memory/dist/index.js");
    const live = JSON.parse((await cli("cost", "--json", "--mcp", "--", process.execPath, server)).out);
    const captured = JSON.parse((await cli("cost", "--json", join(testdataDir, "mcp-catalogs", "memory.json"))).out);
    expect(live.catalogs[0].source).toMatch(/^mcp:/);
    expect(live.catalogs[0].tools).toEqual(captured.catalogs[0].tools);
  });

  it("exits 2 for bad input", async () => {
    const results = await each(
      ["cost", "--turns", "0"],
      ["cost", "/nonexistent.json"],
      ["cost", file("broken.json", "{")],
      ["cost", file("nothing.json", JSON.stringify({ foo: 1 }))],
      ["cost", file("noname.json", JSON.stringify([{ description: "x", inputSchema: {} }]))],
      ["cost", "--shape", "80x350"],
      ["cost", "--shape", "80 tools", "--shape", "4x250"],
      ["cost", "--mcp"],
      ["cost", "--shape", "80x"],
    );
    expect(results.map((r) => r.code)).toEqual([2, 2, 2, 2, 2, 2, 2, 2, 2]);
    expect(results.map((r) => r.err.replace(dir, "DIR"))).toMatchInlineSnapshot(`
      [
        "toolgate: --turns must be an integer ≥ 1; received "0"
      ",
        "toolgate: cannot read /nonexistent.json: no such file
      ",
        "toolgate: DIR/broken.json is not valid JSON: Expected property name or '}' in JSON at position 1
      ",
        "toolgate: DIR/nothing.json: expected a tool descriptor, an array of them, or {"tools": [...]}; found an object with keys foo [lint_input]
      ",
        "toolgate: DIR/noname.json tools[0].name must be a non-empty string; received nothing. Every tool needs a name. [invalid_catalog]
      ",
        "toolgate: --shape compares exactly two shapes: --shape 80x350 --shape 4x250, and takes no catalog
      ",
        "toolgate: --shape must be K×S (tools × tokens each), e.g. 80x350; received "80 tools"
      ",
        "toolgate: --mcp needs the server command after --, e.g. --mcp -- npx @modelcontextprotocol/server-memory [invalid_input]
      ",
        "toolgate: --shape must be K×S (tools × tokens each), e.g. 80x350; received "80x"
      ",
      ]
    `);
  });
});
