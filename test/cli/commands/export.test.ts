/** `toolgate export`: each format and the exit codes (0, 1 a tool cannot be strict, 2 bad input). */
import { describe, expect, it } from "vitest";
import { seedListing5Path } from "../../support/catalogs.js";
import { cli } from "../../support/cli.js";
import { catalogModulePath, each } from "./scratch.js";

describe("toolgate export", () => {
  it("prints each format", async () => {
    const anthropic = JSON.parse((await cli("export", seedListing5Path, "--format", "anthropic")).out);
    expect(anthropic[0]).toMatchObject({ name: "bash_execute", input_schema: { type: "object" } });
    const vercel = JSON.parse((await cli("export", seedListing5Path, "--format", "vercel-ai")).out);
    expect(Object.keys(vercel)).toEqual(["bash_execute", "file_view", "file_edit", "grep_search"]);
    const fromModule = JSON.parse((await cli("export", "--catalog", catalogModulePath, "--format", "mcp")).out);
    expect(fromModule.tools[0]).toMatchObject({
      name: "get_order",
      annotations: { readOnlyHint: true, destructiveHint: false },
    });
    const mcp = JSON.parse((await cli("export", "--format", "mcp")).out);
    expect(mcp.tools[0].annotations).toMatchObject({ readOnlyHint: false });
    // Outside MCP a schema has no default dialect: every document names its own.
    const documents = JSON.parse((await cli("export", "--format", "json-schema")).out) as {
      tools: { name: string; inputSchema: { $schema?: string }; outputSchema?: { $schema?: string } }[];
    };
    expect(documents.tools.map((t) => [t.name, t.inputSchema.$schema, t.outputSchema?.$schema])).toEqual(
      ["bash_execute", "file_view", "file_edit", "grep_search"].map((n) => [
        n,
        "https://json-schema.org/draft/2020-12/schema",
        "https://json-schema.org/draft/2020-12/schema",
      ]),
    );
    const gbnf = await cli("export", seedListing5Path, "--format", "gbnf");
    expect(gbnf.code).toBe(0);
    expect(gbnf.out).toMatch(/^root ::= t-bash-execute \| t-file-view \| t-file-edit \| t-grep-search$/m);
    expect(gbnf.err).toMatch(/\d+ constraint\(s\) the grammar cannot express/);
    const wide = await cli("export", seedListing5Path, "--format", "gbnf", "--max-repeat", "10000");
    expect(wide.err).not.toContain("maxLength 8192");
  });

  it("--strict: exit 1 and the reasons on stderr when a tool cannot be strict", async () => {
    const r = await cli("export", seedListing5Path, "--format", "openai", "--strict");
    expect(r.code).toBe(1);
    expect(JSON.parse(r.out).map((t: { function: { strict: boolean } }) => t.function.strict)).toEqual([
      false,
      true,
      false,
      false,
    ]);
    expect(r.err).toMatch(/^bash_execute: cannot be strict/);
  });

  it("exits 2 for bad input", async () => {
    const results = await each(
      ["export", seedListing5Path],
      ["export", seedListing5Path, "--format", "yaml"],
      ["export", seedListing5Path, "--format", "anthropic", "--strict"],
      ["export", seedListing5Path, seedListing5Path, "--format", "mcp"],
      ["export", seedListing5Path, "--catalog", "x.ts", "--format", "mcp"],
      ["export", seedListing5Path, "--format", "gbnf", "--max-repeat", "many"],
      ["export", seedListing5Path, "--format", "openai", "--max-repeat", "100"],
      ["export", seedListing5Path, "--format", "gbnf", "--max-repeat", "-3"],
    );
    expect(results.map((r) => r.code)).toEqual([2, 2, 2, 2, 2, 2, 2, 2]);
    expect(results.map((r) => r.err.split("\n")[0])).toMatchInlineSnapshot(`
      [
        "error: required option '--format <format>' not specified",
        "error: option '--format <format>' argument 'yaml' is invalid. Allowed choices are mcp, openai, anthropic, vercel-ai, gbnf, json-schema.",
        "toolgate: --strict applies to --format openai only; received --format anthropic",
        "toolgate: two tools are named bash_execute; an exported catalog needs unique names (export the files one at a time)",
        "toolgate: give one catalog source: FILE..., --mcp -- CMD ARGS... or --catalog MODULE [invalid_input]",
        "toolgate: --max-repeat must be a number; received "many"",
        "toolgate: --max-repeat applies to --format gbnf only; received --format openai",
        "toolgate: max_repeat must be an integer ≥ 0; received -3 [invalid_input]",
      ]
    `);
  });
});
