import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Ajv2020 } from "ajv/dist/2020.js";
import { describe, expect, it } from "vitest";
import { toToolDescriptor, type ToolDescriptor } from "../../../src/schema/descriptor.js";
import { gbnfAccepts, parseGbnf } from "../../support/gbnf-check.js";
import { toGbnf } from "../../../src/export/gbnf/grammar.js";
import { toMcpTool } from "../../../src/mcp/server/listing.js";
import { createCodingCatalog } from "../../../src/tools/catalog.js";
import { testdataAvailable } from "../../support/require.js";
import { mcpCatalogs } from "../../support/catalogs.js";

const call = (name: string, args: unknown, indent?: number) => JSON.stringify({ name, arguments: args }, null, indent);

describe("toGbnf on the built-in coding catalog", () => {
  const tools = createCodingCatalog({ workspace: mkdtempSync(join(tmpdir(), "tg-econ-gbnf-")) }).map((s, i) =>
    toToolDescriptor(toMcpTool(s), "tool", i),
  );
  const { grammar, gaps } = toGbnf(tools);
  const rules = parseGbnf(grammar);
  const accepts = (text: string) => gbnfAccepts(rules, text);

  it("admits valid calls, compact and pretty-printed", () => {
    expect(accepts(call("bash_execute", { command: "npm test -- --run" }))).toBe(true);
    expect(accepts(call("bash_execute", { command: 'echo "tab\\there"\n', timeout_ms: 60000 }, 2))).toBe(true);
    expect(accepts(call("file_view", { path: "/ws/src/a.ts", offset: 1, limit: 200 }))).toBe(true);
    expect(accepts(call("file_edit", { path: "/ws/a.ts", old_str: "a", new_str: "" }))).toBe(true);
    expect(accepts(call("grep_search", { pattern: "TODO", path: "/ws" }, 2))).toBe(true);
  });

  it("rejects an unknown tool, an unknown property, a missing required one and a wrong type", () => {
    expect(accepts(call("rm_rf", { path: "/" }))).toBe(false);
    expect(accepts(call("bash_execute", { command: "ls", dry_run: true }))).toBe(false);
    expect(accepts(call("file_edit", { path: "/ws/a.ts", new_str: "b" }))).toBe(false);
    expect(accepts(call("bash_execute", { command: "ls", timeout_ms: "30s" }))).toBe(false);
    expect(accepts(call("bash_execute", { command: "ls", timeout_ms: 1.5 }))).toBe(false);
    expect(accepts(call("bash_execute", { command: "ls", timeout_ms: 999 }))).toBe(false);
    expect(accepts(call("bash_execute", { command: "ls", timeout_ms: 300001 }))).toBe(false);
    expect(accepts(call("file_view", { path: "/ws/a", offset: 0, limit: 10 }))).toBe(false);
    expect(accepts(`{"name": "bash_execute", "arguments": {"command": "ls"}`)).toBe(false);
    expect(accepts(`{"name": "bash_execute", "arguments": {"command": "ls",}}`)).toBe(false);
  });

  it("reports what it cannot express", () => {
    expect(gaps.map((g) => `${g.tool} ${g.pointer}: ${g.message}`)).toMatchInlineSnapshot(`
      [
        "bash_execute /properties/command/maxLength: maxLength 8192 is above 64; not enforced",
        "file_view /properties/path/maxLength: maxLength 1024 is above 64; not enforced",
        "file_edit /properties/path/maxLength: maxLength 1024 is above 64; not enforced",
        "file_edit /properties/old_str/maxLength: maxLength 100000 is above 64; not enforced",
        "file_edit /properties/new_str/maxLength: maxLength 100000 is above 64; not enforced",
        "grep_search /properties/pattern/maxLength: maxLength 512 is above 64; not enforced",
        "grep_search /properties/path/maxLength: maxLength 1024 is above 64; not enforced",
        "grep_search /properties/glob/maxLength: maxLength 256 is above 64; not enforced",
      ]
    `);
  });
});

