/** The validator and the one renderer: exact texts of the observations a model reads. */
import { Ajv2020 } from "ajv/dist/2020.js";
import { describe, expect, it, vi } from "vitest";
import { createValidator } from "../../src/schema/validate.js";
import { renderIssue, renderIssues } from "../../src/schema/issue-text.js";
import type { ObservationIssue } from "../../src/core/observation.js";

/** The order assistant's search_customer_orders (examples/orders/search.ts), with since declared as an ISO date. */
const orders = {
  name: "search_customer_orders",
  inputSchema: {
    $schema: "https://json-schema.org/draft/2020-12/schema",
    type: "object",
    properties: {
      customer_id: { type: "string", maxLength: 64 },
      status: { type: "string", enum: ["pending", "shipped", "delivered", "cancelled"] },
      since: { type: "string", format: "date", description: "ISO-8601 date" },
    },
    required: ["customer_id"],
    additionalProperties: false,
  },
};

const run = (spec: Spec, args: unknown) => {
  const r = createValidator().validate(spec, args);
  if (r.ok) throw new Error(`expected a rejection of ${JSON.stringify(args)}`);
  return r.issues;
};
type Spec = { name: string; inputSchema: Record<string, unknown> };
const text = (args: unknown, spec: Spec = orders) => renderIssues(spec.name, run(spec, args));

describe("the order-search examples", () => {
  it('{"customer_id":"c_7","limit":500} → unknown field: limit, naming the allowed fields', () => {
    expect(text({ customer_id: "c_7", limit: 500 })).toMatchInlineSnapshot(`
      "search_customer_orders was not run: 1 problem with the arguments.
      - unknown field: limit; allowed: customer_id, status, since
      Fix it and call search_customer_orders again; nothing was changed."
    `);
  });
  it("since 3/5/26 against format date → since must be YYYY-MM-DD; received 3/5/26; example 2026-03-05", () => {
    const issues = run(orders, { customer_id: "c_7", since: "3/5/26" });
    expect(issues).toEqual([
      {
        path: "/since",
        code: "invalid_format",
        message: "since must be YYYY-MM-DD",
        expected: "YYYY-MM-DD",
        received: "3/5/26",
        example: "2026-03-05",
      },
    ]);
    expect(renderIssues(orders.name, issues)).toContain(
      "- since must be YYYY-MM-DD; received 3/5/26; example 2026-03-05\n",
    );
  });
  it("a valid call returns the arguments", () => {
    const args = { customer_id: "c_7", status: "shipped" };
    expect(createValidator().validate(orders, args)).toEqual({ ok: true, value: args });
  });
});

