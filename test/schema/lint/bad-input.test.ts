/** Schemas found in the wild must never crash or hang the linter: each bad input is a clear finding. */
import { describe, expect, it } from "vitest";
import { lintCatalog, lintTool } from "../../../src/schema/lint/index.js";

const tool = (inputSchema: unknown, extra: Record<string, unknown> = {}) => ({
  name: "t",
  description: "A tool the linter tests.",
  annotations: { readOnlyHint: true },
  inputSchema,
  ...extra,
});
const text = (t: unknown) => lintTool(t).map((f) => `${f.severity} ${f.rule} ${f.pointer}: ${f.message}`);

describe("bad input", () => {
  it("a non-object schema", () => {
    expect(text(tool("string"))).toMatchInlineSnapshot(`
      [
        "error TG000 /inputSchema: the input schema must be a JSON Schema object; found string",
      ]
    `);
    expect(text(tool({ type: "string", maxLength: 3 }))).toMatchInlineSnapshot(`
      [
        "error TG000 /inputSchema/type: tool arguments are an object, but the input schema has type "string"",
      ]
    `);
    expect(text(tool({ type: "object", properties: { a: 42 }, required: ["a"], additionalProperties: false })))
      .toMatchInlineSnapshot(`
      [
        "error TG000 /inputSchema/properties/a: a schema must be an object or a boolean; found number",
      ]
    `);
  });

  it("a descriptor that is not an object, and one with no schema", () => {
    expect(text(null)).toMatchInlineSnapshot(`
      [
        "error TG000 : a tool descriptor must be an object; found null",
      ]
    `);
    expect(text({ name: "t", description: "A tool the linter tests.", effect: "read" })).toMatchInlineSnapshot(`
      [
        "error TG000 : the tool has no input schema (inputSchema, parameters or input_schema)",
      ]
    `);
  });

  it("a $ref that points nowhere, and a remote $ref", () => {
    const schema = {
      type: "object",
      properties: {
        a: { $ref: "#/$defs/missing", description: "A." },
        b: { $ref: "https://example.com/s.json", description: "B." },
      },
      required: ["a", "b"],
      additionalProperties: false,
    };
    expect(text(tool(schema))).toMatchInlineSnapshot(`
      [
        "error TG000 /inputSchema/properties/a/$ref: $ref "#/$defs/missing" points nowhere in this schema",
        "warning TG000 /inputSchema/properties/b/$ref: $ref "https://example.com/s.json" is not a local reference; the linter did not follow it",
      ]
    `);
  });

  it("an output schema must be usable: an object whose $refs resolve", () => {
    const input = { type: "object", properties: {}, additionalProperties: false };
    expect(text(tool(input, { outputSchema: { type: "object", properties: { a: { $ref: "#/$defs/gone" } } } })))
      .toMatchInlineSnapshot(`
      [
        "error TG000 /outputSchema/properties/a/$ref: $ref "#/$defs/gone" points nowhere in this schema",
      ]
    `);
    expect(text(tool(input, { outputSchema: [] }))).toMatchInlineSnapshot(`
      [
        "error TG000 /outputSchema: the output schema must be a JSON Schema object; found an array",
      ]
    `);
    expect(text(tool(input, { outputSchema: { type: "object", properties: { open: { type: "object" } } } }))).toEqual(
      [],
    );
  });

  it("a recursive schema (draft-07 definitions, a ref cycle and a self-reference to #)", () => {
    const schema = {
      $schema: "http://json-schema.org/draft-07/schema#",
      type: "object",
      properties: {
        tree: { $ref: "#/definitions/node", description: "Tree." },
        loop: { $ref: "#/definitions/a", description: "L." },
        self: { $ref: "#", description: "S." },
      },
      required: ["tree", "loop", "self"],
      additionalProperties: false,
      definitions: {
        node: {
          type: "object",
          properties: {
            children: { type: "array", maxItems: 4, items: { $ref: "#/definitions/node" }, description: "C." },
          },
          required: ["children"],
          additionalProperties: false,
        },
        a: { $ref: "#/definitions/b" },
        b: { $ref: "#/definitions/a" },
      },
    };
    expect(text(tool(schema))).toEqual([]);
  });

  it("a 10,000-deep nested schema: one finding at the depth cap, no stack overflow", () => {
    let inner: Record<string, unknown> = { type: "string", maxLength: 1, description: "leaf" };
    for (let i = 0; i < 10_000; i++)
      inner = {
        type: "object",
        properties: { a: inner },
        required: ["a"],
        additionalProperties: false,
        description: "level",
      };
    const findings = lintTool(tool(inner));
    expect(findings.map((f) => `${f.rule} ${f.message}`)).toEqual([
      "TG000 the schema is nested deeper than 64 levels; nothing below this point was linted",
    ]);
    expect(findings[0]!.pointer).toBe("/inputSchema" + "/properties/a".repeat(64));
  });

  it("a 10,000-deep nested schema parsed from JSON text", () => {
    const json =
      '{"type":"object","properties":{"a":'.repeat(10_000) + '{"type":"string","maxLength":1}' + "}}".repeat(10_000);
    expect(() => lintTool(tool(JSON.parse(json)))).not.toThrow();
  });

  it("a 5 MB description: a warning with its size, not a crash or a slow regex", () => {
    const big = "x".repeat(5 * 1024 * 1024);
    const schema = {
      type: "object",
      properties: { a: { type: "string", maxLength: 3, description: big } },
      required: [],
      additionalProperties: false,
    };
    expect(text(tool(schema, { description: big }))).toMatchInlineSnapshot(`
      [
        "error TG002 /inputSchema/properties/a: a has no default and is not in required, and nothing says what a missing a means",
        "warning TG010 /inputSchema/properties/a: the description of a is 5242880 characters",
        "warning TG010 /description: the description is 5242880 characters, sent with every turn",
        "warning TG011 /description: the text is 5242880 characters, more than anyone reviews, so instructions can hide in it",
        "warning TG011 /inputSchema/properties/a/description: the text is 5242880 characters, more than anyone reviews, so instructions can hide in it",
      ]
    `);
  });

  it("a catalog that is not an array is a finding, not a TypeError", () => {
    expect(lintCatalog({ tools: [] } as never).map((f) => `${f.severity} ${f.rule} ${f.tool}: ${f.message}`)).toEqual([
      "error TG000 (catalog): a catalog must be an array of tool descriptors; found an object with keys tools",
    ]);
  });

  it("garbage in every keyword position never throws", () => {
    const weird = {
      type: 7,
      properties: [],
      required: "a",
      additionalProperties: "no",
      items: 3,
      anyOf: {},
      oneOf: [null, 1, "x"],
      $defs: null,
      $ref: 5,
      enum: "x",
      pattern: 9,
      maxLength: "10",
    };
    expect(() => lintTool(tool(weird))).not.toThrow();
    expect(() =>
      lintTool(tool({ type: "object", properties: { a: { anyOf: [{ $ref: "#/x" }, { $ref: "#/y" }] } } })),
    ).not.toThrow();
  });
});
