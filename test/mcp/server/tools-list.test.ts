/**
 * tools/list byte for byte: what a real client receives for the coding catalog, a defineTool
 * catalog and two proxied catalogs is the committed `fixtures/tools-list.jsonl`. A difference in
 * any byte — a key's order, a hint, a title — fails; `test/mcp/tools-list.ts` says how to write
 * the file again when a change is meant to alter tools/list.
 */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { TOOLS_LIST_FILE, toolsListLines } from "../tools-list.js";

describe("tools/list over MCP", () => {
  it("sends exactly the committed bytes for every catalog", async () => {
    const expected = readFileSync(TOOLS_LIST_FILE, "utf8").split("\n").filter(Boolean);
    const actual = await toolsListLines();
    expect(actual.map((l) => (JSON.parse(l) as { catalog: string }).catalog)).toEqual(
      expected.map((l) => (JSON.parse(l) as { catalog: string }).catalog),
    );
    for (let i = 0; i < expected.length; i++) expect(actual[i]).toBe(expected[i]);
  }, 60_000);
});