describe("issue texts", () => {
  it("unknown field suggests the closest allowed name only when it is close", () => {
    const spec = {
      ...orders,
      inputSchema: {
        ...orders.inputSchema,
        properties: { ...orders.inputSchema.properties, limit: { type: "integer", minimum: 1, maximum: 20 } },
      },
    };
    expect(text({ customer_id: "c", limt: 5, customerId: "x", zzzzzz: 1 }, spec)).toMatchInlineSnapshot(`
      "search_customer_orders was not run: 3 problems with the arguments.
      - unknown field: limt; allowed: customer_id, status, since, limit; did you mean limit?
      - unknown field: customerId; allowed: customer_id, status, since, limit; did you mean customer_id?
      - unknown field: zzzzzz; allowed: customer_id, status, since, limit
      Fix them and call search_customer_orders again; nothing was changed."
    `);
  });
  it("enum misses name the allowed values; a wrong type is reported once", () => {
    expect(text({ customer_id: "c", status: "shiped" })).toMatchInlineSnapshot(`
      "search_customer_orders was not run: 1 problem with the arguments.
      - status must be one of pending, shipped, delivered, cancelled; received shiped; did you mean shipped?
      Fix it and call search_customer_orders again; nothing was changed."
    `);
    expect(text({ customer_id: 7, status: 3 })).toMatchInlineSnapshot(`
      "search_customer_orders was not run: 2 problems with the arguments.
      - customer_id must be a string; received 7 (integer)
      - status must be a string; received 3 (integer)
      Fix them and call search_customer_orders again; nothing was changed."
    `);
  });
  it("missing fields, bounds, array items and nested paths", () => {
    const spec = {
      name: "t",
      inputSchema: {
        type: "object",
        properties: {
          n: { type: "integer", minimum: 1, maximum: 10 },
          tags: {
            type: "array",
            maxItems: 2,
            uniqueItems: true,
            items: { type: "string", pattern: "^[a-z]+$", maxLength: 8 },
          },
          opts: {
            type: "object",
            properties: { depth: { type: "number", exclusiveMinimum: 0 } },
            required: ["depth"],
            additionalProperties: false,
          },
        },
        required: ["n", "opts"],
        additionalProperties: false,
      },
    };
    expect(text({ tags: ["a", "a", "B"], opts: { depth: 0 } }, spec)).toMatchInlineSnapshot(`
      "t was not run: 5 problems with the arguments.
      - n is required: an integer from 1 to 10; example 5
      - tags must have at most 2 items; received 3 items
      - tags[2] must match the pattern ^[a-z]+$; received B; example a
      - tags must not repeat items; items 0 and 1 are equal
      - opts.depth must be greater than 0; received 0
      Fix them and call t again; nothing was changed."
    `);
    expect(text({ n: 11, opts: {} }, spec)).toMatchInlineSnapshot(`
      "t was not run: 2 problems with the arguments.
      - n must be at most 10; received 11; example 10
      - opts.depth is required: a number greater than 0; example 1
      Fix them and call t again; nothing was changed."
    `);
    expect(text([], spec)).toMatchInlineSnapshot(`
      "t was not run: 1 problem with the arguments.
      - arguments must be an object; received [] (array)
      Fix it and call t again; nothing was changed."
    `);
    // Double-encoded arguments (OpenAI's function.arguments is JSON text): say to parse them.
    expect(text('{"n": 1}', spec)).toMatchInlineSnapshot(`
      "t was not run: 1 problem with the arguments.
      - arguments must be an object, and this string holds one as JSON text: send the parsed object, not the string (e.g. JSON.parse an OpenAI tool call's function.arguments first); received "{\\"n\\": 1}" (string)
      Fix it and call t again; nothing was changed."
    `);
    expect(text("not json", spec)).not.toContain("JSON text");
  });
  it("nested unknown fields say where; field names with / and ~ are labelled as written", () => {
    const spec = {
      name: "t",
      inputSchema: {
        type: "object",
        properties: {
          opts: { type: "object", properties: { depth: { type: "integer" } }, additionalProperties: false },
          "a/b~c": { type: "integer" },
        },
        additionalProperties: false,
      },
    };
    expect(run(spec, { opts: { dpth: 1 }, "a/b~c": "x" })).toMatchInlineSnapshot(`
      [
        {
          "code": "unknown_field",
          "example": "depth",
          "expected": "one of depth",
          "message": "unknown field in opts: dpth; allowed: depth",
          "path": "/opts/dpth",
        },
        {
          "code": "invalid_type",
          "expected": "an integer",
          "message": "a/b~c must be an integer",
          "path": "/a~1b~0c",
          "received": ""x" (string)",
        },
      ]
    `);
  });
  it("string lengths count code points, and the received value is cut to a bound", () => {
    const spec = {
      name: "t",
      inputSchema: {
        type: "object",
        properties: { s: { type: "string", maxLength: 3 }, e: { enum: ["a"] } },
        additionalProperties: false,
      },
    };
    expect(createValidator().validate(spec, { s: "😀😀😀" }).ok).toBe(true); // 3 code points, 6 UTF-16 units
    expect(text({ s: "😀😀😀😀" }, spec)).toContain("- s must be at most 3 characters; received 4 characters");
    const issues = run(spec, { e: "😀".repeat(5_000_000) });
    expect(issues[0]!.received).toBe(`${"😀".repeat(80)}… (5000000 characters)`);
  });
});

describe("unions name the branch by its discriminator", () => {
  const branch = (kind: string, props: Record<string, unknown>) => ({
    type: "object",
    properties: { kind: { const: kind }, ...props },
    required: ["kind", ...Object.keys(props)],
    additionalProperties: false,
  });
  const spec = {
    name: "move",
    inputSchema: {
      type: "object",
      properties: {
        target: { oneOf: [branch("file", { path: { type: "string", maxLength: 99 } }), { $ref: "#/$defs/dir" }] },
        note: { anyOf: [{ type: "string", maxLength: 3 }, { type: "null" }] },
        id: {
          anyOf: [
            { type: "string", maxLength: 5 },
            { type: "integer", minimum: 0, maximum: 9 },
          ],
        },
      },
      additionalProperties: false,
      $defs: { dir: branch("dir", { recursive: { type: "boolean" } }) },
    },
  };
  it("reports only the selected branch's errors (inline and through $ref)", () => {
    expect(text({ target: { kind: "file", path: 7 } }, spec)).toContain(
      "- target.path must be a string; received 7 (integer)\n",
    );
    expect(text({ target: { kind: "dir" } }, spec)).toMatchInlineSnapshot(`
      "move was not run: 1 problem with the arguments.
      - target.recursive is required: true or false
      Fix it and call move again; nothing was changed."
    `);
  });
  it("a wrong or missing discriminator is one issue naming the kinds", () => {
    expect(text({ target: { kind: "link" } }, spec)).toMatchInlineSnapshot(`
      "move was not run: 1 problem with the arguments.
      - target.kind must be one of file, dir; received link; example file
      Fix it and call move again; nothing was changed."
    `);
    expect(text({ target: { path: "/a" } }, spec)).toMatchInlineSnapshot(`
      "move was not run: 1 problem with the arguments.
      - target.kind is required: it says which kind of target this is (one of file, dir); example file
      Fix it and call move again; nothing was changed."
    `);
  });
  it("T | null reports T's error; a union of primitives names the types", () => {
    expect(text({ note: "long" }, spec)).toContain("- note must be at most 3 characters; received 4 characters\n");
    expect(text({ id: true }, spec)).toContain("- id must be a string or an integer; received true (boolean)\n");
    expect(text({ id: 99 }, spec)).toContain("- id must be at most 9; received 99; example 9\n");
  });
});

