/**
 * Every real MCP catalog in ../shared/testdata/mcp-catalogs lints to completion; the per-rule
 * counts are pinned so a change in any rule shows up in review. (TG009 overlap counts are
 * pinned by the economics tests; they are left out here so one area's tuning does not break
 * the other's snapshot.)
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { lintCatalog } from "../../../src/schema/lint/index.js";
import { testdataAvailable, testdataDir } from "../../support/require.js";

const dir = join(testdataDir, "mcp-catalogs");
const available = testdataAvailable("mcp-catalogs");

function counts(file: string): Record<string, number | string> {
  const catalog = JSON.parse(readFileSync(join(dir, file), "utf8")) as { tools: unknown[] };
  const findings = lintCatalog(catalog.tools).filter((f) => f.rule !== "TG009");
  const out: Record<string, number | string> = {
    tools: catalog.tools.length,
    clean: catalog.tools.length - new Set(findings.map((f) => f.tool)).size,
  };
  for (const f of findings.sort((a, b) => a.rule.localeCompare(b.rule))) {
    const key = `${f.rule} ${f.severity}`;
    out[key] = ((out[key] as number | undefined) ?? 0) + 1;
  }
  return out;
}

describe.runIf(available)("real MCP catalogs", () => {
  it("finds all six catalogs", () => {
    expect(
      readdirSync(dir)
        .filter((f) => f.endsWith(".json"))
        .sort(),
    ).toEqual([
      "desktop-commander.json",
      "everything.json",
      "filesystem.json",
      "github-mcp-server.json",
      "memory.json",
      "playwright.json",
    ]);
  });

  it("github-mcp-server (117 tools)", () => {
    expect(counts("github-mcp-server.json")).toMatchInlineSnapshot(`
      {
        "TG001 error": 124,
        "TG002 error": 257,
        "TG002 warning": 58,
        "TG003 error": 512,
        "TG004 warning": 6,
        "TG005 error": 4,
        "TG007 error": 2,
        "TG008 warning": 5,
        "clean": 0,
        "tools": 117,
      }
    `);
  });
  it("desktop-commander", () => {
    expect(counts("desktop-commander.json")).toMatchInlineSnapshot(`
      {
        "TG002 error": 36,
        "TG003 error": 58,
        "TG004 warning": 6,
        "TG005 warning": 2,
        "TG007 error": 5,
        "TG008 warning": 1,
        "TG010 warning": 84,
        "clean": 5,
        "tools": 26,
      }
    `);
  });
  it("filesystem", () => {
    expect(counts("filesystem.json")).toMatchInlineSnapshot(`
      {
        "TG001 error": 15,
        "TG002 error": 4,
        "TG003 error": 28,
        "TG008 warning": 1,
        "TG010 warning": 18,
        "clean": 0,
        "tools": 14,
      }
    `);
  });
  it("memory", () => {
    expect(counts("memory.json")).toMatchInlineSnapshot(`
      {
        "TG001 error": 14,
        "TG003 error": 26,
        "TG010 warning": 4,
        "clean": 0,
        "tools": 9,
      }
    `);
  });
  it("everything", () => {
    expect(counts("everything.json")).toMatchInlineSnapshot(`
      {
        "TG001 error": 13,
        "TG003 error": 9,
        "TG004 warning": 1,
        "TG008 warning": 1,
        "TG010 warning": 1,
        "clean": 0,
        "tools": 13,
      }
    `);
  });
  it("playwright", () => {
    expect(counts("playwright.json")).toMatchInlineSnapshot(`
      {
        "TG002 error": 39,
        "TG002 warning": 11,
        "TG003 error": 59,
        "TG004 warning": 1,
        "clean": 2,
        "tools": 25,
      }
    `);
  });
});
