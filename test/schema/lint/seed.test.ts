/**
 * The published reference listings (test/schema/fixtures/seed-listing-{1,5}.json) linted as written, and
 * each row of the anti-pattern table in docs/schemas.md producing its rule on a minimal schema.
 */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { lintTool } from "../../../src/schema/lint/index.js";

const fixture = (name: string) =>
  JSON.parse(readFileSync(new URL(`../fixtures/${name}`, import.meta.url), "utf8")) as Record<string, unknown>;
const brief = (tool: unknown) => lintTool(tool).map((f) => `${f.severity} ${f.rule} ${f.tool} ${f.pointer}`);

describe("the reference listings, linted as written", () => {
  it("seed-listing-1.json (file_edit): old_str and new_str carry no bound and the tool declares no side effect", () => {
    expect(brief(fixture("seed-listing-1.json"))).toMatchInlineSnapshot(`
      [
        "error TG003 file_edit /parameters/properties/old_str",
        "error TG003 file_edit /parameters/properties/new_str",
        "error TG006 file_edit ",
      ]
    `);
  });

  it("seed-listing-5.json (four coding tools): unbounded path/old_str/new_str/glob, an offset with no maximum, no side effects", () => {
    const tools = fixture("seed-listing-5.json").tools as unknown[];
    expect(tools.flatMap(brief)).toMatchInlineSnapshot(`
      [
        "error TG006 bash_execute ",
        "warning TG010 bash_execute /parameters/properties/timeout_ms",
        "error TG003 file_view /parameters/properties/path",
        "error TG003 file_view /parameters/properties/offset",
        "error TG006 file_view ",
        "error TG003 file_edit /parameters/properties/path",
        "error TG003 file_edit /parameters/properties/old_str",
        "error TG003 file_edit /parameters/properties/new_str",
        "error TG006 file_edit ",
        "error TG003 grep_search /parameters/properties/path",
        "error TG003 grep_search /parameters/properties/glob",
        "error TG006 grep_search ",
        "warning TG002 grep_search /parameters/properties/glob",
      ]
    `);
  });

  it("seed-listing-5.json with declared effects and bounded strings lints clean (the hardened form)", () => {
    type Prop = { type?: string; maxLength?: number; maximum?: number; description?: string; default?: unknown };
    type Tool = { name: string; effect?: string; parameters: { properties: Record<string, Prop> } };
    const tools = structuredClone(fixture("seed-listing-5.json").tools) as Tool[];
    const effects: Record<string, string> = {
      bash_execute: "write",
      file_view: "read",
      file_edit: "write",
      grep_search: "read",
    };
    for (const t of tools) {
      t.effect = effects[t.name];
      const props = t.parameters.properties;
      for (const p of Object.values(props)) if (p.type === "string") p.maxLength ??= 4096;
      if (props.offset) props.offset.maximum = 1_000_000;
      if (props.timeout_ms) props.timeout_ms.description = "Time bound for the command, milliseconds.";
      if (props.glob) props.glob.default = "*";
    }
    expect(tools.flatMap(brief)).toEqual([]);
  });
});

/** docs/schemas.md, "Shapes that mislead a model" — one minimal schema per row, and the rule it must raise. */
describe("the anti-pattern shapes of docs/schemas.md", () => {
  const tool = (properties: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({
    name: "t",
    description: "A tool the linter tests.",
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false },
    inputSchema: { type: "object", properties, required: Object.keys(properties), additionalProperties: false },
    ...extra,
  });
  const rules = (t: unknown) => lintTool(t).map((f) => `${f.rule} ${f.pointer}`);

  it("untyped argument bag (args: dict) → TG007", () => {
    expect(rules(tool({ args: { type: "object", description: "Arguments." } }))).toEqual([
      "TG007 /inputSchema/properties/args",
    ]);
  });
  it("unbounded input (string with no limit) → TG003", () => {
    expect(rules(tool({ query: { type: "string", description: "Query." } }))).toEqual([
      "TG003 /inputSchema/properties/query",
    ]);
  });
  it("untagged union (anyOf with no discriminator) → TG005", () => {
    const file = {
      type: "object",
      properties: { path: { type: "string", maxLength: 9, description: "p" } },
      required: ["path"],
      additionalProperties: false,
    };
    const dir = {
      type: "object",
      properties: { dir: { type: "string", maxLength: 9, description: "d" } },
      required: ["dir"],
      additionalProperties: false,
    };
    expect(rules(tool({ target: { anyOf: [file, dir], description: "Target." } }))).toEqual([
      "TG005 /inputSchema/properties/target/anyOf",
    ]);
  });
  it("implicit units (timeout: 30) → TG004", () => {
    expect(rules(tool({ timeout: { type: "integer", minimum: 1, maximum: 60, description: "Timeout." } }))).toEqual([
      "TG004 /inputSchema/properties/timeout",
    ]);
  });
  it("whole-file rewrite (content: str) → TG008", () => {
    const t = tool(
      {
        path: { type: "string", maxLength: 1024, description: "Path." },
        content: { type: "string", maxLength: 100000, description: "New file content." },
      },
      { name: "write_file" },
    );
    expect(rules(t)).toEqual(["TG008 /inputSchema/properties/content"]);
  });
  it("each hardened form lints clean", () => {
    const kind = (k: string) => ({
      type: "object",
      properties: {
        kind: { const: k, description: "Kind." },
        path: { type: "string", maxLength: 9, description: "p" },
      },
      required: ["kind", "path"],
      additionalProperties: false,
    });
    expect(
      rules(
        tool({
          query: { type: "string", maxLength: 256, description: "Query." },
          timeout_ms: { type: "integer", minimum: 1, maximum: 60000, description: "Time bound." },
          target: { oneOf: [kind("file"), kind("dir")], description: "Target." },
          old_str: { type: "string", maxLength: 9999, description: "Exact block." },
          new_str: { type: "string", maxLength: 9999, description: "Replacement." },
        }),
      ),
    ).toEqual([]);
  });
});
