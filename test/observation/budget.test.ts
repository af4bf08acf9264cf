import { createRequire } from "node:module";
import { describe, expect, it } from "vitest";
import { fitText, surelyFits, takeHead } from "../../src/observation/budget.js";
import { countTokens } from "../../src/observation/tokens.js";

const marker = (omitted: number, cut: { first: number; last: number; total: number } | null) =>
  `[cut ${omitted} tokens${cut ? ` lines ${cut.first}-${cut.last} of ${cut.total}` : ""}]`;

const lines = (n: number) =>
  Array.from({ length: n }, (_, i) => `line ${i + 1}: the quick brown fox jumps over the lazy dog`).join("\n");

describe("fitText", () => {
  it("leaves a text that fits untouched and does not count small texts", () => {
    const r = fitText("hello world", 100, marker);
    expect(r).toEqual({ text: "hello world", omitted_tokens: 0, tokens: null, removed: "" });
  });

  it("counts a text whose bytes exceed the budget but whose tokens do not", () => {
    const text = "aaaa bbbb cccc dddd";
    const r = fitText(text, 10, marker);
    expect(r.omitted_tokens).toBe(0);
    expect(r.tokens).toBe(countTokens(text));
  });

  it("cuts the middle at line boundaries, keeping head and tail, and says which lines", () => {
    const text = lines(200);
    const r = fitText(text, 300, marker);
    expect(r.tokens).toBeLessThanOrEqual(300);
    expect(countTokens(r.text)).toBe(r.tokens);
    expect(r.text.startsWith("line 1: ")).toBe(true);
    expect(r.text.endsWith("line 200: the quick brown fox jumps over the lazy dog")).toBe(true);
    const m = /\[cut (\d+) tokens lines (\d+)-(\d+) of 200\]/.exec(r.text);
    expect(m).not.toBeNull();
    const [, omitted, first, last] = m!.map(Number);
    expect(omitted).toBe(r.omitted_tokens);
    // The lines the marker names are exactly the ones missing.
    expect(r.text).toContain(`line ${first! - 1}: `);
    expect(r.text).not.toContain(`line ${first}: `);
    expect(r.text).not.toContain(`line ${last}: `);
    expect(r.text).toContain(`line ${last! + 1}: `);
    // Head keeps more than the tail.
    expect(first! - 1).toBeGreaterThan(200 - last!);
  });

  it("accounts for every token: kept + omitted ≈ original", () => {
    const text = lines(120);
    const r = fitText(text, 200, marker);
    const kept = countTokens(r.text.replace(/\[cut[^\]]*\]\n?/, ""));
    expect(Math.abs(kept + r.omitted_tokens - countTokens(text))).toBeLessThanOrEqual(3);
  });

  it("cuts a single long line without line numbers", () => {
    const text = "x".repeat(5000);
    const r = fitText(text, 50, marker);
    expect(r.tokens).toBeLessThanOrEqual(50);
    expect(r.text).toMatch(/\[cut \d+ tokens\]/);
  });

  it("never exceeds a budget smaller than the marker: keeps the marker only", () => {
    const r = fitText(lines(50), 3, marker);
    expect(r.text).toMatch(/^\[cut \d+ tokens/);
  });

  it("surelyFits is a true upper bound on tokens", () => {
    for (const s of ["", "abc", "é漢字🙂", "a b c d e f"]) {
      if (surelyFits(s, 12)) expect(countTokens(s)).toBeLessThanOrEqual(12);
    }
    expect(surelyFits("漢字漢字漢字", 12)).toBe(false);
  });
});

describe("fitText properties", () => {
  it("never exceeds the budget, keeps a prefix and a suffix, and its removed part is what is missing", async () => {
    const fc = await import("fast-check");
    const line = fc.string({ unit: "grapheme", maxLength: 60 });
    fc.assert(
      fc.property(fc.array(line, { maxLength: 120 }), fc.integer({ min: 40, max: 400 }), (lines, budget) => {
        const text = lines.join("\n");
        const r = fitText(text, budget, marker);
        if (r.omitted_tokens === 0) return r.text === text;
        expect(countTokens(r.text)).toBeLessThanOrEqual(budget);
        const m = /\[cut \d+ tokens[^\]]*\]/.exec(r.text)!;
        const head = r.text.slice(0, m.index).replace(/\n$/, "");
        const tail = r.text.slice(m.index + m[0].length).replace(/^\n/, "");
        expect(text.startsWith(head)).toBe(true);
        expect(text.endsWith(tail)).toBe(true);
        // What a continuation serves is exactly what the cut took out: head + removed + tail = text.
        const before = r.text.slice(0, m.index);
        const after = tail;
        expect([before + r.removed + after, before.slice(0, -1) + r.removed + after]).toContain(text);
        return true;
      }),
      { numRuns: 150, seed: 20261130 },
    );
  });
});

