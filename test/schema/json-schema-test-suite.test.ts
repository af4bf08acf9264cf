/**
 * The official JSON-Schema-Test-Suite (draft 2020-12 subset in ../shared/testdata) through
 * toolgate's validator: every case gets its expected verdict, except the known exceptions
 * listed below with the reason.
 */
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import { describe, expect, it } from "vitest";
import { createValidator } from "../../src/schema/validate.js";
import { testdataAvailable, testdataDir } from "../support/require.js";

interface Case {
  description: string;
  data: unknown;
  valid: boolean;
}
interface Group {
  description: string;
  schema: Record<string, unknown>;
  tests: Case[];
}

const root = join(testdataDir, "json-schema-test-suite", "draft2020-12");
const available = testdataAvailable("json-schema-test-suite/draft2020-12");

/**
 * `file › group › case` → what Ajv 8.20 (and so toolgate) does instead, and why. "inverted":
 * the opposite verdict; "refused": the schema does not compile, so the tool is refused with
 * ToolgateError schema_invalid before any call is validated.
 */
const EMPTY_ENUM = {
  outcome: "refused",
  reason: 'Ajv refuses to compile enum: [] ("enum must have non-empty array")',
} as const;
const PROTO_NAMES = {
  outcome: "inverted",
  reason:
    "Ajv's required check reads the property through the prototype chain, so __proto__, toString and constructor count as present on {}",
} as const;
const KNOWN_EXCEPTIONS: Record<string, { outcome: "inverted" | "refused"; reason: string }> = {
  ...Object.fromEntries(
    ["string", "number", "null", "object", "array", "boolean"].map((t) => [
      `enum.json › empty enum › ${t} is invalid`,
      EMPTY_ENUM,
    ]),
  ),
  "optional/float-overflow.json › all integers are multiples of 0.5, if overflow is handled › valid if optional overflow handling is implemented":
    { outcome: "inverted", reason: "1e308 / 0.5 overflows to Infinity in IEEE doubles; the suite marks this optional" },
  "properties.json › properties whose names are Javascript object property names › none of the properties mentioned":
    PROTO_NAMES,
  "required.json › required properties whose names are Javascript object property names › none of the properties mentioned":
    PROTO_NAMES,
  "required.json › required properties whose names are Javascript object property names › __proto__ present":
    PROTO_NAMES,
  "required.json › required properties whose names are Javascript object property names › toString present":
    PROTO_NAMES,
  "required.json › required properties whose names are Javascript object property names › constructor present":
    PROTO_NAMES,
};

function files(dir: string): string[] {
  return readdirSync(dir)
    .flatMap((f) =>
      statSync(join(dir, f)).isDirectory() ? files(join(dir, f)) : f.endsWith(".json") ? [join(dir, f)] : [],
    )
    .sort();
}

describe.runIf(available)("JSON-Schema-Test-Suite draft2020-12", () => {
  const validator = createValidator();
  const list = available ? files(root) : [];
  it("every known exception names a real case", () => {
    const ids = new Set(
      list.flatMap((file) =>
        (JSON.parse(readFileSync(file, "utf8")) as Group[]).flatMap((g) =>
          g.tests.map((c) => `${relative(root, file)} › ${g.description} › ${c.description}`),
        ),
      ),
    );
    expect(Object.keys(KNOWN_EXCEPTIONS).filter((id) => !ids.has(id))).toEqual([]);
  });
  it("has the suite's files", () => {
    expect(list.length).toBeGreaterThanOrEqual(23);
  });
  for (const file of list) {
    const name = relative(root, file);
    describe(name, () => {
      const groups = JSON.parse(readFileSync(file, "utf8")) as Group[];
      for (const group of groups) {
        for (const c of group.tests) {
          const id = `${name} › ${group.description} › ${c.description}`;
          const known = KNOWN_EXCEPTIONS[id];
          it(`${group.description} › ${c.description}${known ? ` (known exception: ${known.reason})` : ""}`, () => {
            const schema =
              typeof group.schema === "object" ? group.schema : ({ allOf: [group.schema] } as Record<string, unknown>);
            const spec = { name: "suite", inputSchema: schema };
            if (known?.outcome === "refused") {
              expect(() => validator.validate(spec, c.data)).toThrow(/schema_invalid|cannot be compiled/);
              return;
            }
            expect(validator.validate(spec, c.data).ok).toBe(known ? !c.valid : c.valid);
          });
        }
      }
    });
  }
});
