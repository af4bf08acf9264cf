/** `toolgate lint`: input shapes, the three formats and the exit codes (0 clean, 1 errors, 2 usage/input). */
import { spawnSync } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { cli } from "../support/cli.js";
import { projectRoot, testdataAvailable, testdataDir } from "../support/require.js";

const dir = mkdtempSync(join(tmpdir(), "toolgate-cli-lint-"));
const file = (name: string, value: unknown) => {
  const path = join(dir, name);
  writeFileSync(path, typeof value === "string" ? value : JSON.stringify(value));
  return path;
};

const clean = {
  name: "get_order",
  description: "Returns one order.",
  annotations: { readOnlyHint: true },
  inputSchema: {
    type: "object",
    properties: { order_id: { type: "string", maxLength: 32, description: "Order id." } },
    required: ["order_id"],
    additionalProperties: false,
  },
};
const dirty = {
  name: "query",
  description: "Runs a query.",
  inputSchema: { type: "object", properties: { q: { type: "string", description: "SQL." } }, required: ["q"] },
};

describe("toolgate lint", () => {
  it("exit 0 and a summary for a clean descriptor", async () => {
    const r = await cli("lint", file("clean.json", clean));
    expect(r).toEqual({ code: 0, out: "1 tool, 1 clean, 0 errors, 0 warnings\n", err: "" });
  });

  it("exit 1 with findings grouped by tool, pointer and fix, and a per-rule count", async () => {
    const path = file("dirty.json", { tools: [clean, dirty] });
    const r = await cli("lint", path);
    expect(r.code).toBe(1);
    expect(r.out.replaceAll(path, "FILE")).toMatchInlineSnapshot(`
      "FILE · query
        error   TG001 /inputSchema
                object with properties (q) does not set additionalProperties: false, so undeclared arguments pass through
                fix: add "additionalProperties": false
        error   TG003 /inputSchema/properties/q
                property q is a string with no maxLength, enum, const, bounded format or anchored bounded pattern
                fix: add "maxLength" (e.g. 1024 for a path, 256 for a name), or an enum if the values are known
        error   TG006 (tool)
                the tool does not declare its side effect, so the runtime must treat every call as destructive (A3)
                fix: add annotations {"readOnlyHint": true} for a read-only tool, {"idempotentHint": true} for a repeatable write, {"destructiveHint": true} for an irreversible one (toolgate: effect: read | idempotent | write | destructive)

      2 tools, 1 clean, 3 errors, 0 warnings
        TG001     1  closed: every object sets additionalProperties: false
        TG003     1  bounded: numbers, strings, arrays and maps carry bounds
        TG006     1  side effect: the tool declares read-only, idempotent or destructive
      "
    `);
  });

  it("--format json prints findings and summary {tools, clean, byRule}", async () => {
    const r = await cli("lint", "--format", "json", file("arr.json", [clean, dirty]));
    expect(r.code).toBe(1);
    const report = JSON.parse(r.out);
    expect(report.summary).toEqual({
      tools: 2,
      clean: 1,
      errors: 3,
      warnings: 0,
      byRule: { TG001: 1, TG003: 1, TG006: 1 },
    });
    expect(report.findings[0]).toMatchObject({
      rule: "TG001",
      severity: "error",
      tool: "query",
      pointer: "/inputSchema",
    });
  });

  it("--json is --format json: the findings of a known catalog, each with its rule, pointer, message and fix", async () => {
    const path = file("j.json", [clean, dirty]);
    const json = await cli("lint", "--json", path);
    expect(json.code).toBe(1);
    const finding = (rule: string, pointer: string, message: string, fix: string) => ({
      rule,
      severity: "error",
      pointer,
      message,
      fix,
      tool: "query",
      source: path,
    });
    expect(JSON.parse(json.out)).toStrictEqual({
      findings: [
        finding(
          "TG001",
          "/inputSchema",
          "object with properties (q) does not set additionalProperties: false, so undeclared arguments pass through",
          'add "additionalProperties": false',
        ),
        finding(
          "TG003",
          "/inputSchema/properties/q",
          "property q is a string with no maxLength, enum, const, bounded format or anchored bounded pattern",
          'add "maxLength" (e.g. 1024 for a path, 256 for a name), or an enum if the values are known',
        ),
        finding(
          "TG006",
          "",
          "the tool does not declare its side effect, so the runtime must treat every call as destructive (A3)",
          'add annotations {"readOnlyHint": true} for a read-only tool, {"idempotentHint": true} for a repeatable write, {"destructiveHint": true} for an irreversible one (toolgate: effect: read | idempotent | write | destructive)',
        ),
      ],
      summary: { tools: 2, clean: 1, errors: 3, warnings: 0, byRule: { TG001: 1, TG003: 1, TG006: 1 } },
    });
    // The same bytes as the long form.
    const long = await cli("lint", "--format", "json", path);
    expect([long.code, long.out, long.err]).toEqual([1, json.out, ""]);
  });

  it("--format sarif prints SARIF 2.1.0 with rule ids and logical locations", async () => {
    const r = await cli("lint", "--format", "sarif", file("s.json", dirty));
    const sarif = JSON.parse(r.out);
    expect(sarif.version).toBe("2.1.0");
    expect(sarif.runs[0].tool.driver.name).toBe("toolgate");
    expect(sarif.runs[0].results.map((x: { ruleId: string; level: string }) => `${x.ruleId} ${x.level}`)).toEqual([
      "TG001 error",
      "TG003 error",
      "TG006 error",
    ]);
    expect(sarif.runs[0].results[1].locations[0].logicalLocations[0].fullyQualifiedName).toBe(
      "query#/inputSchema/properties/q",
    );
  });

  it("a JSON-RPC tools/list response is accepted", async () => {
    expect((await cli("lint", file("rpc.json", { jsonrpc: "2.0", id: 1, result: { tools: [clean] } }))).code).toBe(0);
  });

  it("exit 2 with one clear line for unreadable files, invalid JSON, a shape with no tools, a bad format, no files", async () => {
    const missing = await cli("lint", join(dir, "nope.json"));
    expect([missing.code, missing.err.replaceAll(dir, "DIR")]).toEqual([
      2,
      "toolgate: cannot read DIR/nope.json: no such file\n",
    ]);
    const bad = await cli("lint", file("bad.json", "{ not json"));
    expect(bad.code).toBe(2);
    expect(bad.err.replaceAll(dir, "DIR")).toMatch(/^toolgate: DIR\/bad\.json is not valid JSON: .+\n$/);
    expect(bad.err).not.toMatch(/\n\s+at /);
    const shape = await cli("lint", file("num.json", "42"));
    expect([shape.code, shape.err.replaceAll(dir, "DIR")]).toEqual([
      2,
      'toolgate: DIR/num.json: expected a tool descriptor, an array of them, or {"tools": [...]}; found number [lint_input]\n',
    ]);
    expect((await cli("lint", "--format", "xml", file("c2.json", clean))).code).toBe(2);
    const none = await cli("lint");
    expect([none.code, none.err]).toEqual([2, "toolgate: lint needs at least one FILE (or - for standard input)\n"]);
  });

  it("exit 2 with one clear line for an empty catalog, in each shape", async () => {
    for (const [name, value] of [
      ["empty-array.json", []],
      ["empty-tools.json", { tools: [] }],
    ] as const) {
      const r = await cli("lint", file(name, value));
      expect([r.code, r.out, r.err.replaceAll(dir, "DIR")]).toEqual([
        2,
        "",
        `toolgate: no tool descriptors found in DIR/${name}: expected a tool, an array of tools or {"tools": [...]}\n`,
      ]);
    }
  });

  it("warns on a description too short to tell the model when to use the tool (TG010), with the fix", async () => {
    const r = await cli("lint", file("short.json", { ...clean, description: "x" }));
    expect(r.code).toBe(0);
    expect(r.out.replaceAll(dir, "DIR")).toMatchInlineSnapshot(`
      "DIR/short.json · get_order
        warning TG010 /description
                the description "x" is too short to tell the model when to use the tool (fewer than 3 words or 12 characters)
                fix: say what the tool does, when to use it rather than its neighbours, and what it returns, e.g. "Search a customer's orders by status; use it to find the order_id before refund_order"

      1 tool, 0 clean, 0 errors, 1 warning
        TG010     1  naming and description: valid name, a description, every property described
      "
    `);
  });

  it("reads standard input with -", () => {
    const r = spawnSync(
      process.execPath,
      ["--import", "tsx", join(projectRoot, "src/cli/main.ts"), "lint", "--format", "json", "-"],
      { input: JSON.stringify([dirty]), encoding: "utf8", cwd: projectRoot },
    );
    expect(r.status).toBe(1);
    expect(JSON.parse(r.stdout).summary.byRule).toEqual({ TG001: 1, TG003: 1, TG006: 1 });
  });

  it.runIf(testdataAvailable("mcp-catalogs"))("lints a real catalog file to completion", async () => {
    const r = await cli("lint", "--format", "json", join(testdataDir, "mcp-catalogs", "github-mcp-server.json"));
    expect(r.code).toBe(1);
    expect(JSON.parse(r.out).summary.tools).toBe(117);
  });
});
