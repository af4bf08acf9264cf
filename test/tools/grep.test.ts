import { afterAll, describe, expect, it } from "vitest";
import { DEFAULT_GREP_LIMITS, grepSearch } from "../../src/tools/grep.js";
import { binaryAvailable } from "../support/require.js";
import { makeWorkspace, refusalText, stable } from "./fixtures.js";

const s = makeWorkspace("grep");
afterAll(() => s.cleanup());

const refusal = (p: Promise<unknown>): Promise<string> => refusalText(p, s);

describe.runIf(binaryAvailable("rg"))("grep_search", () => {
  s.write("b.ts", "const needle = 1;\nlet other = 2;\nneedle();\n");
  s.write("a.ts", "// needle in a\n");
  s.write("sub/c.md", "needle\n");
  s.write("ignored/x.ts", "needle\n");
  s.write(".gitignore", "ignored/\n");
  s.write("wide.txt", "x".repeat(500) + "needle" + "y".repeat(500) + "\n");
  s.write("unicode.txt", "ééé needle\n");
  for (let i = 0; i < 5; i++) s.write(`many/f${i}.txt`, "hit\nhit\nhit\n");

  it("returns { path, line, column, text } sorted by path then line, respecting .gitignore", async () => {
    const r = await grepSearch(s.ws, { pattern: "needle", path: s.root, glob: "*.ts" });
    expect(r.output).toMatchObject({ total: 3, next_cursor: null });
    expect((r.output as { matches: unknown[] }).matches).toEqual([
      { path: `${s.root}/a.ts`, line: 1, column: 4, text: "// needle in a" },
      { path: `${s.root}/b.ts`, line: 1, column: 7, text: "const needle = 1;" },
      { path: `${s.root}/b.ts`, line: 3, column: 1, text: "needle();" },
    ]);
    expect(stable(r.text!, s)).toMatchInlineSnapshot(`
      "3 matching lines under <tmp>/ws; showing 1-3:
      <tmp>/ws/a.ts:1:4: // needle in a
      <tmp>/ws/b.ts:1:7: const needle = 1;
      <tmp>/ws/b.ts:3:1: needle();"
    `);
  });

  it("counts columns in characters and cuts long lines around the match", async () => {
    const r = await grepSearch(s.ws, { pattern: "needle", path: s.root, glob: "*.txt" });
    const [uni, wide] = (r.output as { matches: { column: number; text: string }[] }).matches;
    expect(uni).toMatchObject({ column: 5, text: "ééé needle" });
    expect(wide!.column).toBe(501);
    expect(wide!.text.length).toBeLessThanOrEqual(DEFAULT_GREP_LIMITS.text_chars + 2);
    expect(wide!.text).toContain("needle");
  });

  it("caps a page and continues with the cursor", async () => {
    const limits = { ...DEFAULT_GREP_LIMITS, page: 4 };
    const first = await grepSearch(s.ws, { pattern: "hit", path: `${s.root}/many` }, limits);
    expect(first.output).toMatchObject({ total: 15, cursor: 0, next_cursor: 4 });
    expect(first.next?.arguments).toEqual({ pattern: "hit", path: `${s.root}/many`, cursor: 4 });
    expect(first.truncated).toEqual({ omitted: 11, unit: "matches" });
    const last = await grepSearch(s.ws, { pattern: "hit", path: `${s.root}/many`, cursor: 12 }, limits);
    expect(last.output).toMatchObject({ total: 15, cursor: 12, next_cursor: null });
    expect(
      (last.output as { matches: { path: string; line: number }[] }).matches.map((m) => [m.path.slice(-6), m.line]),
    ).toEqual([
      ["f4.txt", 1],
      ["f4.txt", 2],
      ["f4.txt", 3],
    ]);
  });

  it("ends a page early on its token bound, with the exact next cursor", async () => {
    const r = await grepSearch(
      s.ws,
      { pattern: "hit", path: `${s.root}/many` },
      { ...DEFAULT_GREP_LIMITS, page_tokens: 60 },
    );
    const out = r.output as { matches: unknown[]; next_cursor: number; total: number };
    expect(out.matches.length).toBeGreaterThan(0);
    expect(out.matches.length).toBeLessThan(15);
    expect(out.next_cursor).toBe(out.matches.length);
  });

  it("stops ripgrep past max_matches and says the total is a lower bound", async () => {
    const r = await grepSearch(
      s.ws,
      { pattern: "hit", path: `${s.root}/many` },
      { ...DEFAULT_GREP_LIMITS, page: 2, max_matches: 5 },
    );
    expect(r.output).toMatchObject({ total: 5, total_is_lower_bound: true, next_cursor: 2 });
    expect(stable(r.text!, s).split("\n")[0]).toMatchInlineSnapshot(
      `"More than 5 matching lines under <tmp>/ws/many (search stopped there: narrow the pattern, path or glob); showing 1-2:"`,
    );
  });

  it("answers no matches as an empty result, not an error (rg exits 1)", async () => {
    const r = await grepSearch(s.ws, { pattern: "absent_zzz", path: s.root });
    expect(r.output).toMatchObject({ total: 0, matches: [] });
    expect(stable(r.text!, s)).toMatchInlineSnapshot(`"No matches for "absent_zzz" under <tmp>/ws."`);
  });

  it("returns ripgrep's own explanation of an invalid regex", async () => {
    expect(await refusal(grepSearch(s.ws, { pattern: "foo(", path: s.root }))).toMatchInlineSnapshot(`
      "invalid_pattern: ripgrep refused the search: regex parse error:
          foo(
             ^
      error: unclosed group
      pattern is a Rust regex: to find any of ( ) [ ] { } . * + ? | ^ $ \\ as plain text, put a backslash before it (foo\\( finds the text foo(), then call grep_search again."
    `);
  });

  it("searches one file", async () => {
    const r = await grepSearch(s.ws, { pattern: "other", path: `${s.root}/b.ts` });
    expect(r.output).toMatchObject({ total: 1, matches: [{ line: 2, column: 5 }] });
  });

  it("refuses a missing ripgrep with what to install", async () => {
    expect(
      await refusal(
        grepSearch(s.ws, { pattern: "x", path: s.root }, { ...DEFAULT_GREP_LIMITS, binary: "/nonexistent/rg" }),
      ),
    ).toMatchInlineSnapshot(
      `"search_unavailable: grep_search needs ripgrep, and /nonexistent/rg was not found; install it (apt-get install -y ripgrep)"`,
    );
  });
});
