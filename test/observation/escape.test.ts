import { describe, expect, it } from "vitest";
import {
  escapeUntrusted,
  firstUnsafe,
  jsonForDisplay,
  shownValue,
  unsafeIdReason,
} from "../../src/observation/escape.js";

const ESC = "\x1b";

describe("escapeUntrusted", () => {
  it("shows C0/C1 controls, DEL, bidi controls and invisible characters as \\u{XXXX}", () => {
    const cases: Array<[string, string]> = [
      [`${ESC}[2J`, "\\u{001B}[2J"],
      [`${ESC}]52;c;ZXZpbA==\x07`, "\\u{001B}]52;c;ZXZpbA==\\u{0007}"],
      ["a\rb\tc\x7fd\x85e\x9bf", "a\\u{000D}b\\u{0009}c\\u{007F}d\\u{0085}e\\u{009B}f"],
      [
        "\u202eevil\u202c \u2066x\u2069 \u200f\u200e\u061c",
        "\\u{202E}evil\\u{202C} \\u{2066}x\\u{2069} \\u{200F}\\u{200E}\\u{061C}",
      ],
      [
        "a\u200bb\u200dc\u2060d\ufeffe\u00adf\u3164g\ufe0fh\u{e0041}i\u2028j",
        "a\\u{200B}b\\u{200D}c\\u{2060}d\\u{FEFF}e\\u{00AD}f\\u{3164}g\\u{FE0F}h\\u{E0041}i\\u{2028}j",
      ],
      ["lone \ud800 surrogate", "lone \\u{D800} surrogate"],
    ];
    for (const [raw, shown] of cases) expect(escapeUntrusted(raw)).toBe(shown);
  });

  it("leaves ordinary text alone (the same string), and keeps newlines only when asked", () => {
    const plain = "src/naïve café/中文 😀 — fine: «ok» [x]";
    expect(escapeUntrusted(plain)).toBe(plain);
    expect(escapeUntrusted("one\ntwo")).toBe("one\\u{000A}two");
    expect(escapeUntrusted(`one\ntwo${ESC}`, { newlines: true })).toBe("one\ntwo\\u{001B}");
    expect(escapeUntrusted(`1\tone\n2\ttwo\r`, { newlines: true })).toBe("1\\u{0009}one\n2\\u{0009}two\\u{000D}");
    expect(escapeUntrusted(`1\tone\n2\ttwo\r`, { newlines: true, tabs: true })).toBe("1\tone\n2\ttwo\\u{000D}");
  });

  it("names the first unsafe character of an id", () => {
    expect(firstUnsafe("abc")).toBeNull();
    expect(firstUnsafe("ab\u202ec")).toEqual({ char: "\u202e", index: 2 });
    expect(unsafeIdReason("traj\u202eevil")).toBe(
      'must not contain control, bidi or invisible characters; received U+202E at index 4 in "traj\\u{202E}evil"; use letters, digits and punctuation, e.g. a UUID',
    );
  });
});

describe("jsonForDisplay", () => {
  it("is JSON for the same value with nothing a terminal acts on", () => {
    const value = { t: `x${ESC}[8m\u202e\u0085\u200b\u{e0041}`, n: 1, nested: ["\ud800"] };
    const text = jsonForDisplay(value, 2);
    expect(JSON.parse(text)).toEqual(value);
    expect(firstUnsafe(text.replaceAll("\n", ""))).toBeNull();
    expect(jsonForDisplay({ a: "plain" })).toBe('{"a":"plain"}');
  });
});

describe("shownValue", () => {
  it("shows a short string as its JSON, a long one cut inside its quotes", () => {
    expect(shownValue("file:///a")).toBe('"file:///a"');
    const long = shownValue("x".repeat(500), 20);
    expect(long).toBe(`"${"x".repeat(17)}…"`);
  });

  it("shows control, bidi and invisible characters visibly, in strings and in other values", () => {
    expect(shownValue("a\u001b[2Jb\u202ec")).toBe('"a\\u001b[2Jb\\u{202E}c"');
    expect(shownValue({ k: "\u2066x" })).toBe('{"k":"\\u{2066}x"}');
  });

  it("cuts a long non-string value, and names one nested too deep or absent", () => {
    expect(
      shownValue(
        Array.from({ length: 100 }, (_, i) => i),
        30,
      ),
    ).toBe(`${JSON.stringify([...Array(100).keys()]).slice(0, 27)}…`);
    let deep: unknown = 1;
    for (let i = 0; i < 20_000; i++) deep = [deep];
    expect(shownValue(deep)).toBe("a value nested too deeply to show");
    const cycle: Record<string, unknown> = {};
    cycle.self = cycle;
    expect([shownValue(10n), shownValue(cycle)]).toEqual([
      "a value JSON has no form for",
      "a value JSON has no form for",
    ]);
    expect(shownValue(undefined)).toBe("nothing");
  });
});
