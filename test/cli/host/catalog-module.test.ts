import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { loadCatalogModule, toolsFromModule } from "../../../src/cli/host/catalog-module.js";
import { projectRoot } from "../../support/require.js";

const fixtures = join(projectRoot, "test/cli/fixtures");
/** notes-catalog.ts, the TypeScript catalog the MCP tests serve. */
const mcpFixtures = join(projectRoot, "test/mcp/fixtures");

describe("loadCatalogModule", () => {
  it("loads a TypeScript module's default export array without a build step", async () => {
    const tools = await loadCatalogModule("notes-catalog.ts", mcpFixtures);
    expect(tools.map((t) => t.name)).toContain("note_append");
    expect(tools.find((t) => t.name === "note_delete")?.effect).toBe("destructive");
  });

  it("loads a JavaScript module's named exports that are tools, ignoring other exports", async () => {
    const tools = await loadCatalogModule(join(fixtures, "plain-catalog.mjs"));
    expect(tools.map((t) => t.name)).toEqual(["shout"]);
  });

  it("names the missing module and where it looked", async () => {
    await expect(loadCatalogModule("nope.ts", "/srv/project")).rejects.toThrowErrorMatchingInlineSnapshot(
      `[ToolgateError: catalog module nope.ts not found (resolved to /srv/project/nope.ts)]`,
    );
  });

  it("refuses a default export array with something that is not a tool", async () => {
    await expect(loadCatalogModule("empty-catalog.mjs", fixtures)).rejects.toThrowErrorMatchingInlineSnapshot(
      `[ToolgateError: empty-catalog.mjs: default export [0] is not a tool; expected the result of defineTool(...) (name, inputSchema, effect, handler)]`,
    );
  });

  it("refuses a module without tools, and two different tools with one name", () => {
    expect(() => toolsFromModule({ answer: 42 }, "m.js")).toThrowErrorMatchingInlineSnapshot(
      `[ToolgateError: m.js exports no tools; expected \`export default [defineTool(...), ...]\` or named exports of defineTool results]`,
    );
    const a = {
      name: "t",
      description: "",
      inputSchema: { type: "object" },
      effect: "read",
      annotations: {},
      handler: () => 1,
    };
    expect(toolsFromModule({ default: [a], a }, "m.js")).toHaveLength(1);
    expect(() => toolsFromModule({ default: [a], b: { ...a } }, "m.js")).toThrowErrorMatchingInlineSnapshot(
      `[ToolgateError: m.js exports two different tools named t; tool names must be unique]`,
    );
  });

  it("reports a module that fails to load with its error", async () => {
    await expect(loadCatalogModule("broken-catalog.mjs", fixtures)).rejects.toThrowErrorMatchingInlineSnapshot(
      `[ToolgateError: cannot load catalog module broken-catalog.mjs: the catalog could not reach its database]`,
    );
  });
});
