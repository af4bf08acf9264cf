/**
 * The closest near-match of an `old_str` that matched nothing (issue 6, file_edit: "the error
 * names the count 0 and, where one exists, the closest near-match"). Tried in order: the same
 * text with different whitespace (indentation, line wrapping), with different letter case,
 * then the most similar block of the same number of lines (character-bigram Dice score).
 */
import { lineAt, lineCount, splitLines } from "./text.js";

export interface NearMatch {
  /** 1-based line where the near-match starts. */
  line: number;
  /** How it differs from old_str. */
  differs: "whitespace" | "letter case" | "content";
  /** Dice similarity 0–1 (1 for whitespace and case matches). */
  similarity: number;
  /** Number of lines the near-match spans. */
  lines: number;
}

/** Fuzzy scoring is O(lines × old_str lines); above these sizes only the exact-modulo passes run. */
const FUZZY_MAX_LINES = 20_000;
const FUZZY_MAX_NEEDLE_LINES = 40;
const MIN_SIMILARITY = 0.5;

export function nearestMatch(text: string, needle: string): NearMatch | null {
  const needleLines = Math.max(1, splitLines(needle).length);
  const ws = findIgnoring(text, needle, (s) => s);
  if (ws !== null) return { line: ws, differs: "whitespace", similarity: 1, lines: needleLines };
  const cs = findIgnoring(text, needle, (s) => s.toLowerCase());
  if (cs !== null) return { line: cs, differs: "letter case", similarity: 1, lines: needleLines };
  if (lineCount(text) > FUZZY_MAX_LINES) return null;
  return mostSimilar(splitLines(text), splitLines(needle));
}

/** Finds `needle` in `text` with all whitespace removed (after `fold`), mapped back to a line. */
function findIgnoring(text: string, needle: string, fold: (s: string) => string): number | null {
  const squeeze = (s: string) => fold(s).replace(/\s+/g, "");
  const target = squeeze(needle);
  if (target.length === 0) return null;
  const index = squeeze(text).indexOf(target);
  if (index === -1) return null;
  // Walk the original text counting non-whitespace characters to find where the match starts.
  let seen = 0;
  for (let i = 0; i < text.length; i++) {
    if (/\s/.test(text[i]!)) continue;
    if (seen === index) return lineAt(text, i);
    seen++;
  }
  return null;
}

function mostSimilar(lines: string[], needle: string[]): NearMatch | null {
  if (needle.length === 0 || needle.length > FUZZY_MAX_NEEDLE_LINES) return null;
  const wanted = needle.map((l) => bigrams(l.trim()));
  const cache = new Map<number, Map<string, number>>();
  const grams = (i: number) => {
    let g = cache.get(i);
    if (!g) cache.set(i, (g = bigrams(lines[i]!.trim())));
    return g;
  };
  let best: NearMatch | null = null;
  for (let start = 0; start + needle.length <= lines.length; start++) {
    let sum = 0;
    for (let k = 0; k < needle.length; k++) sum += dice(grams(start + k), wanted[k]!);
    const score = sum / needle.length;
    if (score > (best?.similarity ?? MIN_SIMILARITY - 1e-9)) best = { line: start + 1, differs: "content", similarity: score, lines: needle.length };
  }
  return best !== null && best.similarity >= MIN_SIMILARITY ? { ...best, similarity: Math.round(best.similarity * 100) / 100 } : null;
}

function bigrams(s: string): Map<string, number> {
  const m = new Map<string, number>();
  for (let i = 0; i + 1 < s.length; i++) {
    const g = s.slice(i, i + 2);
    m.set(g, (m.get(g) ?? 0) + 1);
  }
  return m;
}

function dice(a: Map<string, number>, b: Map<string, number>): number {
  let total = 0;
  let shared = 0;
  for (const n of a.values()) total += n;
  for (const [g, n] of b) {
    total += n;
    shared += Math.min(n, a.get(g) ?? 0);
  }
  return total === 0 ? 1 : (2 * shared) / total;
}
