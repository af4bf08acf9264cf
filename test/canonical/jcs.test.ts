import { readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import fc from "fast-check";
import peer from "canonicalize";
import { describe, expect, it } from "vitest";
import { canonicalize, CanonicalJsonError } from "../../src/canonical/jcs.js";
import { testdataAvailable, testdataDir } from "../support/require.js";

const jcs = join(testdataDir, "jcs");
const haveVectors = testdataAvailable("jcs");

/** The message of the error `fn` throws. */
function refusal(fn: () => unknown): string {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(CanonicalJsonError);
    return (err as Error).message;
  }
  throw new Error("expected a refusal");
}

describe.runIf(haveVectors)("RFC 8785 vectors (../shared/testdata/jcs)", () => {
  const names = haveVectors ? readdirSync(join(jcs, "input")).filter((f) => f.endsWith(".json")) : [];

  it("has the six vectors", () => {
    expect(names.sort()).toEqual([
      "arrays.json",
      "french.json",
      "structures.json",
      "unicode.json",
      "values.json",
      "weird.json",
    ]);
  });

  it.each(names)("%s is byte-exact against output/ and outhex/", (name) => {
    const input = JSON.parse(readFileSync(join(jcs, "input", name), "utf8")) as unknown;
    const bytes = Buffer.from(canonicalize(input), "utf8");
    expect(bytes.equals(readFileSync(join(jcs, "output", name)))).toBe(true);
    const hex = readFileSync(join(jcs, "outhex", name.replace(/\.json$/, ".txt")), "utf8")
      .trim()
      .split(/\s+/)
      .join("");
    expect(bytes.toString("hex")).toBe(hex);
  });

  it("all 10,000 lines of es6numbers-10k.txt: IEEE-754 bits → the expected number text", () => {
    const lines = readFileSync(join(jcs, "es6numbers-10k.txt"), "utf8").split("\n").filter(Boolean);
    expect(lines).toHaveLength(10_000);
    const buf = Buffer.alloc(8);
    const wrong: string[] = [];
    for (const line of lines) {
      const [bits, expected] = line.split(",") as [string, string];
      buf.writeBigUInt64BE(BigInt(`0x${bits}`));
      const value = buf.readDoubleBE(0);
      if (canonicalize(value) !== expected) wrong.push(`${bits}: got ${canonicalize(value)}, want ${expected}`);
    }
    expect(wrong).toEqual([]);
  });
});

