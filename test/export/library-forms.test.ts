/** exportCatalog and catalogCost as a library: tools in any form the CLI reads give the same answer. */
import { describe, expect, it } from "vitest";
import { catalogCost } from "../../src/economics/cost.js";
import { toToolDescriptor, type ToolDescriptor } from "../../src/schema/descriptor.js";
import { exportCatalog } from "../../src/export/catalog.js";

const schema = {
  type: "object",
  properties: { id: { type: "string", maxLength: 10 } },
  required: ["id"],
  additionalProperties: false,
};
const mcp = {
  name: "get_order",
  description: "Get one order by its id.",
  inputSchema: schema,
  annotations: { readOnlyHint: true },
};
const forms: Record<string, unknown> = {
  openai: { type: "function", function: { name: mcp.name, description: mcp.description, parameters: schema } },
  anthropic: { name: mcp.name, description: mcp.description, input_schema: schema },
};

describe("library callers may pass any accepted tool form", () => {
  for (const [form, tool] of Object.entries(forms)) {
    it(`${form}: costs and exports like the descriptor it stands for`, () => {
      const as = [tool] as unknown as ToolDescriptor[];
      const plain = [toToolDescriptor(tool)];
      expect(catalogCost(as)).toEqual(catalogCost(plain));
      expect(catalogCost(as).tools[0]).toMatchObject({ name: "get_order" });
      expect(exportCatalog(as, "anthropic").output).toEqual(exportCatalog(plain, "anthropic").output);
      expect(exportCatalog(as, "mcp").output).toEqual(exportCatalog(plain, "mcp").output);
    });
  }
});
