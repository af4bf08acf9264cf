/** A missing field whose schema is a union (nullable, anyOf, oneOf) or a const still says what to send. */
import { describe, expect, it } from "vitest";
import { createValidator } from "../../src/schema/validate.js";
import { renderIssues } from "../../src/schema/render.js";

const spec = {
  name: "t",
  inputSchema: {
    type: "object",
    properties: {
      nick: { anyOf: [{ type: "string", maxLength: 20 }, { type: "null" }] },
      either: { anyOf: [{ type: "string", maxLength: 10 }, { type: "integer", minimum: 0, maximum: 5 }] },
      shape: { oneOf: [{ type: "object", properties: { r: { type: "number" } } }, { type: "object", properties: { w: { type: "number" } } }] },
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
