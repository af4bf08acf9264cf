import { createRequire } from "node:module";
import { describe, expect, it } from "vitest";
import { forEachPiece, MAX_PIECE_LENGTH } from "../../src/observation/pieces.js";

const require = createRequire(import.meta.url);
const { O200K_TOKEN_SPLIT_REGEX } = require("gpt-tokenizer/cjs/encodingParams/constants") as {
  O200K_TOKEN_SPLIT_REGEX: RegExp;
};
const byRegex = (text: string) => [...text.matchAll(O200K_TOKEN_SPLIT_REGEX)].map((m) => m[0]);

const pieces = (text: string, reach?: number) => {
  const out: string[] = [];
  forEachPiece(text, "o200k", (p) => void out.push(p), reach);
  return out;
};

/** A seeded generator (mulberry32). */
function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
const UNITS = ["a", "Z", "é", "漢", "😀", "1", " ", "\n", ".", "'s", "-", "\t", "ü", "Ω", "/"];
/** Text with runs (some longer than a piece may be) of one unit among single units. */
function text(next: () => number, length: number): string {
  let out = "";
  while (out.length < length) {
    const unit = UNITS[Math.floor(next() * UNITS.length)]!;
    out += next() < 0.15 ? unit.repeat(1 + Math.floor(next() * 400)) : unit;
  }
  return out;
}

describe("forEachPiece", () => {
  it("hands on the encoder's own pieces for text without long runs, and bounded pieces that concatenate to any text", () => {
    const next = random(3);
    for (let n = 0; n < 400; n++) {
      const t = text(next, 50 + Math.floor(next() * 3000));
      const ours = pieces(t);
      expect(ours.join("")).toBe(t);
      expect(Math.max(...ours.map((p) => p.length))).toBeLessThanOrEqual(MAX_PIECE_LENGTH);
      const theirs = byRegex(t);
      if (Math.max(...theirs.map((p) => p.length)) <= MAX_PIECE_LENGTH) expect(ours).toEqual(theirs);
    }
  });

  it("a walk stopped anywhere resumes on the rest with exactly the pieces that followed", () => {
    const next = random(5);
    for (let n = 0; n < 300; n++) {
      const t = text(next, 2000);
      const all = pieces(t);
      const k = Math.floor(next() * all.length);
      let seen = 0;
      const end = forEachPiece(t, "o200k", () => ++seen > k);
      expect(end).toBe(all.slice(0, k + 1).join("").length);
      expect(pieces(t.slice(end))).toEqual(all.slice(k + 1));
    }
  });

  it("a walk that goes past the reach it promised still hands on correct pieces (ASCII start, other text after)", () => {
    const t = "plain ascii words ".repeat(100) + "then données 漢字 and more";
    expect(pieces(t, 40).join("")).toBe(t);
    expect(pieces(t, 40)).toEqual(byRegex(t));
  });
});