describe("traps the vectors do not exercise", () => {
  it("-0 is written as 0", () => {
    expect(canonicalize(-0)).toBe("0");
    expect(canonicalize({ a: [-0, 0] })).toBe('{"a":[0,0]}');
  });

  it("keys sort by UTF-16 code units, not code points and not numerically", () => {
    // U+1F600 is D83D DE00 in UTF-16: before U+FB33 by code unit, after it by code point.
    expect(canonicalize({ "\uFB33": 1, "\u{1F600}": 2 })).toBe('{"\u{1F600}":2,"\uFB33":1}');
    expect(canonicalize({ "10": 1, "9": 2, "1": 3, b: 4, B: 5, "": 6 })).toBe('{"":6,"1":3,"10":1,"9":2,"B":5,"b":4}');
  });

  it("writes exponents and integers as ECMAScript does", () => {
    expect(canonicalize([1e21, 1e-7, 123456789012345680000, 0.1 + 0.2, 2 ** 53, -1.5e-300])).toBe(
      "[1e+21,1e-7,123456789012345680000,0.30000000000000004,9007199254740992,-1.5e-300]",
    );
  });

  it("escapes control characters in lowercase \\u form and leaves other text as UTF-8", () => {
    expect(canonicalize('\u0000\u001f\b\t\n\f\r"\\/\u007f\u2028é')).toBe(
      '"\\u0000\\u001f\\b\\t\\n\\f\\r\\"\\\\/\u007f\u2028é"',
    );
  });

  it("refuses NaN and ±Infinity", () => {
    expect(refusal(() => canonicalize({ price: NaN }))).toMatchInlineSnapshot(
      `"$.price: NaN is not a JSON number (RFC 8785 §3.2.2.3 refuses NaN and Infinity); use null or a finite number"`,
    );
    expect(refusal(() => canonicalize([1, Infinity]))).toMatchInlineSnapshot(
      `"$[1]: Infinity is not a JSON number (RFC 8785 §3.2.2.3 refuses NaN and Infinity); use null or a finite number"`,
    );
    expect(refusal(() => canonicalize(-Infinity))).toContain("$: -Infinity is not a JSON number");
  });

  it("refuses lone surrogates in values and in keys", () => {
    expect(refusal(() => canonicalize({ note: ["ok", "bad \uD800 here"] }))).toMatchInlineSnapshot(
      `"$.note[1]: the string contains a lone UTF-16 surrogate, which has no UTF-8 form (RFC 8785 §3.2.2.2); pair it or remove it"`,
    );
    expect(refusal(() => canonicalize("\uDC00"))).toContain("$: the string contains a lone UTF-16 surrogate");
    expect(refusal(() => canonicalize({ "k\uDBFF": 1 }))).toMatchInlineSnapshot(
      `"$["k\\udbff"]: the property name contains a lone UTF-16 surrogate (RFC 8785 §3.2.2.2); rename it"`,
    );
    expect(canonicalize("\uD83D\uDE02")).toBe('"😂"');
    // Property names are cached between calls: a refused name stays refused.
    expect(refusal(() => canonicalize([{ ok: 1 }, { "k\uDBFF": 1 }]))).toContain('$[1]["k\\udbff"]: the property name');
  });

  it("refuses undefined, functions, symbols and bigint instead of dropping them", () => {
    expect(refusal(() => canonicalize({ args: { items: [1, 2, 3, undefined] } }))).toMatchInlineSnapshot(
      `"$.args.items[3]: undefined is not JSON (JSON.stringify would drop it); omit the property or use null"`,
    );
    expect(refusal(() => canonicalize({ f: () => 1 }))).toMatchInlineSnapshot(
      `"$.f: a function is not JSON; pass data, not code"`,
    );
    expect(refusal(() => canonicalize([Symbol("s")]))).toMatchInlineSnapshot(
      `"$[0]: a symbol is not JSON; use a string"`,
    );
    expect(refusal(() => canonicalize({ "amount cents": 10n }))).toMatchInlineSnapshot(
      `"$["amount cents"]: a bigint (10n) is not JSON; use a number within ±2^53 or a decimal string"`,
    );
    expect(refusal(() => canonicalize(undefined))).toContain("$: undefined is not JSON");
    // A hole in a sparse array reads as undefined: refused, not written as null.
    // eslint-disable-next-line no-sparse-arrays
    expect(refusal(() => canonicalize([1, , 3]))).toContain("$[1]: undefined");
  });

  it("refuses objects that are not plain data (Date, Map, class instances)", () => {
    expect(refusal(() => canonicalize({ at: new Date(0) }))).toMatchInlineSnapshot(
      `"$.at: a Date is not plain JSON data; convert it to an object, array or string first"`,
    );
    expect(refusal(() => canonicalize({ m: new Map() }))).toContain("$.m: a Map is not plain JSON data");
    class Order {
      id = 1;
    }
    expect(refusal(() => canonicalize([new Order()]))).toContain("$[0]: a Order is not plain JSON data");
    expect(canonicalize(Object.assign(Object.create(null) as object, { b: 1, a: 2 }))).toBe('{"a":2,"b":1}');
  });

  it("refuses cyclic input, naming where the cycle closes", () => {
    const a: Record<string, unknown> = { name: "a" };
    a.self = { back: [a] };
    expect(refusal(() => canonicalize(a))).toMatchInlineSnapshot(
      `"$.self.back[0]: the value contains itself (a cycle); JSON has no references"`,
    );
    // The same object twice (not a cycle) is fine.
    const shared = { x: 1 };
    expect(canonicalize({ p: shared, q: [shared] })).toBe('{"p":{"x":1},"q":[{"x":1}]}');
  });

  it("names the root it was given", () => {
    expect(refusal(() => canonicalize({ x: NaN }, "$.args"))).toContain("$.args.x: NaN");
  });
});

describe("properties", () => {
  it("agrees with the canonicalize package on any JSON value", () => {
    fc.assert(
      fc.property(fc.jsonValue(), (v) => canonicalize(v) === peer(v)),
      { numRuns: 500 },
    );
  });

  it("is stable: canonical text parses back to the same canonical text, whatever the key order", () => {
    fc.assert(
      fc.property(fc.dictionary(fc.string(), fc.jsonValue()), (o) => {
        const text = canonicalize(o);
        const reversed = Object.fromEntries(Object.entries(o).reverse());
        return canonicalize(JSON.parse(text)) === text && canonicalize(reversed) === text;
      }),
      { numRuns: 300 },
    );
  });
});
