import { createRequire } from "node:module";
import { afterEach, describe, expect, it } from "vitest";
import {
  countTokens,
  countTokensBounded,
  countTokensUpTo,
  decodeTokens,
  encodeTokens,
  encodeTokensUpTo,
  STEP_LIMITS,
} from "../../src/observation/tokens.js";
import { MAX_PIECE_LENGTH } from "../../src/observation/pieces.js";
import { corpusFiles, mixedTexts, trickyCases } from "../support/corpus.js";
import { seeded } from "../support/seeded.js";

const require = createRequire(import.meta.url);
type Api = Record<"encode" | "countTokens" | "decode", (input: never, options?: unknown) => unknown>;
// The encoder module tokens.ts loads (the same CommonJS instance): the reference, and what is watched.
const o200k = require("gpt-tokenizer/cjs/encoding/o200k_base") as Api;
const AS_TEXT = { disallowedSpecial: new Set<string>() };
const exact = (text: string) => (o200k.countTokens as (t: string, o: unknown) => number)(text, AS_TEXT);

const pick = (next: () => number, chars: string, n: number) =>
  Array.from({ length: n }, () => chars[Math.floor(next() * chars.length)]).join("");
const rareCjk = (next: () => number, n: number) =>
  Array.from({ length: n }, () => String.fromCharCode(0x4e00 + Math.floor(next() * 20_000))).join("");

/** Records the longest text (or token array) each encoder entry point receives, and every text it encodes, until the
 * test ends. */
const restore: (() => void)[] = [];
afterEach(() => restore.splice(0).forEach((undo) => undo()));
function watchEncoder(): { longest: Record<keyof Api, number>; inputs: string[] } {
  const longest = { encode: 0, countTokens: 0, decode: 0 };
  const inputs: string[] = [];
  for (const name of Object.keys(longest) as (keyof Api)[]) {
    const original = o200k[name];
    o200k[name] = ((input: string | number[], options?: unknown) => {
      longest[name] = Math.max(longest[name], input.length);
      if (typeof input === "string") inputs.push(input);
      return original(input as never, options);
    }) as Api[keyof Api];
    restore.push(() => (o200k[name] = original));
  }
  return { longest, inputs };
}

// The adversarial inputs: one unbroken piece each (or pieces the encoder merges slowly).
const next = seeded(11);
const ADVERSARIAL: [string, string][] = [
  ["100,000 dots", ".".repeat(100_000)],
  ["100,000 letters", "a".repeat(100_000)],
  ["50,000 random letters", pick(next, "abcdefghijklmnopqrstuvwxyz", 50_000)],
  ["30,000 repeated CJK", "漢".repeat(30_000)],
  ["20,000 rare CJK", rareCjk(next, 20_000)],
  ["50,000 spaces then text", " ".repeat(50_000) + "x"],
  ["an emoji run", "😀".repeat(20_000)],
  ["a JSON argument of dots", JSON.stringify({ command: `echo ${".".repeat(200_000)}` })],
];

describe("token counting is linear: the encoder never gets a long piece", () => {
  it("hands the encoder at most MAX_PIECE_LENGTH characters at a time, and a decode at most 64 tokens", () => {
    for (const [what, text] of ADVERSARIAL) {
      const { longest } = watchEncoder();
      const n = countTokens(text);
      const ids = encodeTokens(text);
      const back = decodeTokens(ids);
      restore.splice(0).forEach((undo) => undo());
      expect({
        what,
        encode: longest.encode <= MAX_PIECE_LENGTH,
        count: longest.countTokens <= MAX_PIECE_LENGTH,
        decode: longest.decode <= 64,
      }).toEqual({ what, encode: true, count: true, decode: true });
      // Still one consistent encoding: the count is the ids' length and the ids decode to the text.
      expect(ids.length, what).toBe(n);
      expect(back === text, what).toBe(true);
    }
  });

  it("cuts inside a piece only between whole characters (never a surrogate pair)", () => {
    const rng = seeded(5);
    const astral = Array.from({ length: 3000 }, () => String.fromCodePoint(0x20000 + Math.floor(rng() * 40_000))).join(
      "",
    );
    const text = "x" + astral + "a😀".repeat(300);
    const { inputs } = watchEncoder();
    expect(decodeTokens(encodeTokens(text))).toBe(text);
    expect(inputs.length).toBeGreaterThan(10);
    // A lone surrogate would be encoded as U+FFFD and break the round trip; check each input too.
    const wellFormed = (p: string) => !/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/.test(p);
    for (const p of inputs) expect(wellFormed(p), JSON.stringify(p.slice(0, 4))).toBe(true);
  });
});

