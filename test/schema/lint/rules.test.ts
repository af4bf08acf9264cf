/** Each rule on minimal schemas: what fires, what does not, and the exact text of a finding. */
import { describe, expect, it } from "vitest";
import { lintCatalog, lintTool } from "../../../src/schema/lint/index.js";

const ann = { readOnlyHint: true };
const mcp = (inputSchema: unknown, extra: Record<string, unknown> = {}) => ({
  name: "t",
  description: "A tool the linter tests.",
  annotations: ann,
  inputSchema,
  ...extra,
});
const obj = (properties: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({
  type: "object",
  properties,
  required: Object.keys(properties),
  additionalProperties: false,
  ...extra,
});
const str = (description = "A value.") => ({ type: "string", maxLength: 64, description });
const rules = (t: unknown) => lintTool(t).map((f) => `${f.severity} ${f.rule} ${f.pointer}`);

describe("TG001 closed", () => {
  it("names the properties and the fix, nested in items, $defs and union branches too", () => {
    const open = { type: "object", properties: { a: str() }, required: ["a"] };
    const schema = obj(
      {
        list: { type: "array", maxItems: 3, items: open, description: "L." },
        u: {
          description: "U.",
          oneOf: [
            { ...open, properties: { k: { const: 1, description: "k" } }, required: ["k"] },
            { ...open, properties: { k: { const: 2, description: "k" } }, required: ["k"] },
          ],
        },
        r: { $ref: "#/$defs/R", description: "R." },
      },
      { $defs: { R: open } },
    );
    expect(rules(mcp(schema))).toMatchInlineSnapshot(`
      [
        "error TG001 /inputSchema/properties/list/items",
        "error TG001 /inputSchema/properties/u/oneOf/0",
        "error TG001 /inputSchema/properties/u/oneOf/1",
        "error TG001 /inputSchema/$defs/R",
      ]
    `);
    expect(lintTool(mcp({ type: "object", properties: { a: str() }, required: ["a"] }))[0]).toMatchInlineSnapshot(`
      {
        "fix": "add "additionalProperties": false",
        "message": "object with properties (a) does not set additionalProperties: false, so undeclared arguments pass through",
        "pointer": "/inputSchema",
        "rule": "TG001",
        "severity": "error",
        "tool": "t",
      }
    `);
  });
  it("accepts unevaluatedProperties: false and a typed bounded map", () => {
    expect(rules(mcp({ ...obj({ a: str() }), additionalProperties: undefined, unevaluatedProperties: false }))).toEqual(
      [],
    );
    expect(
      rules(
        mcp(obj({ tags: { type: "object", additionalProperties: str(), maxProperties: 5, description: "Tags." } })),
      ),
    ).toEqual([]);
  });
});

describe("TG002 required", () => {
  it("flags a field with no default outside required; downgrades when the description says what absence means", () => {
    const schema = {
      ...obj({ a: str(), b: str("Optional filter; all items when omitted."), c: { ...str(), default: "x" } }),
      required: ["a"],
    };
    expect(rules(mcp({ ...schema, required: [] }))).toEqual([
      "error TG002 /inputSchema/properties/a",
      "warning TG002 /inputSchema/properties/b",
    ]);
    expect(lintTool(mcp({ ...obj({ a: str() }), required: [] })).map((f) => f.message)).toMatchInlineSnapshot(`
      [
        "a has no default and is not in required, and nothing says what a missing a means",
      ]
    `);
  });
  it("catches a description that says required for a field required does not list", () => {
    expect(lintTool(mcp({ ...obj({ owner: str("Repository owner (required)") }), required: [] })))
      .toMatchInlineSnapshot(`
      [
        {
          "fix": "add "owner" to required",
          "message": "the description of owner says it is required, but required does not list it, so the validator lets a call omit it",
          "pointer": "/inputSchema/properties/owner",
          "rule": "TG002",
          "severity": "error",
          "tool": "t",
        },
      ]
    `);
  });
  it("catches required naming an undeclared property of a closed object", () => {
    expect(rules(mcp({ ...obj({ a: str() }), required: ["a", "b"] }))).toEqual(["error TG002 /inputSchema/required"]);
  });
});

describe("TG003 bounded", () => {
  it("numbers need both ends; a ±2^53 bound does not count; enum/const/format/anchored pattern bound strings", () => {
    const schema = obj({
      n: { type: "number", minimum: 0, description: "N." },
      i: { type: "integer", minimum: -9007199254740991, maximum: 9007199254740991, description: "I." },
      e: { type: "string", enum: ["a"], description: "E." },
      d: { type: "string", format: "date", description: "D." },
      p: { type: "string", pattern: "^[a-z]{1,8}$", description: "P." },
      q: { type: "string", pattern: "^[a-z]+$", description: "Q." },
      arr: { type: "array", items: str(), description: "A." },
      map: { type: "object", additionalProperties: { type: "integer", minimum: 0, maximum: 9 }, description: "M." },
      ex: { type: "number", exclusiveMinimum: 0, exclusiveMaximum: 1, description: "X." },
    });
    expect(lintTool(mcp(schema)).map((f) => `${f.pointer}: ${f.message}`)).toMatchInlineSnapshot(`
      [
        "/inputSchema/properties/n: property n is a number with no maximum",
        "/inputSchema/properties/i: property i is an integer with no minimum and maximum (a ±2^53 bound does not count)",
        "/inputSchema/properties/q: property q is a string with no maxLength, enum, const, bounded format or anchored bounded pattern",
        "/inputSchema/properties/arr: property arr is an array with no maxItems",
        "/inputSchema/properties/map/additionalProperties: property map is a map (additionalProperties is a schema) with no maxProperties",
      ]
    `);
  });
});

describe("TG004 units", () => {
  it("asks for the unit in the name and the base of positions", () => {
    const schema = obj({
      timeout: { type: "integer", minimum: 1, maximum: 9, description: "T." },
      timeout_ms: { type: "integer", minimum: 1, maximum: 9, description: "T." },
      maxWaitSeconds: { type: "integer", minimum: 1, maximum: 9, description: "W." },
      line: { type: "integer", minimum: 1, maximum: 9, description: "Line to start at." },
      column: { type: "integer", minimum: 1, maximum: 9, description: "Column, 1-based." },
      size: { type: "string", maxLength: 9, description: "Not a number, no unit needed." },
    });
    expect(lintTool(mcp(schema)).map((f) => `${f.rule} ${f.pointer}: ${f.message} — ${f.fix}`)).toMatchInlineSnapshot(`
      [
        "TG004 /inputSchema/properties/timeout: timeout is a quantity with no unit in its name; seconds, milliseconds and minutes get confused — rename it with its unit, e.g. timeout_ms, and bound its range",
        "TG004 /inputSchema/properties/line: line is a position but its description does not say whether counting starts at 0 or 1 — say it in the description, e.g. "1-based: the first line is 1"",
      ]
    `);
  });
});

describe("TG005 tagged unions", () => {
  const branch = (k: unknown, extra: Record<string, unknown> = {}) =>
    obj({ kind: { const: k, description: "Kind." }, ...extra });
  it("accepts a const discriminator (through $ref too), nullable values and literal lists", () => {
    expect(
      rules(
        mcp(
          obj(
            { u: { description: "U.", oneOf: [branch("file"), { $ref: "#/$defs/D" }] } },
            { $defs: { D: branch("dir") } },
          ),
        ),
      ),
    ).toEqual([]);
    expect(rules(mcp(obj({ u: { description: "U.", anyOf: [str(), { type: "null" }] } })))).toEqual([]);
    expect(rules(mcp(obj({ u: { description: "U.", oneOf: [{ const: "a" }, { const: "b" }] } })))).toEqual([]);
  });
  it("flags duplicate tags, mixed branches, and primitive unions (warning, use a type array)", () => {
    const schema = obj({
      dup: { description: "D.", oneOf: [branch("a"), branch("a")] },
      mixed: { description: "M.", anyOf: [branch("a"), str()] },
      prim: { description: "P.", anyOf: [str(), { type: "integer", minimum: 0, maximum: 1 }] },
    });
    expect(lintTool(mcp(schema)).map((f) => `${f.severity} ${f.pointer}: ${f.message}`)).toMatchInlineSnapshot(`
      [
        "error /inputSchema/properties/dup/oneOf: oneOf of 2 object branches has no discriminator: no property is required in every branch with a distinct const",
        "error /inputSchema/properties/mixed/anyOf: anyOf mixes 1 object and 1 non-object branches, so neither the model nor the validator can tell which one a call fills",
        "warning /inputSchema/properties/prim/anyOf: anyOf of primitive branches (string, integer) instead of one type",
      ]
    `);
  });
});

describe("TG006 side effect", () => {
  it("accepts any MCP hint or a toolgate effect; refuses none or an unknown effect", () => {
    const schema = obj({});
    expect(
      rules({
        name: "t",
        description: "A tool the linter tests.",
        inputSchema: schema,
        annotations: { destructiveHint: true },
      }),
    ).toEqual([]);
    expect(
      rules({ name: "t", description: "A tool the linter tests.", inputSchema: schema, effect: "idempotent" }),
    ).toEqual([]);
    expect(
      rules({ name: "t", description: "A tool the linter tests.", inputSchema: schema, annotations: { title: "T" } }),
    ).toEqual(["error TG006 /annotations"]);
    expect(
      lintTool({ name: "t", description: "A tool the linter tests.", inputSchema: schema, effect: "delete" }).map(
        (f) => f.message,
      ),
    ).toMatchInlineSnapshot(`
      [
        "effect must be one of read, idempotent, write, destructive; found "delete"",
      ]
    `);
  });
});

describe("TG007 untyped bag", () => {
  it("flags open objects, objects without properties and values without a type", () => {
    const schema = obj({
      opts: { type: "object", additionalProperties: true, description: "O." },
      any: { description: "Anything." },
      bag: { type: "object", description: "B." },
    });
    expect(rules(mcp(schema))).toMatchInlineSnapshot(`
      [
        "error TG007 /inputSchema/properties/opts/additionalProperties",
        "error TG007 /inputSchema/properties/any",
        "error TG007 /inputSchema/properties/bag",
      ]
    `);
    expect(rules(mcp(obj({})))).toEqual([]); // a tool without arguments
  });
});

describe("TG008 whole-file rewrite", () => {
  const props = { path: str(), content: { type: "string", maxLength: 99999, description: "All of it." } };
  it("is a warning on write tools only, and not when an exact replacement is offered", () => {
    expect(rules(mcp(obj(props), { annotations: { readOnlyHint: false } }))).toEqual([
      "warning TG008 /inputSchema/properties/content",
    ]);
    expect(rules(mcp(obj(props)))).toEqual([]);
    expect(rules(mcp(obj({ ...props, old_str: str() }), { annotations: { readOnlyHint: false } }))).toEqual([]);
  });
});

describe("TG010 naming and description", () => {
  it("checks the name pattern, the tool description and every property description", () => {
    const t = { name: "bad name!", inputSchema: obj({ a: { type: "string", maxLength: 3 } }), annotations: ann };
    expect(lintTool(t).map((f) => `${f.severity} ${f.pointer}: ${f.message}`)).toMatchInlineSnapshot(`
      [
        "error /name: tool name "bad name!" does not match ^[a-zA-Z0-9_-]{1,64}$",
        "error /description: the tool has no description, so the model must guess when to use it",
        "warning /inputSchema/properties/a: property a has no description",
      ]
    `);
  });
});

describe("descriptor forms", () => {
  it("reads MCP, the bare parameters form, Anthropic's input_schema and OpenAI's function form with pointers into each", () => {
    const schema = { type: "object", properties: { q: { type: "string" } } };
    expect(
      lintTool({ name: "a", description: "A tool the linter tests.", parameters: schema, effect: "read" })[0]!.pointer,
    ).toBe("/parameters");
    expect(
      lintTool({ name: "a", description: "A tool the linter tests.", input_schema: schema, effect: "read" })[0]!
        .pointer,
    ).toBe("/input_schema");
    expect(
      lintTool({
        type: "function",
        function: { name: "a", description: "A tool the linter tests.", parameters: schema },
        effect: "read",
      })[0]!.pointer,
    ).toBe("/function/parameters");
  });
  it("lintCatalog refuses two tools with one name", () => {
    const t = { name: "get", description: "Gets one record by id.", inputSchema: obj({}), annotations: ann };
    expect(
      lintCatalog([t, { ...t, description: "Returns the weather forecast for a city." }]).filter(
        (f) => f.rule === "TG010",
      ),
    ).toMatchInlineSnapshot(`
      [
        {
          "fix": "rename one of them, or merge them into one tool",
          "message": "tools #0 and #1 are both named get, so a call to get is ambiguous",
          "pointer": "/name",
          "rule": "TG010",
          "severity": "error",
          "tool": "get",
        },
      ]
    `);
  });
  it("a tool description under 3 words or 12 characters is a warning; longer prose is not judged", () => {
    const described = (description: string) =>
      lintTool({ ...mcp(obj({})), description })
        .filter((f) => f.rule === "TG010")
        .map((f) => f.message);
    for (const d of ["x", "TODO", "Runs it.", "List files", "Read a file", "   Runs   it   "])
      expect([d, described(d)]).toEqual([
        d,
        [
          expect.stringMatching(
            / is too short to tell the model when to use the tool \(fewer than 3 words or 12 characters\)$/,
          ),
        ],
      ]);
    for (const d of ["Returns one order.", "Read a file from the workspace."])
      expect([d, described(d)]).toEqual([d, []]);
    expect(described("x".repeat(5000))).toEqual(["the description is 5000 characters, sent with every turn"]);
  });
  it("lintCatalog names tools without a name by position", () => {
    expect(
      lintCatalog([{ description: "A tool the linter tests.", inputSchema: obj({}), annotations: ann }]).map(
        (f) => `${f.tool} ${f.rule}`,
      ),
    ).toEqual(["#0 TG010"]);
  });
});