describe("check issues go through the same renderer", () => {
  it("renders a CheckIssue with a non-string received value", () => {
    expect(
      renderIssues("refund", [
        {
          path: "/order_id",
          code: "not_found",
          message: "order_id names no order of this customer",
          received: { id: "o_9" },
          example: "o_1",
        },
      ]),
    ).toMatchInlineSnapshot(`
      "refund was not run: 1 problem with the arguments.
      - order_id names no order of this customer; received {"id":"o_9"}; example o_1
      Fix it and call refund again; nothing was changed."
    `);
  });
  it("lists at most 10 issues and counts the rest", () => {
    const many: ObservationIssue[] = Array.from({ length: 13 }, (_, i) => ({
      path: `/f${i}`,
      code: "x",
      message: `f${i} is wrong`,
    }));
    expect(renderIssues("t", many).split("\n").slice(-3)).toEqual([
      "- f9 is wrong",
      "- … and 3 more",
      "Fix them and call t again; nothing was changed.",
    ]);
  });
});

describe("the verdict and its issues", () => {
  it("builds a refusal's issues on first read, keeps them, and is not changed by a later call", () => {
    const v = createValidator();
    const first = v.validate(orders, { customer_id: "c_7", since: "3/5/26" });
    const second = v.validate(orders, { customer_id: 7 });
    if (first.ok || second.ok) throw new Error("expected two rejections");
    expect(first.issues.map((i) => i.message)).toEqual(["since must be YYYY-MM-DD"]);
    expect(second.issues.map((i) => i.message)).toEqual(["customer_id must be a string"]);
    expect(first.issues).toBe(first.issues);
    expect(JSON.parse(JSON.stringify(first))).toEqual({ ok: false, issues: first.issues });
  });
  it("a received value already cut is rendered as it is, counting the value, not the cut text", () => {
    const spec = {
      name: "t",
      inputSchema: {
        type: "object",
        properties: { n: { type: "integer" }, k: { enum: ["a"] } },
        additionalProperties: false,
      },
    };
    const lines = text({ n: "b".repeat(300), k: "y".repeat(150) }, spec).split("\n");
    expect(lines[1]).toBe(`- n must be an integer; received "${"b".repeat(79)}… (302 characters) (string)`);
    expect(lines[2]).toBe(`- k must be one of a; received ${"y".repeat(80)}… (150 characters)`);
  });
  it('an empty received string is shown as ""', () => {
    expect(
      renderIssue({ path: "/path", code: "invalid_path", message: "path must be an absolute path", received: "" }),
    ).toBe('path must be an absolute path; received ""');
  });
});