describe("toGbnf max_repeat", () => {
  const tool = toToolDescriptor({
    name: "open",
    inputSchema: {
      type: "object",
      properties: { path: { type: "string", maxLength: 1024 } },
      required: ["path"],
      additionalProperties: false,
    },
  });

  it("writes larger length bounds as repetition when asked", () => {
    const wide = toGbnf([tool], { max_repeat: 1024 });
    expect(wide.gaps).toEqual([]);
    const rules = parseGbnf(wide.grammar);
    expect(gbnfAccepts(rules, call("open", { path: "a".repeat(1024) }))).toBe(true);
    expect(gbnfAccepts(rules, call("open", { path: "a".repeat(1025) }))).toBe(false);
    expect(toGbnf([tool]).gaps.map((g) => g.message)).toEqual(["maxLength 1024 is above 64; not enforced"]);
  });

  it("rejects a bound that is not a count", () => {
    expect(() => toGbnf([tool], { max_repeat: -1 })).toThrowErrorMatchingInlineSnapshot(
      `[ToolgateError: max_repeat must be an integer ≥ 0; received -1]`,
    );
  });
});

/** A schema using every expressible construct; for it the grammar and Ajv must agree on every call. */
const exact: ToolDescriptor = {
  name: "plan_trip",
  description: "",
  inputSchema: {
    type: "object",
    properties: {
      mode: { enum: ["car", "train", 3, null] },
      seats: { type: "integer", minimum: -5, exclusiveMaximum: 120 },
      ticket: { type: "string", pattern: '^[A-Z]{2}-[0-9]{1,4}( \\("x"\\))?$' },
      version: { const: 2 },
      code: { type: "string", minLength: 2, maxLength: 3 },
      stops: { type: "array", items: { $ref: "#/$defs/stop" }, minItems: 1, maxItems: 3 },
      note: { type: ["string", "null"] },
      flags: { type: "array", items: { type: "boolean" } },
      meta: { type: "object", additionalProperties: { type: "integer" } },
      pick: {
        anyOf: [
          { type: "number" },
          { type: "object", properties: { kind: { const: "x" } }, required: ["kind"], additionalProperties: false },
        ],
      },
    },
    required: ["mode", "code", "stops"],
    additionalProperties: false,
    $defs: {
      stop: {
        type: "object",
        properties: { city: { type: "string" }, then: { $ref: "#/$defs/stop" } },
        required: ["city"],
        additionalProperties: false,
      },
    },
  },
};

describe("toGbnf agrees with a JSON Schema validator where the schema is expressible", () => {
  const { grammar, gaps } = toGbnf([exact]);
  const rules = parseGbnf(grammar);
  const validate = new Ajv2020({ strict: false }).compile(exact.inputSchema);
  const samples: unknown[] = [
    { mode: "car", code: "ab", stops: [{ city: "Oslo" }] },
    {
      mode: null,
      version: 2,
      code: "abc",
      stops: [{ city: "A", then: { city: "B", then: { city: "C" } } }],
      note: null,
    },
    {
      mode: 3,
      code: "xy",
      stops: [{ city: "A" }, { city: "B" }, { city: "C" }],
      flags: [true, false],
      meta: { a: 1, b: -2 },
      pick: 1.5e3,
    },
    { mode: "train", code: "é€", stops: [{ city: "A" }], pick: { kind: "x" } },
    { mode: "train", code: "ab", stops: [{ city: "A" }], note: 'free text "quoted" \u0001' },
    { mode: "bus", code: "ab", stops: [{ city: "A" }] },
    { mode: "car", version: 3, code: "ab", stops: [{ city: "A" }] },
    { mode: "car", code: "a", stops: [{ city: "A" }] },
    { mode: "car", code: "abcd", stops: [{ city: "A" }] },
    { mode: "car", code: "ab", stops: [] },
    { mode: "car", code: "ab", stops: [{ city: "A" }, { city: "B" }, { city: "C" }, { city: "D" }] },
    { mode: "car", code: "ab", stops: [{ town: "A" }] },
    { mode: "car", code: "ab", stops: [{ city: "A", then: { city: 1 } }] },
    { mode: "car", code: "ab" },
    { code: "ab", stops: [{ city: "A" }] },
    { mode: "car", code: "ab", stops: [{ city: "A" }], extra: 1 },
    { mode: "car", code: "ab", stops: [{ city: "A" }], meta: { a: 1.5 } },
    { mode: "car", code: "ab", stops: [{ city: "A" }], pick: { kind: "y" } },
    { mode: "car", code: "ab", stops: [{ city: "A" }], flags: [1] },
    { mode: "car", code: "ab", stops: [{ city: "A" }], note: 5 },
    { mode: "car", seats: -5, code: "ab", stops: [{ city: "A" }] },
    { mode: "car", seats: 119, code: "ab", stops: [{ city: "A" }] },
    { mode: "car", seats: 120, code: "ab", stops: [{ city: "A" }] },
    { mode: "car", seats: -6, code: "ab", stops: [{ city: "A" }] },
    { mode: "car", seats: 0, ticket: "AB-12", code: "ab", stops: [{ city: "A" }] },
    { mode: "car", ticket: 'ZZ-9999 ("x")', code: "ab", stops: [{ city: "A" }] },
    { mode: "car", ticket: "ab-12", code: "ab", stops: [{ city: "A" }] },
    { mode: "car", ticket: "AB-12345", code: "ab", stops: [{ city: "A" }] },
  ];

  it("has nothing to report for it", () => {
    expect(gaps).toEqual([]);
  });

  it.each(samples.map((s, i) => [i, s] as const))("sample %i: grammar and Ajv agree", (_i, args) => {
    const valid = validate(args);
    expect(gbnfAccepts(rules, call("plan_trip", args))).toBe(valid);
    expect(gbnfAccepts(rules, call("plan_trip", args, 2))).toBe(valid);
  });

  it("accepts both kinds of sample", () => {
    const verdicts = samples.map((s) => validate(s));
    expect(verdicts.filter(Boolean).length).toBe(9);
  });
});

