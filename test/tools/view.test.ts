import { afterAll, describe, expect, it } from "vitest";
import { countTokens } from "../../src/observation/tokens.js";
import { contentVersion } from "../../src/tools/text.js";
import { DEFAULT_VIEW_LIMITS, viewPath } from "../../src/tools/view.js";
import { makeWorkspace, refusalText, stable } from "./fixtures.js";

const s = makeWorkspace("view");
afterAll(() => s.cleanup());

const lines = (n: number) => Array.from({ length: n }, (_, i) => `line ${i + 1}`).join("\n") + "\n";

const refusal = (p: Promise<unknown>): Promise<string> => refusalText(p, s);

describe("file_view", () => {
  const ten = s.write("ten.txt", lines(10));

  it("numbers lines from 1, gives the total and the exact next offset", async () => {
    const r = await viewPath(s.ws, { path: ten, offset: 1, limit: 3 });
    expect(r.output).toMatchObject({
      total_lines: 10,
      first_line: 1,
      last_line: 3,
      next_offset: 4,
      version: contentVersion(lines(10)),
    });
    expect(r.next).toEqual({ arguments: { path: ten, offset: 4, limit: 3 }, hint: "7 more lines" });
    expect(stable(r.text!, s).replace(/[0-9a-f]{64}/, "<sha>")).toMatchInlineSnapshot(`
      "<tmp>/ws/ten.txt · lines 1-3 of 10 · LF line endings
      1	line 1
      2	line 2
      3	line 3
      [7 more lines: call file_view with offset 4]"
    `);
  });

  it("says 1 more line, in the singular", async () => {
    const r = await viewPath(s.ws, { path: ten, offset: 1, limit: 9 });
    expect(r.next?.hint).toBe("1 more line");
    expect(r.text!.split("\n").at(-1)).toMatchInlineSnapshot(`"[1 more line: call file_view with offset 10]"`);
  });

  it("ends exactly at the last line without a next offset (range at the end edge)", async () => {
    const r = await viewPath(s.ws, { path: ten, offset: 8, limit: 3 });
    expect(r.output).toMatchObject({ first_line: 8, last_line: 10, next_offset: null });
    expect(r.next).toBeUndefined();
    expect(r.text).toContain("10\tline 10\n[end of file]");
    const one = await viewPath(s.ws, { path: ten, offset: 10, limit: 500 });
    expect(one.output).toMatchObject({ first_line: 10, last_line: 10, next_offset: null });
  });

  it("refuses an offset past the end, naming the line count", async () => {
    expect(await refusal(viewPath(s.ws, { path: ten, offset: 11, limit: 5 }))).toMatchInlineSnapshot(
      `"offset_out_of_range: offset 11 is past the end of <tmp>/ws/ten.txt, which has 10 lines; use an offset from 1 to 10"`,
    );
  });

  it("shows CRLF files without the carriage returns and says so", async () => {
    const p = s.write("crlf.txt", "a\r\nb\r\n");
    const r = await viewPath(s.ws, { path: p, offset: 1, limit: 10 });
    expect(r.output).toMatchObject({ total_lines: 2, line_endings: "CRLF", content: "1\ta\n2\tb" });
  });

  it("counts a last line without a final newline", async () => {
    const p = s.write("nofinal.txt", "a\nb");
    const r = await viewPath(s.ws, { path: p, offset: 2, limit: 10 });
    expect(r.output).toMatchObject({ total_lines: 2, content: "2\tb", next_offset: null });
  });

  it("answers an empty file with 0 lines", async () => {
    const p = s.write("empty.txt", "");
    const r = await viewPath(s.ws, { path: p, offset: 1, limit: 10 });
    expect(r.output).toMatchObject({ total_lines: 0, next_offset: null });
    expect(stable(r.text!, s)).toContain("is empty (0 lines)");
  });

  it("cuts long lines with a marker", async () => {
    const p = s.write("long.txt", "x".repeat(1500) + "\nshort\n");
    const r = await viewPath(s.ws, { path: p, offset: 1, limit: 2 });
    expect(r.output).toMatchObject({ lines_cut: 1 });
    expect(r.text).toContain("x… [line cut: 500 more characters]\n2\tshort");
  });

  it("ends a window early on its token bound, with the exact next offset", async () => {
    const p = s.write(
      "wide.txt",
      Array.from(
        { length: 100 },
        (_, i) => `const value${i} = compute(${i}, "a fairly long string literal number ${i}");`,
      ).join("\n"),
    );
    const r = await viewPath(s.ws, { path: p, offset: 1, limit: 500 }, { ...DEFAULT_VIEW_LIMITS, window_tokens: 300 });
    const out = r.output as { last_line: number; next_offset: number };
    expect(out.last_line).toBeLessThan(100);
    expect(out.next_offset).toBe(out.last_line + 1);
    expect(countTokens(r.text!)).toBeLessThan(300 + 100); // + the header (path, 64-hex version) and the footer
  });

  it("shows invalid UTF-8 as U+FFFD", async () => {
    const p = s.write("latin1.txt", Buffer.from([0x63, 0x61, 0x66, 0xe9, 0x0a]));
    const r = await viewPath(s.ws, { path: p, offset: 1, limit: 1 });
    expect(r.output).toMatchObject({ content: "1\tcaf\uFFFD" });
  });

  it("refuses a binary file", async () => {
    const p = s.write("blob.bin", Buffer.from([0x7f, 0x45, 0x4c, 0x46, 0x00, 0x01]));
    expect(await refusal(viewPath(s.ws, { path: p, offset: 1, limit: 1 }))).toMatchInlineSnapshot(
      `"binary_file: <tmp>/ws/blob.bin is a binary file (NUL byte at offset 4, 6 bytes); file_view shows text only: inspect it with bash_execute, e.g. \`file <tmp>/ws/blob.bin\` or \`xxd <tmp>/ws/blob.bin | head\`"`,
    );
  });

  it("answers a directory with a short listing", async () => {
    s.write("dir/b.txt", "b");
    s.write("dir/a.txt", "a");
    s.write("dir/sub/c.txt", "c");
    const r = await viewPath(s.ws, { path: `${s.root}/dir`, offset: 1, limit: 2 });
    expect(r.output).toMatchObject({
      kind: "directory",
      total_entries: 3,
      entries: ["a.txt", "b.txt"],
      next_offset: 3,
    });
    const rest = await viewPath(s.ws, { path: `${s.root}/dir`, offset: 3, limit: 2 });
    expect(rest.output).toMatchObject({ entries: ["sub/"], next_offset: null });
  });

  it("refuses a missing file with a way forward", async () => {
    expect(await refusal(viewPath(s.ws, { path: `${s.root}/nope.txt`, offset: 1, limit: 1 }))).toMatchInlineSnapshot(
      `"not_found: path <tmp>/ws/nope.txt does not exist; list its directory with file_view or find files with grep_search"`,
    );
  });

  it("views a 10 MB file by window", async () => {
    const big = s.write("big.txt", lines(1_000_000));
    const r = await viewPath(s.ws, { path: big, offset: 999_999, limit: 5 });
    expect(r.output).toMatchObject({
      total_lines: 1_000_000,
      first_line: 999_999,
      last_line: 1_000_000,
      content: " 999999\tline 999999\n1000000\tline 1000000",
    });
  });
});
