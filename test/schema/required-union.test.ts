/** A missing union field still says what to send; counts in "received" agree in number. */
import { describe, expect, it } from "vitest";
import { createValidator } from "../../src/schema/validate.js";
import { renderIssues } from "../../src/schema/issue-text.js";

const spec = {
  name: "t",
  inputSchema: {
    type: "object",
    properties: {
      nick: { anyOf: [{ type: "string", maxLength: 20 }, { type: "null" }] },
      either: {
        anyOf: [
          { type: "string", maxLength: 10 },
          { type: "integer", minimum: 0, maximum: 5 },
        ],
      },
      shape: {
        oneOf: [
          { type: "object", properties: { r: { type: "number" } } },
          { type: "object", properties: { w: { type: "number" } } },
        ],
      },
      mode: { const: "fast" },
      deep: { anyOf: [{ anyOf: [{ type: "string", maxLength: 3 }] }, { type: "null" }] },
    },
    required: ["nick", "either", "shape", "mode", "deep"],
    additionalProperties: false,
  },
};

describe("a missing union field", () => {
  it("names every branch's type and bounds", () => {
    const r = createValidator().validate(spec, {});
    if (r.ok) throw new Error("expected a rejection");
    expect(renderIssues(spec.name, r.issues)).toMatchInlineSnapshot(`
      "t was not run: 5 problems with the arguments.
      - nick is required: a string of at most 20 characters or null
      - either is required: a string of at most 10 characters or an integer from 0 to 5
      - shape is required: an object
      - mode is required: exactly fast; example fast
      - deep is required: a string of at most 3 characters or null
      Fix them and call t again; nothing was changed."
    `);
  });
});

describe("counts in received", () => {
  it("say 1 character, 1 item, 1 field in the singular", () => {
    const counted = {
      name: "t",
      inputSchema: {
        type: "object",
        properties: {
          s: { type: "string", minLength: 3, maxLength: 9 },
          a: { type: "array", minItems: 2, maxItems: 3, items: { type: "integer" } },
          m: { type: "object", minProperties: 2, maxProperties: 4, additionalProperties: { type: "integer" } },
        },
        required: ["s", "a", "m"],
        additionalProperties: false,
      },
    };
    const r = createValidator().validate(counted, { s: "x", a: [1], m: { k: 1 } });
    if (r.ok) throw new Error("expected a rejection");
    expect(r.issues.map((i) => `${i.path}: ${i.received}`)).toEqual(["/s: 1 character", "/a: 1 item", "/m: 1 field"]);
  });
});
