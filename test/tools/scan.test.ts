import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import {
  SCAN_SLICE,
  decodeLines,
  lineNumbers,
  lineStart,
  lineStats,
  occurrences,
  versionOf,
} from "../../src/tools/scan.js";
import { lineCount, lineEndings, linesFrom, linesFromOffset } from "../../src/tools/text.js";

/** The plain indexOf loop the windowed search must agree with. */
function naive(text: string, needle: string): number[] {
  const found: number[] = [];
  for (let i = text.indexOf(needle); i !== -1; i = text.indexOf(needle, i + needle.length)) found.push(i);
  return found;
}

describe("windowed scans agree with the plain ones", () => {
  it("occurrences: matches on, across and just after window edges, overlapping candidates, none", async () => {
    const base = "x".repeat(3 * SCAN_SLICE + 17).split("");
    for (const at of [0, SCAN_SLICE - 3, SCAN_SLICE - 1, SCAN_SLICE, 2 * SCAN_SLICE - 2, 3 * SCAN_SLICE + 10])
      base.splice(at, 4, ..."abab");
    const text = base.join("");
    for (const needle of [
      "ab",
      "abab",
      "ba",
      "bab",
      "x".repeat(5000),
      "zz",
      text.slice(SCAN_SLICE - 10, SCAN_SLICE + 10),
    ]) {
      expect(await occurrences(text, needle), needle.slice(0, 20)).toEqual(naive(text, needle));
    }
    expect(await occurrences("aaaa", "aa")).toEqual([0, 2]);
    expect(await occurrences("a", "aa")).toEqual([]);
  });

  it("line statistics, line starts and line numbers", async () => {
    const text = Array.from({ length: 300_000 }, (_, i) => `line ${i}${i % 7 === 0 ? "\r" : ""}`).join("\n");
    expect(await lineStats(text)).toEqual({ count: lineCount(text), endings: lineEndings(text) });
    for (const t of ["", "a", "a\n", "a\r\nb\r\n", "\n\n"])
      expect(await lineStats(t), JSON.stringify(t)).toEqual({ count: lineCount(t), endings: lineEndings(t) });
    expect(linesFromOffset(text, await lineStart(text, 250_001), 3)).toEqual(linesFrom(text, 250_001, 3));
    expect(await lineStart(text, 400_000)).toBe(-1);
    const offsets = [0, 5, text.indexOf("line 1000\n"), text.length - 1];
    expect(await lineNumbers(text, offsets)).toEqual([1, 1, 1001, 300_000]);
  });

  it("versionOf over several slices; line scans of bytes agree with those of the decoded text", async () => {
    const big = Buffer.from("é".repeat(9 << 20) + "\ufeff!", "utf8");
    expect(await versionOf(big)).toBe(createHash("sha256").update(big).digest("hex"));
    const text = "\ufeffone\r\ntwo\n\ufeffthree\n\xff";
    const bytes = Buffer.concat([Buffer.from(text.slice(0, -1)), Buffer.from([0xc3, 0x0a, 0xff])]);
    const decoded = new TextDecoder().decode(bytes);
    expect(await lineStats(bytes)).toEqual({ count: lineCount(decoded), endings: lineEndings(decoded) });
    for (let first = 1; first <= 5; first++)
      expect(decodeLines(bytes, await lineStart(bytes, first), 2), `line ${first}`).toEqual(
        linesFrom(decoded, first, 2),
      );
  });
});

/** Turns of the event loop while `work` runs (no I/O in it: only its own yields let the ticker run). */
async function turnsDuring(work: () => Promise<unknown>): Promise<number> {
  let turns = 0;
  let running = true;
  const tick = () => {
    turns++;
    if (running) setImmediate(tick);
  };
  setImmediate(tick);
  await work();
  running = false;
  return turns;
}

describe("the scans give the event loop back between slices", () => {
  const text = "x = 1;\n".repeat(3_000_000); // 21 M characters, 3 M lines
  const slices = Math.floor(text.length / SCAN_SLICE);

  it("occurrences: at least once per window, for a needle that never matches and one that matches everywhere", async () => {
    expect(await turnsDuring(() => occurrences(text, "x".repeat(10_000) + "y"))).toBeGreaterThanOrEqual(slices);
    expect(await turnsDuring(() => occurrences(text, "x = 1;\n"))).toBeGreaterThanOrEqual(slices);
  });

  it("lineStats, lineStart, lineNumbers and versionOf", async () => {
    const bytes = Buffer.from(text);
    expect(await turnsDuring(() => lineStats(text))).toBeGreaterThanOrEqual(slices);
    expect(await turnsDuring(() => lineStats(bytes))).toBeGreaterThanOrEqual(slices);
    expect(await turnsDuring(() => lineStart(bytes, 2_999_999))).toBeGreaterThanOrEqual(slices);
    expect(await turnsDuring(() => lineNumbers(text, [text.length - 1]))).toBeGreaterThanOrEqual(slices);
    expect(await turnsDuring(() => versionOf(bytes))).toBeGreaterThanOrEqual(2);
  });
});
