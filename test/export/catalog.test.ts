import { describe, expect, it } from "vitest";
import { toToolDescriptor } from "../../src/schema/descriptor.js";
import { exportCatalog } from "../../src/export/catalog.js";
import { toAnthropic, toJsonSchema, toMcp, toOpenAI, toVercelAI } from "../../src/export/formats.js";
import { seedListing5 } from "../support/catalogs.js";

const tool = toToolDescriptor({
  name: "search_customer_orders",
  title: "Search orders",
  description: "Find at most 20 newest orders for one customer.",
  inputSchema: {
    $schema: "https://json-schema.org/draft/2020-12/schema",
    type: "object",
    properties: {
      customer_id: { type: "string" },
      status: { type: ["string", "null"], enum: ["pending", "shipped", null] },
    },
    required: ["customer_id", "status"],
    additionalProperties: false,
  },
  annotations: { readOnlyHint: true },
});
const bare = {
  type: "object",
  properties: tool.inputSchema.properties,
  required: ["customer_id", "status"],
  additionalProperties: false,
};

describe("export formats", () => {
  it("MCP: the tools/list shape, schema as published, title and annotations kept", () => {
    expect(toMcp([tool])).toEqual({
      tools: [
        {
          name: tool.name,
          title: "Search orders",
          description: tool.description,
          inputSchema: tool.inputSchema,
          annotations: { readOnlyHint: true },
        },
      ],
    });
  });

  it("JSON Schema: each tool's schemas as documents that name their dialect, 2020-12 where none was named", () => {
    const draft07 = { $schema: "http://json-schema.org/draft-07/schema#", type: "object" };
    const listed = toToolDescriptor({ name: "listed", description: "As tools/list sends it.", inputSchema: bare });
    const old = toToolDescriptor({
      name: "old",
      description: "A draft-07 tool.",
      inputSchema: draft07,
      outputSchema: bare,
    });
    expect(toJsonSchema([tool, listed, old])).toEqual({
      tools: [
        { name: tool.name, inputSchema: tool.inputSchema },
        { name: "listed", inputSchema: { $schema: "https://json-schema.org/draft/2020-12/schema", ...bare } },
        {
          name: "old",
          inputSchema: draft07,
          outputSchema: { $schema: "https://json-schema.org/draft/2020-12/schema", ...bare },
        },
      ],
    });
    expect(exportCatalog([listed], "json-schema")).toEqual({
      output: toJsonSchema([listed]),
      notes: [],
      failed: false,
    });
  });

  it("OpenAI: {type: function, function: {name, description, parameters, strict}} without $schema", () => {
    expect(toOpenAI([tool]).tools).toEqual([
      {
        type: "function",
        function: { name: tool.name, description: tool.description, parameters: bare, strict: false },
      },
    ]);
    expect(toOpenAI([tool], { strict: true }).tools[0]!.function.strict).toBe(true);
  });

  it("Anthropic: {name, description, input_schema}", () => {
    expect(toAnthropic([tool])).toEqual([{ name: tool.name, description: tool.description, input_schema: bare }]);
  });

  it("Vercel AI SDK: {[name]: {description, inputSchema}}", () => {
    expect(toVercelAI([tool])).toEqual({
      search_customer_orders: { description: tool.description, inputSchema: bare },
    });
  });

  it("--strict reports the tools that cannot be strict and emits them with strict: false", () => {
    const r = exportCatalog(seedListing5(), "openai", { strict: true });
    expect(r.failed).toBe(true);
    expect(
      (r.output as { function: { name: string; strict: boolean } }[]).map((t) => [t.function.name, t.function.strict]),
    ).toEqual([
      ["bash_execute", false],
      ["file_view", true],
      ["file_edit", false],
      ["grep_search", false],
    ]);
    expect(r.notes).toMatchInlineSnapshot(`
      [
        "bash_execute: cannot be strict (emitted with strict: false):",
        "  /required: every property must be in required; missing timeout_ms — make each required with a null-able type (e.g. ["string", "null"])",
        "  /properties/command/maxLength: keyword maxLength is not supported in strict mode",
        "  /properties/timeout_ms/default: keyword default is not supported in strict mode; say the default in the description",
        "file_edit: cannot be strict (emitted with strict: false):",
        "  /properties/old_str/minLength: keyword minLength is not supported in strict mode",
        "grep_search: cannot be strict (emitted with strict: false):",
        "  /required: every property must be in required; missing glob — make each required with a null-able type (e.g. ["string", "null"])",
        "  /properties/pattern/maxLength: keyword maxLength is not supported in strict mode",
        "1 of 4 tool(s) can be strict",
      ]
    `);
  });

  it("gbnf returns the grammar text and the gaps as notes", () => {
    const r = exportCatalog(seedListing5(), "gbnf");
    expect(typeof r.output).toBe("string");
    expect((r.output as string).startsWith("# toolgate: tool calls of a catalog of 4 tool(s)")).toBe(true);
    expect(r.notes.at(-1)).toMatchInlineSnapshot(
      `"2 constraint(s) the grammar cannot express (listed above); the rest is exact"`,
    );
  });

  it("refuses a format it does not know (a JavaScript caller), naming the accepted ones", () => {
    expect(() => exportCatalog([tool], "xml" as never)).toThrowErrorMatchingInlineSnapshot(
      `[ToolgateError: format must be one of mcp, openai, anthropic, vercel-ai, gbnf, json-schema; received "xml"]`,
    );
  });

  it("refuses --strict outside openai", () => {
    expect(() => exportCatalog([tool], "anthropic", { strict: true })).toThrowErrorMatchingInlineSnapshot(
      `[ToolgateError: --strict applies to --format openai only; received --format anthropic]`,
    );
  });
});
