import { describe, expect, it } from "vitest";
import { checkOpenAIStrict } from "../../src/export/openai-strict.js";
import { testdataAvailable } from "../support/require.js";
import { mcpCatalogs, seedListing5 } from "../support/catalogs.js";

const strictWeather = {
  name: "get_weather",
  inputSchema: {
    type: "object",
    properties: {
      location: { type: "string", description: "City" },
      unit: { type: ["string", "null"], enum: ["F", "C", null] },
      when: { anyOf: [{ type: "string", format: "date" }, { $ref: "#/$defs/range" }] },
    },
    required: ["location", "unit", "when"],
    additionalProperties: false,
    $defs: {
      range: {
        type: "object",
        properties: { from: { type: "string" }, to: { type: "string" } },
        required: ["from", "to"],
        additionalProperties: false,
      },
    },
  },
};

describe("checkOpenAIStrict", () => {
  it("passes a schema inside strict mode's documented subset", () => {
    expect(checkOpenAIStrict(strictWeather)).toEqual({ tool: "get_weather", ok: true, problems: [] });
  });

  it("names every problem with its pointer and fix", () => {
    const v = checkOpenAIStrict({
      name: "loose",
      inputSchema: {
        type: "object",
        properties: {
          q: { type: "string", maxLength: 100, format: "uri" },
          n: { type: "integer", default: 3 },
          tags: { type: "array", items: { type: "object", properties: { k: { type: "string" } } }, uniqueItems: true },
          pick: { oneOf: [{ type: "string" }, { type: "number" }] },
        },
        required: ["q"],
        allOf: [],
      },
    });
    expect(v.ok).toBe(false);
    expect(v.problems.map((p) => `${p.pointer}: ${p.message}`)).toMatchInlineSnapshot(`
      [
        "/allOf: keyword allOf is not supported in strict mode",
        "/additionalProperties: additionalProperties must be false; received nothing",
        "/required: every property must be in required; missing n, tags, pick — make each required with a null-able type (e.g. ["string", "null"])",
        "/properties/q/maxLength: keyword maxLength is not supported in strict mode",
        "/properties/q/format: format "uri" is not supported; supported: date-time, time, date, duration, email, hostname, ipv4, ipv6, uuid",
        "/properties/n/default: keyword default is not supported in strict mode; say the default in the description",
        "/properties/tags/uniqueItems: keyword uniqueItems is not supported in strict mode",
        "/properties/tags/items/additionalProperties: additionalProperties must be false; received nothing",
        "/properties/tags/items/required: every property must be in required; missing k — make each required with a null-able type (e.g. ["string", "null"])",
        "/properties/pick/oneOf: keyword oneOf is not supported in strict mode; use anyOf",
      ]
    `);
  });

  it("rejects a root that is not an object", () => {
    expect(checkOpenAIStrict({ name: "u", inputSchema: { anyOf: [{ type: "object" }] } }).problems[0])
      .toMatchInlineSnapshot(`
      {
        "message": "the root must be {"type": "object"}; received type missing with anyOf at the root",
        "pointer": "",
      }
    `);
  });

  it("judges seed-listing-5.json: optional properties, length bounds and a default keep three of four tools from being strict", () => {
    expect(seedListing5().map((t) => [t.name, checkOpenAIStrict(t).problems.map((p) => p.pointer)]))
      .toMatchInlineSnapshot(`
      [
        [
          "bash_execute",
          [
            "/required",
            "/properties/command/maxLength",
            "/properties/timeout_ms/default",
          ],
        ],
        [
          "file_view",
          [],
        ],
        [
          "file_edit",
          [
            "/properties/old_str/minLength",
          ],
        ],
        [
          "grep_search",
          [
            "/required",
            "/properties/pattern/maxLength",
          ],
        ],
      ]
    `);
  });

  it.runIf(testdataAvailable("mcp-catalogs"))("gives verdicts on the real MCP catalogs", () => {
    const rows = mcpCatalogs().map(({ id, tools }) => {
      const verdicts = tools.map(checkOpenAIStrict);
      const reasons: Record<string, number> = {};
      for (const v of verdicts) {
        for (const kind of new Set(
          v.problems.map((p) =>
            p.message
              .replace(/;.*$/, "")
              .replace(/ received .*$/, "")
              .replace(/missing .*$/, "missing …")
              .replace(/keyword \S+/, "keyword K")
              .replace(/format "[^"]*"/, "format F"),
          ),
        )) {
          reasons[kind] = (reasons[kind] ?? 0) + 1;
        }
      }
      return { id, tools: tools.length, strict: verdicts.filter((v) => v.ok).length, reasons };
    });
    expect(rows).toMatchInlineSnapshot(`
      [
        {
          "id": "desktop-commander",
          "reasons": {
            "additionalProperties must be false": 3,
            "every property must be in required": 13,
            "keyword K is not supported in strict mode": 7,
          },
          "strict": 13,
          "tools": 26,
        },
        {
          "id": "everything",
          "reasons": {
            "additionalProperties must be false": 13,
            "every property must be in required": 6,
            "format F is not supported": 1,
            "keyword K is not supported in strict mode": 6,
          },
          "strict": 0,
          "tools": 13,
        },
        {
          "id": "filesystem",
          "reasons": {
            "additionalProperties must be false": 14,
            "every property must be in required": 6,
            "keyword K is not supported in strict mode": 4,
          },
          "strict": 0,
          "tools": 14,
        },
        {
          "id": "github-mcp-server",
          "reasons": {
            "additionalProperties must be false": 117,
            "every property must be in required": 75,
            "keyword K is not supported in strict mode": 20,
          },
          "strict": 0,
          "tools": 117,
        },
        {
          "id": "memory",
          "reasons": {
            "additionalProperties must be false": 9,
          },
          "strict": 0,
          "tools": 9,
        },
        {
          "id": "playwright",
          "reasons": {
            "additionalProperties must be false": 1,
            "every property must be in required": 20,
            "keyword K is not supported in strict mode": 4,
          },
          "strict": 5,
          "tools": 25,
        },
      ]
    `);
  });
});