describe("takeHead", () => {
  it("pages through any text in order: the pages concatenate back to it", async () => {
    const fc = await import("fast-check");
    fc.assert(
      fc.property(fc.string({ unit: "grapheme", maxLength: 3000 }), fc.integer({ min: 1, max: 200 }), (text, page) => {
        let rest = text;
        let out = "";
        for (let i = 0; rest.length > 0; i++) {
          expect(i).toBeLessThan(text.length + 1);
          const { head, rest: more } = takeHead(rest, page);
          expect(head.length).toBeGreaterThan(0);
          out += head;
          rest = more;
        }
        return out === text;
      }),
      { numRuns: 100, seed: 7 },
    );
  });
});

describe("a text too long to encode whole", () => {
  const require = createRequire(import.meta.url);
  const o200k = require("gpt-tokenizer/cjs/encoding/o200k_base") as {
    encode: (text: string, options?: unknown) => number[];
  };
  /** Characters the encoder is handed while `fn` runs. */
  function encoded<T>(fn: () => T): { value: T; chars: number } {
    const original = o200k.encode;
    let chars = 0;
    o200k.encode = (text, options) => {
      chars += text.length;
      return original(text, options);
    };
    try {
      return { value: fn(), chars };
    } finally {
      o200k.encode = original;
    }
  }
  // 10 MB of varied lines, unlike anything cached: each line has its own number and word.
  const words = ["alpha", "beta", "gamma", "delta", "epsilon", "zeta", "theta", "kappa"];
  const huge = Array.from(
    { length: 200_000 },
    (_, i) => `line ${i} ${words[i % 8]}${i * 7919} of the proxied output, with some text`,
  ).join("\n");

  it("is cut to the budget reading only near its ends, with an estimated count the marker says is one", () => {
    expect(huge.length).toBeGreaterThan(10_000_000);
    const { value: r, chars } = encoded(() =>
      fitText(
        huge,
        2000,
        (n, cut, estimated) =>
          `[cut ${estimated ? "about " : ""}${n} tokens${cut ? ` lines ${cut.first}-${cut.last} of ${cut.total}` : ""}]`,
      ),
    );
    // About two budgets' worth of text from each end, not 10 MB.
    expect(chars).toBeLessThan(200_000);
    expect(r.tokens).toBeLessThanOrEqual(2000);
    expect(countTokens(r.text)).toBe(r.tokens);
    expect(r.estimated).toBe(true);
    expect(r.text.startsWith("line 0 alpha0 of the proxied output")).toBe(true);
    expect(r.text.endsWith(huge.slice(huge.lastIndexOf("\n") + 1))).toBe(true);
    const m = /\[cut about (\d+) tokens lines (\d+)-(\d+) of 200000\]/.exec(r.text);
    expect(m).not.toBeNull();
    // The estimate is close for text like this (the count would have taken seconds).
    const truth = countTokens(huge) - countTokens(r.text.replace(m![0], ""));
    expect(Math.abs(Number(m![1]) - truth) / truth).toBeLessThan(0.05);
    // What a continuation would serve is exactly the middle.
    const head = r.text.slice(0, m!.index);
    const tail = r.text.slice(m!.index + m![0].length + 1);
    expect(head + r.removed + tail).toBe(huge);
  });

  it("a text over the whole-encode size that still fits is told so exactly", () => {
    const text = "word ".repeat(4000); // 20,000 characters, 4,000 tokens
    const r = fitText(text, 5000, marker);
    expect(r).toEqual({ text, omitted_tokens: 0, tokens: countTokens(text), removed: "" });
  });

  it("takeHead pages through it reading about one page", () => {
    const { value, chars } = encoded(() => takeHead(huge, 500));
    expect(chars).toBeLessThan(50_000);
    expect(countTokens(value.head)).toBeLessThanOrEqual(500);
    expect(value.head + value.rest).toBe(huge);
    expect(value.head.endsWith("\n")).toBe(true);
  });
});
