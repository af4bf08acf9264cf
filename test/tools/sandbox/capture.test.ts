import { describe, expect, it } from "vitest";
import { boundCapture, HeadTailCapture } from "../../../src/tools/sandbox/capture.js";

const fill = (limit: number, ...chunks: string[]) => {
  const c = new HeadTailCapture(limit);
  for (const ch of chunks) c.push(Buffer.from(ch));
  return c;
};

describe("HeadTailCapture", () => {
  it("keeps everything under the bound", () => {
    const c = fill(100, "abc", "def");
    expect(c.result()).toEqual({ head: "abcdef", tail: "", omittedBytes: 0 });
    expect(c.total).toBe(6);
  });

  it("keeps the first and last halves across chunk boundaries and counts the middle", () => {
    const c = fill(10, "0123", "4567", "89ab", "cdef");
    expect(c.result()).toEqual({ head: "01234", tail: "bcdef", omittedBytes: 6 });
    expect(c.total).toBe(16);
  });
});

describe("boundCapture", () => {
  it("returns short text unchanged", () => {
    expect(boundCapture(fill(1000, "hello\n"), 50, "stdout")).toEqual({
      text: "hello\n",
      omitted_bytes: 0,
      omitted_tokens: 0,
    });
  });

  it("cuts to the token bound, keeping head and tail with one marker", () => {
    const text = Array.from({ length: 400 }, (_, i) => `row ${i}`).join("\n") + "\n";
    const r = boundCapture(fill(1 << 20, text), 40, "stderr");
    expect(r.text.startsWith("row 0\nrow 1\n")).toBe(true);
    expect(r.text.endsWith("row 399\n")).toBe(true);
    expect(r.text).toMatch(/\n\[… \d+ bytes cut from the middle of stderr \(\d+ bytes in all\) …\]\n/);
    expect(r.omitted_tokens).toBeGreaterThan(0);
    // Everything not rendered was counted (the rendering also holds the marker line).
    expect(r.omitted_bytes).toBeGreaterThan(Buffer.byteLength(text) - Buffer.byteLength(r.text));
    expect(r.omitted_bytes).toBeLessThan(Buffer.byteLength(text));
  });

  it("reports bytes cut while reading even when the kept text fits the token bound", () => {
    const r = boundCapture(fill(8, "aaaa", "bbbbbbbb", "cccc"), 1000, "stdout");
    expect(r.text).toBe("aaaa\n[… 8 bytes cut from the middle of stdout (16 bytes in all) …]\ncccc");
    expect(r.omitted_bytes).toBe(8);
  });
});
