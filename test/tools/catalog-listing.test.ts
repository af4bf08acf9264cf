import { afterAll, describe, expect, it } from "vitest";
import { toMcpTool } from "../../src/mcp/server/listing.js";
import { createCodingCatalog } from "../../src/tools/catalog.js";
import { makeWorkspace } from "./fixtures.js";

const s = makeWorkspace("catalog-listing");
afterAll(() => s.cleanup());

// MCP assumes openWorldHint: true when it is absent; the four tools reach nothing outside the
// workspace (bash_execute has no network), so tools/list must say so, and give each a title.
describe("the coding catalog in tools/list", () => {
  it("carries a title and openWorldHint: false for every tool", () => {
    const listed = createCodingCatalog({ workspace: s.root }).map(toMcpTool);
    expect(listed.map((t) => [t.name, typeof t.title, t.annotations?.openWorldHint])).toEqual([
      ["bash_execute", "string", false],
      ["file_view", "string", false],
      ["file_edit", "string", false],
      ["grep_search", "string", false],
    ]);
  });
});
