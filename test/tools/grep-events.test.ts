import { describe, expect, it } from "vitest";
import { RgEventReader, type ReaderOptions } from "../../src/tools/grep-events.js";

const event = (path: string, line: number, text: string, start: number, matched: string) =>
  JSON.stringify({
    type: "match",
    data: {
      path: { text: path },
      lines: { text: text + "\n" },
      line_number: line,
      absolute_offset: 0,
      submatches: [{ match: { text: matched }, start, end: start + Buffer.byteLength(matched) }],
    },
  }) + "\n";
const begin = (path: string) => JSON.stringify({ type: "begin", data: { path: { text: path } } }) + "\n";
const options = (o: Partial<ReaderOptions> = {}): ReaderOptions => ({
  first: 0,
  count: 100,
  maxMatches: 1000,
  lineBytes: 4096,
  textChars: 40,
  ...o,
});

function read(stream: string | Buffer, o: Partial<ReaderOptions> = {}, chunk = 65536): RgEventReader {
  const bytes = Buffer.isBuffer(stream) ? stream : Buffer.from(stream);
  const reader = new RgEventReader(options(o));
  for (let i = 0; i < bytes.length && !reader.stopped; i += chunk) reader.push(bytes.subarray(i, i + chunk));
  if (!reader.stopped) reader.end();
  return reader;
}

describe("RgEventReader", () => {
  const stream =
    begin("/ws/a.ts") +
    event("/ws/a.ts", 1, "const needle = 1;", 6, "needle") +
    event("/ws/a.ts", 3, "ééé needle", 7, "needle") +
    begin("/ws/b.ts") +
    event("/ws/b.ts", 2, "needle();", 0, "needle");

  it("reads match events, counting columns in characters, whatever the chunking (one byte at a time too)", () => {
    for (const chunk of [1, 3, 7, 65536]) {
      const r = read(stream, {}, chunk);
      expect([r.matches, r.kept]).toEqual([
        3,
        [
          { path: "/ws/a.ts", line: 1, column: 7, text: "const needle = 1;" },
          { path: "/ws/a.ts", line: 3, column: 5, text: "ééé needle" },
          { path: "/ws/b.ts", line: 2, column: 1, text: "needle();" },
        ],
      ]);
    }
  });

  it("keeps only the page's matches and counts the rest; stops past maxMatches", () => {
    const page = read(stream, { first: 1, count: 1 });
    expect([page.matches, page.kept.map((m) => m.line)]).toEqual([3, [3]]);
    const bounded = read(stream, { maxMatches: 2 });
    expect([bounded.matches, bounded.stopped, bounded.kept.length]).toEqual([2, true, 2]);
  });

  it("streams a match on a line far past the bound: holds at most the bound, reports it cut with a marker, the column exact", () => {
    const text = "x".repeat(3_000_000) + "needle" + "y".repeat(2_000_000);
    const r = read(event("/ws/min.js", 1, text, 3_000_000, "needle") + event("/ws/b.ts", 2, "needle();", 0, "needle"), {
      lineBytes: 1 << 16,
    });
    expect(r.matches).toBe(2);
    expect(r.kept[0]).toEqual({
      path: "/ws/min.js",
      line: 1,
      column: 3_000_001,
      text: "…needle… [line of 5000006 bytes cut]",
    });
    expect(r.kept[1]).toMatchObject({ path: "/ws/b.ts", column: 1 });
    expect(r.peakBytes).toBeLessThanOrEqual((1 << 16) + 65536 + 3 * 64 * 1024);
  });

  it("shows the window around a match inside the streamed line's head, and says the column counts bytes when it cannot count characters", () => {
    const early = read(event("/ws/a", 4, "ab needle " + "z".repeat(100_000), 3, "needle"), { lineBytes: 1024 });
    expect(early.kept[0]).toEqual({
      path: "/ws/a",
      line: 4,
      column: 4,
      text: `ab needle ${"z".repeat(30)}… [line of 100010 bytes cut]`,
    });
    const wide = "é".repeat(100_000);
    const late = read(event("/ws/u", 1, wide + "needle", 200_000, "needle"), { lineBytes: 1024 });
    expect(late.kept[0]).toEqual({
      path: "/ws/u",
      line: 1,
      column: 200_001,
      text: "…needle… [line of 200006 bytes cut; column counted in bytes]",
    });
  });

  it("counts a long match outside the page without parsing it, and skips long events of other kinds", () => {
    const long = event("/ws/min.js", 1, "q".repeat(200_000) + "needle", 200_000, "needle");
    const other = JSON.stringify({ type: "context", data: { lines: { text: "c".repeat(200_000) } } }) + "\n";
    const r = read(other + long + event("/ws/b", 2, "needle", 0, "needle"), { first: 1, count: 5, lineBytes: 1024 });
    expect([r.matches, r.kept.map((m) => m.path)]).toEqual([2, ["/ws/b"]]);
    expect(r.peakBytes).toBeLessThanOrEqual(1024 + 65536);
  });

  it("decodes a path ripgrep gives as bytes (not UTF-8) in a long event too", () => {
    const raw =
      JSON.stringify({
        type: "match",
        data: {
          path: { bytes: Buffer.from("/ws/f\xff").toString("base64") },
          lines: { text: "n".repeat(5000) + "\n" },
          line_number: 9,
          absolute_offset: 0,
          submatches: [{ match: { text: "n" }, start: 0, end: 1 }],
        },
      }) + "\n";
    const r = read(raw, { lineBytes: 1024 });
    expect(r.kept[0]).toMatchObject({ path: "/ws/fÿ", line: 9, column: 1 });
  });
});
