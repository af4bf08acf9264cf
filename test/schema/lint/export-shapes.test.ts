/** Every `toolgate export` format reads back into lint and cost: a user round-trips them. */
import { describe, expect, it } from "vitest";
import { toToolDescriptor } from "../../../src/schema/descriptor.js";
import { exportCatalog } from "../../../src/export/catalog.js";
import type { ExportFormat } from "../../../src/export/formats.js";
import { lintSources, toolsOf } from "../../../src/schema/lint/report.js";

const schema = {
  type: "object",
  properties: { q: { type: "string", maxLength: 64 } },
  required: ["q"],
  additionalProperties: false,
};
const tools = [
  toToolDescriptor(
    {
      name: "search_orders",
      description: "Find the newest orders of one customer.",
      inputSchema: schema,
      annotations: { readOnlyHint: true },
    },
    "t[0]",
    0,
  ),
  toToolDescriptor(
    {
      name: "refund_order",
      description: "Refund one order in full, once.",
      inputSchema: schema,
      annotations: { destructiveHint: true },
    },
    "t[1]",
    1,
  ),
];

describe("export → lint/cost round trip", () => {
  for (const format of ["mcp", "openai", "anthropic", "vercel-ai"] as const satisfies readonly ExportFormat[]) {
    it(`reads --format ${format} back with every tool's name and schema`, () => {
      const value: unknown = JSON.parse(JSON.stringify(exportCatalog(tools, format).output));
      const back = toolsOf(value, `${format}.json`).map((t, i) => toToolDescriptor(t, `${format}.json tools[${i}]`, i));
      // Against the descriptors as written, not only against toToolDescriptor's reading of them.
      expect(back.map((t) => [t.name, t.description, t.inputSchema])).toStrictEqual([
        ["search_orders", "Find the newest orders of one customer.", schema],
        ["refund_order", "Refund one order in full, once.", schema],
      ]);
      expect(lintSources([{ source: `${format}.json`, value }]).summary.tools).toBe(2);
    });
  }

  it("an object of named descriptors is read only when every value is one", () => {
    expect(() => toolsOf({ a: { description: "x", inputSchema: schema }, b: 1 }, "mixed.json")).toThrow(
      /found an object with keys a, b/,
    );
    expect(() => toolsOf({}, "empty.json")).toThrow(/found an object with keys \(none\)/);
  });
});
