/**
 * A fixed text corpus for the tokenizer tests, the same on every run and whatever src/ holds:
 * - the files in corpus/, written for it: TypeScript, English prose, shell output (ASCII), text in
 *   many scripts with emoji and odd spaces, and a tool observation with JSON (not ASCII);
 * - corpus/tricky.json, short texts on the edges of o200k's pre-tokenizer: contractions in every
 *   case, digit runs, punctuation runs followed by line breaks and slashes, whitespace runs before
 *   words and at the end, control characters;
 * - texts built from both with a seeded generator: pieces of them joined by separators that move
 *   the piece boundaries.
 */
import { readFileSync } from "node:fs";
import { seeded } from "./seeded.js";

const dir = new URL("corpus/", import.meta.url);
const read = (name: string) => readFileSync(new URL(name, dir), "utf8");

/** The corpus files by name, in this order: three ASCII, then two that are not. */
export const CORPUS_FILES = ["code.txt", "prose.txt", "shell.txt", "unicode.txt", "observation.txt"] as const;

export function corpusFiles(): { name: string; text: string }[] {
  return CORPUS_FILES.map((name) => ({ name, text: read(name) }));
}

export function trickyCases(): string[] {
  return JSON.parse(read("tricky.json")) as string[];
}

const SEPARATORS = ["", " ", "  ", "\n", "\n\n", "\r\n", "\t", " \n", "\n  ", "/", "'", "'s ", "..."];

/**
 * `count` texts of up to `parts` pieces each: lines of the corpus files and tricky cases, whole or
 * cut at a random place, joined by separators. `keep` filters the pieces (e.g. ASCII only).
 */
export function mixedTexts(
  seed: number,
  count: number,
  keep: (piece: string) => boolean = () => true,
  parts = 12,
): string[] {
  const next = seeded(seed);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(next() * xs.length)]!;
  const pieces = [...corpusFiles().flatMap((f) => f.text.split("\n")), ...trickyCases()].filter(keep);
  const separators = SEPARATORS.filter(keep);
  return Array.from({ length: count }, () => {
    let text = "";
    for (let n = 1 + Math.floor(next() * parts); n > 0; n--) {
      const piece = pick(pieces);
      const cut = Math.floor(next() * piece.length);
      const part = next() < 0.7 ? piece : next() < 0.5 ? piece.slice(0, cut) : piece.slice(cut);
      text += part + pick(separators);
    }
    return text;
  });
}
