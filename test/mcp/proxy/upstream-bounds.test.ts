/** The bounds on what an upstream lists: which icons pass, and which URIs a template's pattern matches. */
import { describe, expect, it } from "vitest";
import { checkedIcons, MAX_ICONS } from "../../../src/mcp/proxy/upstream-bounds.js";
import { templatePattern } from "../../../src/mcp/proxy/pass-through.js";

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

describe("templatePattern", () => {
  it("matches a simple expression within one path segment, a reserved one across, and a query", () => {
    const simple = templatePattern("demo://r/{id}");
    expect(simple.test("demo://r/7")).toBe(true);
    expect(simple.test("demo://r/7/more")).toBe(false);
    expect(simple.test("demo://x/7")).toBe(false);
    expect(templatePattern("file:///{+path}").test("file:///a/b/c.txt")).toBe(true);
    const query = templatePattern("search://q{?term,limit}");
    expect(query.test("search://q?term=a&limit=2")).toBe(true);
    expect(query.test("search://q")).toBe(true);
    expect(templatePattern("a.b://{x}").test("aXb://1")).toBe(false);
  });
});