describe("token counting stays exact for ordinary text", () => {
  it("counts a fixed corpus (code, prose, shell output, many scripts and emoji, an observation, the tricky cases, seeded mixtures) exactly as the encoder does", () => {
    const files = corpusFiles();
    const texts: [string, string][] = [
      ...files.map((f) => [f.name, f.text] as [string, string]),
      ...trickyCases().map((t, i) => [`tricky.json[${i}]`, t] as [string, string]),
      ...mixedTexts(5, 1000).map((t, i) => [`mixed ${i}`, t] as [string, string]),
    ];
    // Both kinds on purpose: text the ASCII pre-tokenizer takes, and text the encoder's regex does.
    const notAscii = (t: string) => Buffer.byteLength(t) !== t.length;
    expect(files.filter((f) => notAscii(f.text)).map((f) => f.name)).toEqual(["unicode.txt", "observation.txt"]);
    expect(texts.filter(([, t]) => notAscii(t)).length).toBeGreaterThan(300);
    for (const [what, text] of texts) {
      expect(countTokens(text), what).toBe(exact(text));
      expect(encodeTokens(text), what).toEqual(o200k.encode(text as never, AS_TEXT));
    }
  });

  it("counts random text whose pieces are shorter than the bound exactly (graphemes, any code unit, special-token look-alikes)", async () => {
    const fc = await import("fast-check");
    const word = fc.oneof(
      fc.string({ unit: "grapheme", maxLength: 40 }),
      fc.string({ unit: "binary", maxLength: 40 }),
      fc.constantFrom("<|endoftext|>", "<|im_start|>", "don't", "  \n\n ", "1234567"),
    );
    fc.assert(
      fc.property(fc.array(word, { maxLength: 60 }), (words) => {
        const text = words.join(" ");
        expect(countTokens(text)).toBe(exact(text));
        expect(countTokens(text, "cl100k")).toBe(encodeTokens(text, "cl100k").length);
        return true;
      }),
      { numRuns: 300, seed: 20261201 },
    );
  });

  it("differs from the whole-piece count only on pieces longer than the bound: between 2 fewer and 2 more tokens per cut", () => {
    const rng = seeded(7);
    const alphabets = [
      "ab",
      "abc",
      "aeiou",
      "thequickbrownfox",
      "abcdefghijklmnopqrstuvwxyz",
      ".-=",
      ".",
      "!?.,;:",
      "-=_*#",
      "漢字",
      "的一是不了人我在有他这为之大来以个中上们",
      "AB",
      "Ab",
    ];
    let cuts = 0;
    let over = 0;
    for (let n = 0; n < 600; n++) {
      const alphabet = alphabets[n % alphabets.length]!;
      const run = 1 + Math.floor(rng() * 6);
      let text = "";
      while (text.length < 257 + Math.floor(rng() * 1200))
        text += alphabet[Math.floor(rng() * alphabet.length)]!.repeat(run);
      // One piece (letters, or punctuation), cut every MAX_PIECE_LENGTH characters.
      const k = Math.ceil(text.length / MAX_PIECE_LENGTH) - 1;
      const d = countTokens(text) - exact(text);
      expect(d, JSON.stringify(text.slice(0, 40))).toBeGreaterThanOrEqual(-2 * k);
      expect(d, JSON.stringify(text.slice(0, 40))).toBeLessThanOrEqual(2 * k);
      cuts += k;
      over += d;
    }
    // On the whole the cuts count more, the safe side for a budget.
    expect(over).toBeGreaterThan(0);
    expect(over).toBeLessThan(cuts);
  });
});

describe("decodeTokens", () => {
  it("a slice that ends inside a character ends in U+FFFD and leaves nothing behind for the next decode", () => {
    const text = rareCjk(seeded(3), 400);
    const ids = encodeTokens(text);
    // Find a cut inside a character: its prefix does not decode to a prefix of the text.
    let cut = 1;
    while (cut < ids.length && text.startsWith(decodeTokens(ids.slice(0, cut)))) cut++;
    expect(cut).toBeLessThan(ids.length);
    expect(decodeTokens(ids.slice(0, cut)).endsWith("\uFFFD")).toBe(true);
    expect(decodeTokens(encodeTokens("plain text after"))).toBe("plain text after");
  });
});

describe("bounded counts", () => {
  const text = "lorem ipsum dolor sit amet, ".repeat(4000) + "漢字".repeat(3000);

  it("encodeTokensUpTo returns exactly the first tokens of the whole text and stops at its limits", () => {
    const whole = encodeTokens(text);
    const byTokens = encodeTokensUpTo(text, { tokens: 1000 });
    expect(byTokens.ids.length).toBeGreaterThan(1000);
    expect(byTokens.ids).toEqual(whole.slice(0, byTokens.ids.length));
    expect(byTokens.end).toBeLessThan(text.length);
    const byChars = encodeTokensUpTo(text, { chars: 500 });
    expect(byChars.end).toBeGreaterThanOrEqual(500);
    expect(byChars.end).toBeLessThan(500 + MAX_PIECE_LENGTH);
    expect(encodeTokensUpTo("short", { tokens: 10, chars: 100 })).toEqual({ ids: encodeTokens("short"), end: 5 });
  });

  it("countTokensUpTo is exact up to the limit and stops just past it", () => {
    expect(countTokensUpTo("a b c", 100)).toBe(countTokens("a b c"));
    const { longest } = watchEncoder();
    const n = countTokensUpTo(".".repeat(1_000_000) + text, 50);
    expect(n).toBeGreaterThan(50);
    expect(n).toBeLessThan(60);
    expect(longest.encode).toBeLessThanOrEqual(MAX_PIECE_LENGTH);
  });

  it("countTokensBounded is exact for short text and flags an estimate beyond its prefix, reading a bounded part", () => {
    expect(countTokensBounded("short text")).toEqual({ tokens: countTokens("short text"), exact: true });
    // A large argument of ordinary text: the corpus's code, prose and shell output over and over, about 2 M characters.
    const corpus = corpusFiles()
      .filter((f) => ["code.txt", "prose.txt", "shell.txt"].includes(f.name))
      .map((f) => f.text)
      .join("\n");
    let big = "";
    while (big.length < 2_000_000) big += corpus;
    const { inputs } = watchEncoder();
    const bounded = countTokensBounded(big);
    expect(bounded.exact).toBe(false);
    // Only the cache misses reach the encoder; they are at most the prefix and the samples.
    expect(inputs.reduce((n, p) => n + p.length, 0)).toBeLessThanOrEqual(
      STEP_LIMITS.encoded + 32 * 128 + MAX_PIECE_LENGTH,
    );
    const truth = countTokens(big);
    expect(Math.abs(bounded.tokens - truth) / truth).toBeLessThan(0.1);
  });
});