describe("toGbnf on schemas found in the wild", () => {
  it("widens what it cannot express and says so", () => {
    const { gaps } = toGbnf([
      toToolDescriptor({
        name: "wild",
        inputSchema: {
          type: "object",
          properties: {
            when: { type: "string", pattern: "^\\d{4}$", format: "date" },
            n: { type: "number", minimum: 0, multipleOf: 2 },
            one: { oneOf: [{ type: "string" }, { type: "integer" }] },
            all: { allOf: [{ type: "string" }] },
            many: { type: "array", maxItems: 1000, uniqueItems: true },
            ref: { $ref: "https://example.com/schema" },
          },
        },
      }),
    ]);
    expect(gaps.map((g) => `${g.pointer}: ${g.message}`)).toMatchInlineSnapshot(`
      [
        "/additionalProperties: the object is open, but the grammar admits only its declared properties",
        "/properties/when/format: format "date" is not enforced together with a pattern",
        "/properties/n/minimum: minimum on a number cannot be expressed; any number is admitted",
        "/properties/n/multipleOf: multipleOf on a number cannot be expressed; any number is admitted",
        "/properties/one/oneOf: oneOf's exactly-one rule cannot be expressed; branches are alternatives as in anyOf",
        "/properties/all/allOf: allOf cannot be expressed; the grammar ignores it",
        "/properties/many/uniqueItems: uniqueItems cannot be expressed; ignored",
        "/properties/many/maxItems: maxItems 1000 is above 64; not enforced",
        "/properties/ref/$ref: $ref https://example.com/schema is not a local #/$defs/… reference that resolves; any value is admitted",
      ]
    `);
  });

  it.runIf(testdataAvailable("mcp-catalogs"))(
    "writes a grammar for every real MCP catalog that parses, and records the gaps",
    () => {
      const rows = mcpCatalogs().map(({ id, tools }) => {
        const { grammar, gaps } = toGbnf(tools);
        const rules = parseGbnf(grammar);
        return `${id}: ${rules.size} rules, ${gaps.length} gaps in ${new Set(gaps.map((g) => g.tool)).size} of ${tools.length} tools`;
      });
      expect(rows).toMatchInlineSnapshot(`
      [
        "desktop-commander: 201 rules, 3 gaps in 1 of 26 tools",
        "everything: 61 rules, 12 gaps in 9 of 13 tools",
        "filesystem: 71 rules, 14 gaps in 13 of 14 tools",
        "github-mcp-server: 1273 rules, 241 gaps in 116 of 117 tools",
        "memory: 29 rules, 13 gaps in 8 of 9 tools",
        "playwright: 201 rules, 1 gaps in 1 of 25 tools",
      ]
    `);
    },
  );

  it.runIf(testdataAvailable("mcp-catalogs"))(
    "admits a real call of the memory server and refuses a malformed one",
    () => {
      const memory = mcpCatalogs().find((c) => c.id === "memory")!;
      const rules = parseGbnf(toGbnf(memory.tools).grammar);
      const good = call("create_entities", {
        entities: [{ name: "Ada", entityType: "person", observations: ["wrote the first program"] }],
      });
      expect(gbnfAccepts(rules, good)).toBe(true);
      expect(gbnfAccepts(rules, call("create_entities", { entities: [{ name: "Ada", observations: [] }] }))).toBe(
        false,
      );
    },
  );
});
