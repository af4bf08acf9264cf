import { describe, expect, it } from "vitest";
import { closeOpenObjects } from "../../src/schema/close.js";
import { createValidator } from "../../src/schema/validate.js";

describe("closeOpenObjects (the proxy's closed copy of a foreign schema)", () => {
  it("closes open objects at the top, in properties, items, $defs and anyOf branches, and names where", () => {
    const schema = {
      type: "object",
      properties: {
        filter: { type: "object", properties: { status: { type: "string" } } },
        rows: { type: "array", items: { type: "object", properties: { id: { type: "string" } } } },
        pick: { anyOf: [{ type: "object", properties: { a: { type: "number" } } }, { type: "string" }] },
      },
      $defs: { Ref: { type: "object", properties: { x: { type: "number" } } } },
    };
    const before = JSON.stringify(schema);
    const { schema: closed, closed: where } = closeOpenObjects(schema);
    expect(where.sort()).toEqual([
      "/",
      "/$defs/Ref",
      "/properties/filter",
      "/properties/pick/anyOf/0",
      "/properties/rows/items",
    ]);
    expect(closed).toMatchObject({
      additionalProperties: false,
      properties: { filter: { additionalProperties: false }, rows: { items: { additionalProperties: false } } },
    });
    expect(JSON.stringify(schema)).toBe(before); // the upstream's schema is not changed
  });

  it("leaves what the upstream declared open, and objects whose siblings would count as unknown", () => {
    const cases = [
      { type: "object", properties: { a: { type: "string" } }, additionalProperties: true },
      { type: "object", properties: { a: { type: "string" } }, additionalProperties: { type: "string" } },
      { type: "object", properties: { a: { type: "string" } }, patternProperties: { "^x-": {} } },
      { type: "object", properties: { a: { type: "string" } }, unevaluatedProperties: false },
      { type: "object", properties: { a: { type: "string" } }, allOf: [{ properties: { b: { type: "string" } } }] },
      { type: "object", properties: { a: { type: "string" } }, $ref: "#/$defs/B", $defs: {} },
      { type: "object" }, // a map with no properties: nothing to close against
    ];
    for (const schema of cases) expect(closeOpenObjects(schema).closed).toEqual([]);
  });

  it("does not close allOf branches on their own: a call valid against the upstream stays valid", () => {
    const schema = {
      allOf: [
        { type: "object", properties: { a: { type: "string" } } },
        { type: "object", properties: { b: { type: "string" } } },
      ],
    };
    const { schema: closed, closed: where } = closeOpenObjects(schema);
    expect(where).toEqual([]);
    const r = createValidator().validate(
      { name: "t", inputSchema: { $schema: "https://json-schema.org/draft/2020-12/schema", ...closed } },
      { a: "x", b: "y" },
    );
    expect(r.ok).toBe(true);
  });

  it("makes an unknown field a validation issue that names it and the allowed ones", () => {
    const { schema } = closeOpenObjects({
      type: "object",
      properties: { customer_id: { type: "string" }, status: { type: "string" } },
      required: ["customer_id"],
    });
    const r = createValidator().validate(
      { name: "search_orders", inputSchema: schema },
      { customer_id: "c_7", limit: 500 },
    );
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.issues.map((i) => i.message).join("\n")).toContain("unknown field: limit");
  });

  it("survives deep nesting (left as declared past 64 levels) and non-schema values", () => {
    let deep: Record<string, unknown> = { type: "object", properties: { leaf: { type: "string" } } };
    for (let i = 0; i < 200; i++) deep = { type: "object", properties: { n: deep } };
    expect(closeOpenObjects(deep).closed.length).toBe(65);
    expect(closeOpenObjects({ properties: { a: true, b: false } }).closed).toEqual(["/"]);
  });
});
