/** The bounds on what an upstream lists: which icons pass, and which URIs a template's pattern matches. */
import { describe, expect, it } from "vitest";
import { checkedIcons, MAX_ICONS } from "../../../src/mcp/proxy/upstream-bounds.js";
import { templateMatcher } from "../../../src/mcp/proxy/pass-through.js";

function icons(list: unknown): { kept: string[] | undefined; dropped: string[] } {
  const dropped: string[] = [];
  const kept = checkedIcons(list, (why) => dropped.push(why))?.map((i) => i.src);
  return { kept, dropped };
}

describe("checkedIcons", () => {
  it("keeps https: and data:image URIs with their known fields, and drops other schemes and types", () => {
    const checked = checkedIcons(
      [{ src: "https://e.com/a.png", mimeType: "image/png", sizes: ["48x48", "any"], theme: "light", extra: "x" }],
      () => {},
    );
    expect(checked).toEqual([
      { src: "https://e.com/a.png", mimeType: "image/png", sizes: ["48x48", "any"], theme: "light" },
    ]);
    expect(
      icons([
        { src: "http://e.com/a.png" },
        { src: "JavaScript:alert(1)" },
        { src: "/relative.png" },
        { src: "data:image/svg+xml;base64,PHN2Zz4=" },
        { src: "data:;base64,AAAA" },
        { src: "https://e.com/\u202eevil.png" },
        { src: "https://e.com/a.png", mimeType: "text/html" },
        { src: "https://e.com/a.png", sizes: ["big"] },
        { src: "https://e.com/a.png", theme: "neon" },
        "not an icon",
      ]),
    ).toEqual({
      kept: ["data:image/svg+xml;base64,PHN2Zz4="],
      dropped: [
        'icon 1 left out (a "http": URI; only https: or data: pass)',
        'icon 2 left out (a "javascript": URI; only https: or data: pass)',
        "icon 3 left out (a relative URI; only https: or data: pass)",
        'icon 5 left out (a data: URI of type "", not image/*)',
        "icon 6 left out (a URI holding control or invisible characters)",
        "icon 7 left out (a mimeType that is not image/*)",
        'icon 8 left out (sizes that are not a few "WxH" or "any")',
        'icon 9 left out (a theme not "light" or "dark")',
        "icon 10 left out (not an object with a string src)",
      ],
    });
  });

  it("keeps at most MAX_ICONS, and says so for each one past them", () => {
    const many = Array.from({ length: MAX_ICONS + 2 }, (_, i) => ({ src: `https://e.com/${i}.png` }));
    const { kept, dropped } = icons(many);
    expect(kept).toHaveLength(MAX_ICONS);
    expect(dropped).toEqual([
      `icon ${MAX_ICONS + 1} left out (past the first ${MAX_ICONS})`,
      `icon ${MAX_ICONS + 2} left out (past the first ${MAX_ICONS})`,
    ]);
    expect(icons("nope")).toEqual({ kept: undefined, dropped: ["icons is not an array"] });
  });
});

describe("templateMatcher", () => {
  it("matches a simple expression within one path segment, a reserved one across, and a query", () => {
    const simple = templateMatcher("demo://r/{id}");
    expect(simple("demo://r/7")).toBe(true);
    expect(simple("demo://r/")).toBe(true);
    expect(simple("demo://r/7/more")).toBe(false);
    expect(simple("demo://x/7")).toBe(false);
    expect(templateMatcher("file:///{+path}")("file:///a/b/c.txt")).toBe(true);
    const query = templateMatcher("search://q{?term,limit}");
    expect(query("search://q?term=a&limit=2")).toBe(true);
    expect(query("search://q")).toBe(true);
    expect(query("search://qx")).toBe(false);
    expect(templateMatcher("a.b://{x}")("aXb://1")).toBe(false);
    const two = templateMatcher("u://{a}-{b}/{+rest}");
    expect(two("u://x-y-z/p/q")).toBe(true);
    expect(two("u://x/y-z/p")).toBe(false);
    expect(templateMatcher("u://{a")("u://{a")).toBe(true);
    expect(templateMatcher("u://{a")("u://b")).toBe(false);
  });

  it("answers at once for a hostile template of many expressions (a regular expression of it backtracked for minutes)", () => {
    // "x" then 400 expressions then "y": as a backtracking pattern, 8 of them took 21 s on a 40-character URI.
    const hostile = templateMatcher(`x${"{a}".repeat(400)}y`);
    const uri = `x${"a".repeat(2_000)}`;
    expect(hostile(uri)).toBe(false);
    expect(hostile(`${uri}y`)).toBe(true);
    const reserved = templateMatcher(`x${"{+a}b".repeat(200)}y`);
    expect(reserved(`x${"b".repeat(2_000)}`)).toBe(false);
    expect(reserved(`x${"b".repeat(2_000)}y`)).toBe(true);
  });
});
