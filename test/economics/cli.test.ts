/** `toolgate breakeven`, `toolgate cost` and `toolgate export`: output, --json and the exit codes (0, 1 findings, 2 bad input). */
import { mkdtempSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { testdataAvailable, testdataDir } from "../support/require.js";
import { jsonl, traffic } from "./support/audit.js";
import { seedListing5Path } from "./support/catalogs.js";
import { cli } from "../support/cli.js";

const dir = mkdtempSync(join(tmpdir(), "tg-econ-cli-"));
const file = (name: string, text: string) => {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
};
const here = dirname(fileURLToPath(import.meta.url));

/** Runs several command lines one after another (the capture spies stdout, so never in parallel). */
async function each(...argvs: string[][]): Promise<{ code: number; out: string; err: string }[]> {
  const results = [];
  for (const argv of argvs) results.push(await cli(...argv));
  return results;
}

describe("toolgate breakeven", () => {
  it("prints the seed's example", async () => {
    const r = await cli("breakeven", "--tokens", "80", "--mask-ms", "0.5", "--repair-ms", "1800");
    expect(r.code).toBe(0);
    expect(r.out).toMatchInlineSnapshot(`
      "p_break = L_gen · t_mask / T_repair = 80 × 0.5 ms / 1,800 ms = 40 ms / 1,800 ms = 2.22 % (1 in 45)
      T_constrained = L_gen · (t_decode + t_mask) = 40 ms (mask overhead only; pass --decode-ms for the full time)
      decision: measure p_err to decide
      p_break = 40 ms / 1,800 ms ≈ 2.2 %: constraining pays when calls fail to parse more often than about one time in forty; measure the tool's own malformation rate (--observed-rate) to decide.
      "
    `);
  });

  it("decides with an observed rate, as JSON", async () => {
    const r = await cli("breakeven", "--tokens", "80", "--mask-ms", "0.5", "--repair-ms", "1800", "--observed-rate", "0.05", "--json");
    expect(r.code).toBe(0);
    expect(JSON.parse(r.out)).toMatchObject({ p_break: 40 / 1800, decision: "constrain", observed_rate: 0.05 });
  });

  it.each([
    [["--tokens", "80", "--mask-ms", "0", "--repair-ms", "1800"]],
    [["--tokens", "80", "--mask-ms", "0.5", "--repair-ms", "-1"]],
    [["--tokens", "80", "--mask-ms", "0.5", "--repair-ms", "1800", "--observed-rate", "2"]],
    [["--tokens", "lots", "--mask-ms", "0.5", "--repair-ms", "1800"]],
    [["--tokens", "80"]],
    [["--audit", "/nonexistent/audit.jsonl"]],
    [["--audit", "AUDIT", "--tokens", "80"]],
  ])("exits 2 with one clear line for %j", async (args) => {
    const argv = args.map((a) => (a === "AUDIT" ? file("a.jsonl", jsonl(traffic("t", { calls: 3, failed: 1, tokens: 9, repair_ms: 10 }))) : a));
    const r = await cli("breakeven", ...argv);
    expect(r.code).toBe(2);
    expect(r.out).toBe("");
    expect(r.err.trim().split("\n")).toHaveLength(1);
    expect(r.err).toMatch(/^toolgate: /);
  });

  it("names each bad input", async () => {
    const errs = await each(
      ["breakeven", "--tokens", "80", "--mask-ms", "0.5", "--repair-ms", "-1"],
      ["breakeven", "--tokens", "80"],
      ["breakeven", "--audit", "/nonexistent/audit.jsonl"],
    );
    expect(errs.map((r) => r.err)).toMatchInlineSnapshot(`
      [
        "toolgate: repair_ms (T_repair) must be a number greater than 0; received -1. Pass --repair-ms with a positive value, e.g. 1800. [invalid_input]
      ",
        "toolgate: breakeven needs --mask-ms, --repair-ms (e.g. --tokens 80 --mask-ms 0.5 --repair-ms 1800), or --audit FILE
      ",
        "toolgate: cannot read /nonexistent/audit.jsonl: no such file
      ",
      ]
    `);
  });

  it("estimates per tool from an audit trail, reporting broken lines on stderr", async () => {
    const trail = file("audit.jsonl", jsonl([...traffic("file_edit", { calls: 200, failed: 20, tokens: 80, repair_ms: 2000 }), ...traffic("grep_search", { calls: 10, failed: 1, tokens: 100, repair_ms: 2000 })]) + "garbage\n");
    const r = await cli("breakeven", "--audit", trail);
    expect(r.code).toBe(0);
    expect(r.out).toMatchInlineSnapshot(`
      "tool         calls  failed  p_err [95 % CI]     L_gen  T_repair  p_break  recommendation
      file_edit    200    20      10.0 % [6.6, 14.9]  80.0   2,000 ms  2.00 %   constrain
      grep_search  10     1       10.0 % [1.8, 40.4]  100.0  2,000 ms  2.50 %   not enough data

      grep_search: warning: sample too small to decide — p_err 10.0 % (95 % CI 1.8–40.4 %, 1/10) straddles p_break 2.5 %; at this rate about 15 calls would decide
      210 record(s) read; failed = outcome invalid_arguments; t_mask = 0.5 ms
      "
    `);
    expect(r.err.replace(dir, "DIR")).toMatchInlineSnapshot(`
      "toolgate: 1 broken line(s) in DIR/audit.jsonl skipped, 210 used:
        line 211: not valid JSON (Unexpected token 'g', "garbage" is not valid JSON)
      "
    `);
    const j = await cli("breakeven", "--audit", trail, "--mask-ms", "0.25", "--json");
    expect(JSON.parse(j.out)).toMatchObject({ mask_ms: 0.25, records: 210, broken: [{ line: 211 }] });
  });

  it("a trail whose repairs come within ms (scripted clients) says constraining never pays, not a rate above 100 %", async () => {
    const trail = file("fast.jsonl", jsonl(traffic("file_edit", { calls: 50, failed: 5, tokens: 80, repair_ms: 3 })));
    const r = await cli("breakeven", "--audit", trail);
    expect(r.code).toBe(0);
    expect(r.out).toMatchInlineSnapshot(`
      "tool       calls  failed  p_err [95 % CI]     L_gen  T_repair  p_break  recommendation
      file_edit  50     5       10.0 % [4.3, 21.4]  80.0   3 ms      ≥ 100 %  don't constrain

      file_edit: p_break ≥ 100 %: a repair turn (T_repair 3 ms) costs less than masking one call (L_gen · t_mask = 40 ms); don't constrain
      50 record(s) read; failed = outcome invalid_arguments; t_mask = 0.5 ms
      "
    `);
    expect(r.out).not.toMatch(/\d{3,}\.\d+ %/);
    const t = JSON.parse((await cli("breakeven", "--audit", trail, "--json")).out).tools[0];
    expect(t).toMatchObject({ p_break: null, constraining_never_pays: true, recommendation: "dont_constrain", t_repair_ms: 3 });
    expect(t.p_break_raw).toBeCloseTo((80 * 0.5) / 3, 12);
    expect(JSON.parse((await cli("breakeven", "--tokens", "80", "--mask-ms", "0.5", "--repair-ms", "3", "--json")).out)).toMatchObject({ constraining_never_pays: true, decision: "dont_constrain", summary: expect.stringMatching(/never pays on latency; no rate is needed: do not constrain; repair turns are cheaper\.$/) });
    expect(JSON.parse((await cli("breakeven", "--tokens", "80", "--mask-ms", "0.5", "--repair-ms", "1800", "--json")).out)).toMatchObject({ constraining_never_pays: false });
    const direct = await cli("breakeven", "--tokens", "80", "--mask-ms", "0.5", "--repair-ms", "3", "--observed-rate", "0.1");
    expect(direct.out).toMatchInlineSnapshot(`
      "p_break = L_gen · t_mask / T_repair = 80 × 0.5 ms / 3 ms = 40 ms / 3 ms ≥ 100 % (a repair turn costs less than masking one call)
      T_constrained = L_gen · (t_decode + t_mask) = 40 ms (mask overhead only; pass --decode-ms for the full time)
      E[T_free] = L_gen · t_decode + p_err · T_repair = 0.3 ms at p_err = 10.0 %
      decision: do not constrain
      p_break = 40 ms / 3 ms ≥ 100 %: masking costs more than a repair turn, so constraining never pays on latency; observed 10.0 %: do not constrain; repair turns are cheaper.
      "
    `);
  });

  it("exits 2 for a trail with nothing usable", async () => {
    const r = await cli("breakeven", "--audit", file("bad.jsonl", "nope\n{}\n"));
    expect(r.code).toBe(2);
    expect(r.err).toMatchInlineSnapshot(`
      "toolgate: the audit trail holds no usable record (2 broken line(s); line 1: not valid JSON (Unexpected token 'o', "nope" is not valid JSON)). Expected one AuditRecord JSON object per line, as the gateway writes to its audit trail. [invalid_input]
      "
    `);
  });
});

describe("toolgate cost", () => {
  it("reproduces the seed's shapes", async () => {
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
    expect(j.catalogs[0].tools.map((t: { name: string }) => t.name)).toEqual(["bash_execute", "file_view", "file_edit", "grep_search"]);
  });

  it("costs a module of defineTool results", async () => {
    const j = JSON.parse((await cli("cost", "--catalog", join(here, "fixtures", "catalog-module.ts"), "--json")).out);
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

describe("toolgate export", () => {
  it("prints each format", async () => {
    const anthropic = JSON.parse((await cli("export", seedListing5Path, "--format", "anthropic")).out);
    expect(anthropic[0]).toMatchObject({ name: "bash_execute", input_schema: { type: "object" } });
    const vercel = JSON.parse((await cli("export", seedListing5Path, "--format", "vercel-ai")).out);
    expect(Object.keys(vercel)).toEqual(["bash_execute", "file_view", "file_edit", "grep_search"]);
    const fromModule = JSON.parse((await cli("export", "--catalog", join(here, "fixtures", "catalog-module.ts"), "--format", "mcp")).out);
    expect(fromModule.tools[0]).toMatchObject({ name: "get_order", annotations: { readOnlyHint: true, destructiveHint: false } });
    const mcp = JSON.parse((await cli("export", "--format", "mcp")).out);
    expect(mcp.tools[0].annotations).toMatchObject({ readOnlyHint: false });
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
    expect(JSON.parse(r.out).map((t: { function: { strict: boolean } }) => t.function.strict)).toEqual([false, true, false, false]);
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
        "error: option '--format <format>' argument 'yaml' is invalid. Allowed choices are mcp, openai, anthropic, vercel-ai, gbnf.",
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