describe("compilation", () => {
  it("compiles each schema once and reuses it", () => {
    const spy = vi.spyOn(Ajv2020.prototype, "compile");
    const v = createValidator();
    const spec = { name: "t", inputSchema: { type: "object", properties: {}, additionalProperties: false } };
    for (let i = 0; i < 5; i++) v.validate(spec, {});
    expect(spy).toHaveBeenCalledTimes(1);
    spy.mockRestore();
  });
  it("compiles draft-07 schemas from foreign servers (definitions, array items) and two schemas with one $id", () => {
    const v = createValidator();
    const d07 = {
      name: "t",
      inputSchema: {
        $schema: "http://json-schema.org/draft-07/schema#",
        $id: "https://example.com/tool.json",
        type: "object",
        properties: {
          pair: { type: "array", items: [{ type: "string" }, { $ref: "#/definitions/n" }], additionalItems: false },
        },
        definitions: { n: { type: "integer" } },
      },
    };
    expect(v.validate(d07, { pair: ["a", 1] }).ok).toBe(true);
    expect(v.validate(d07, { pair: ["a", "b"] }).ok).toBe(false);
    const again = { name: "u", inputSchema: { ...d07.inputSchema } };
    expect(v.validate(again, { pair: ["a", 1, 2] }).ok).toBe(false);
  });
  it("a schema Ajv cannot use is refused with schema_invalid, not a crash", () => {
    const v = createValidator();
    expect(() =>
      v.validate({ name: "bad", inputSchema: { type: "object", properties: { a: { $ref: "#/$defs/none" } } } }, {}),
    ).toThrowErrorMatchingInlineSnapshot(
      `[ToolgateError: tool bad: its input schema cannot be compiled: can't resolve reference #/$defs/none from id #. Fix the schema (run \`toolgate lint\` on it).]`,
    );
    expect(() => v.validate({ name: "bad", inputSchema: "x" as never }, {})).toThrow(
      /inputSchema must be a JSON Schema object; received string/,
    );
  });
  it("100,000-deep arguments against a recursive schema are an issue, not a crash", () => {
    const spec = {
      name: "tree",
      inputSchema: {
        $defs: { n: { type: "object", properties: { a: { $ref: "#/$defs/n" } }, additionalProperties: false } },
        $ref: "#/$defs/n",
      },
    };
    let args: unknown = {};
    for (let i = 0; i < 100_000; i++) args = { a: args };
    const r = createValidator().validate(spec, args);
    expect(r.ok ? [] : r.issues.map((i) => i.message)).toEqual(["arguments are nested too deeply to validate"]);
    expect(createValidator().validate(spec, { a: { a: {} } }).ok).toBe(true);
  });
  it("a 10,000-deep nested schema is refused with a clear error, not a crash", () => {
    let inner: Record<string, unknown> = { type: "string", maxLength: 1 };
    for (let i = 0; i < 10_000; i++) inner = { type: "object", properties: { a: inner }, additionalProperties: false };
    expect(() => createValidator().validate({ name: "deep", inputSchema: inner }, {})).toThrow(
      /tool deep: its input schema is nested too deeply to compile/,
    );
  });
});

describe("required fields and examples", () => {
  const spec = {
    name: "file_tool",
    inputSchema: {
      type: "object",
      properties: {
        command: { type: "string", minLength: 1, maxLength: 8192 },
        offset: { type: "integer", minimum: 1, maximum: 100000000 },
        expected_version: { type: "string", pattern: "^([0-9a-f]{64})?$", default: "" },
        lookahead: { type: "string", pattern: "^(?!x)[a-z]+$", default: "" },
      },
      required: ["command", "offset"],
      additionalProperties: false,
    },
  };

  it("a missing field names its type and bounds, with an example when the schema gives or implies one", () => {
    expect(text({}, spec)).toMatchInlineSnapshot(`
      "file_tool was not run: 2 problems with the arguments.
      - command is required: a string of 1 to 8192 characters
      - offset is required: an integer from 1 to 100000000; example 1
      Fix them and call file_tool again; nothing was changed."
    `);
  });

  it("a missing count gets an example a call would use: the middle of a chosen range, rounded (limit 1–500 → 200); a guard-sized range keeps its lower bound", () => {
    const paged = {
      name: "file_view",
      description: "View lines of a file.",
      inputSchema: {
        type: "object",
        properties: {
          offset: { type: "integer", minimum: 1, maximum: 100_000_000 },
          limit: { type: "integer", minimum: 1, maximum: 500 },
          step: { type: "integer", minimum: 0, maximum: 90, multipleOf: 7 },
          depth: { type: "integer", minimum: 1, maximum: 3 },
        },
        required: ["offset", "limit", "step", "depth"],
        additionalProperties: false,
      },
    };
    expect(text({}, paged)).toMatchInlineSnapshot(`
      "file_view was not run: 4 problems with the arguments.
      - offset is required: an integer from 1 to 100000000; example 1
      - limit is required: an integer from 1 to 500; example 200
      - step is required: an integer from 0 to 90; example 0
      - depth is required: an integer from 1 to 3; example 2
      Fix them and call file_view again; nothing was changed."
    `);
  });

  it("an empty default is never shown as an example: one is generated from a simple pattern, else the clause is left out", () => {
    expect(
      renderIssue({
        path: "/a",
        code: "invalid_pattern",
        message: "a must match the pattern ^x?$",
        received: "y",
        example: "",
      }),
    ).toBe("a must match the pattern ^x?$; received y");
    expect(text({ command: "ls", offset: 1, expected_version: "abc", lookahead: "x1" }, spec)).toMatchInlineSnapshot(`
      "file_tool was not run: 2 problems with the arguments.
      - expected_version must match the pattern ^([0-9a-f]{64})?$; received abc; example 0000000000000000000000000000000000000000000000000000000000000000
      - lookahead must match the pattern ^(?!x)[a-z]+$; received x1
      Fix them and call file_tool again; nothing was changed."
    `);
  });
});
