/**
 * The closest near-match of an `old_str` that matched nothing (file_edit: "the error names the
 * count 0 and, where one exists, the closest near-match"). Tried in order: the same text with
 * different whitespace (indentation, line wrapping), with different letter case, then the most
 * similar block of the same number of lines (character-bigram Dice score).
 *
 * Bounded in size and in work, and never long on the event loop: a file over
 * NEAR_MATCH_MAX_CHARS is not searched, the similarity pass does at most FUZZY_MAX_WORK bigram
 * comparisons, and every pass gives the loop back between slices of work.
 */
import { splitLines } from "./text.js";

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

/** Why a search was not made, as a sentence for the refusal. */
export interface Skipped {
  skipped: string;
}

/** Largest text (UTF-16 code units) searched for a near-match at all. */
export const NEAR_MATCH_MAX_CHARS = 1024 * 1024;
/** Similarity is scored over blocks of up to this many lines, in files of up to this many lines. */
const FUZZY_MAX_NEEDLE_LINES = 40;
const FUZZY_MAX_LINES = 20_000;
/** Bigram comparisons the similarity pass may make (start positions × bigrams of old_str). */
export const FUZZY_MAX_WORK = 8_000_000;
/** Characters of one line that similarity looks at. */
const FUZZY_LINE_CHARS = 2000;
const MIN_SIMILARITY = 0.5;
/** Units of work (characters, or bigram comparisons) between two yields to the event loop: a few ms each. */
const SLICE = 100_000;

const yieldLoop = () => new Promise<void>((done) => setImmediate(done));

export async function nearestMatch(text: string, needle: string): Promise<NearMatch | Skipped | null> {
  if (text.length > NEAR_MATCH_MAX_CHARS) {
    return {
      skipped: `the file is ${text.length} characters, more than the near-match search reads (${NEAR_MATCH_MAX_CHARS})`,
    };
  }
  const lines = splitLines(text);
  const needleLines = splitLines(needle);
  const span = Math.max(1, needleLines.length);
  const ws = await findSqueezed(lines, needle, (s) => s);
  if (ws !== null) return { line: ws, differs: "whitespace", similarity: 1, lines: span };
  const cs = await findSqueezed(lines, needle, (s) => s.toLowerCase());
  if (cs !== null) return { line: cs, differs: "letter case", similarity: 1, lines: span };
  if (needleLines.length === 0 || needleLines.length > FUZZY_MAX_NEEDLE_LINES) return null;
  if (lines.length > FUZZY_MAX_LINES) {
    return {
      skipped: `no similar block was searched for: the file has ${lines.length} lines, more than the similarity search compares (${FUZZY_MAX_LINES})`,
    };
  }
  return mostSimilar(lines, needleLines);
}

const squeeze = (s: string) => s.replace(/\s+/g, "");

/** The line where `needle` starts in the text with all whitespace removed (after `fold`), or null. */
async function findSqueezed(lines: string[], needle: string, fold: (s: string) => string): Promise<number | null> {
  const target = squeeze(fold(needle));
  if (target.length === 0) return null;
  // Where each line starts in the squeezed text, to map a match back to its line.
  const starts = new Int32Array(lines.length);
  const parts: string[] = [];
  let length = 0;
  let work = 0;
  for (let i = 0; i < lines.length; i++) {
    starts[i] = length;
    const part = squeeze(fold(lines[i]!));
    parts.push(part);
    length += part.length;
    work += lines[i]!.length + 1;
    if (work > SLICE) {
      work = 0;
      await yieldLoop();
    }
  }
  const index = parts.join("").indexOf(target);
  if (index === -1) return null;
  // The last line starting at or before the match holds its first character (an empty line shares the next one's
  // start).
  let lo = 0;
  let hi = lines.length - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (starts[mid]! <= index) lo = mid;
    else hi = mid - 1;
  }
  return lo + 1;
}

interface Grams {
  counts: Map<string, number>;
  total: number;
}

async function mostSimilar(lines: string[], needle: string[]): Promise<NearMatch | Skipped | null> {
  const wanted = needle.map((l) => bigrams(l.trim()));
  const perStart = wanted.reduce((n, g) => n + g.counts.size, 0) + needle.length;
  const starts = lines.length - needle.length + 1;
  if (starts <= 0) return null;
  if (starts * perStart > FUZZY_MAX_WORK) {
    return {
      skipped: `no similar block was searched for: comparing old_str's ${needle.length} lines with the file's ${lines.length} would take ${starts * perStart} steps, more than the similarity search makes (${FUZZY_MAX_WORK})`,
    };
  }
  const cache = new Map<number, Grams>();
  const grams = (i: number) => {
    let g = cache.get(i);
    if (!g) cache.set(i, (g = bigrams(lines[i]!.trim())));
    return g;
  };
  let best: NearMatch | null = null;
  let work = 0;
  for (let start = 0; start < starts; start++) {
    let sum = 0;
    for (let k = 0; k < needle.length; k++) sum += dice(grams(start + k), wanted[k]!);
    const score = sum / needle.length;
    if (score > (best?.similarity ?? MIN_SIMILARITY - 1e-9))
      best = { line: start + 1, differs: "content", similarity: score, lines: needle.length };
    // A new line's bigrams are built once (up to FUZZY_LINE_CHARS), then each start costs perStart.
    work += perStart + Math.min(lines[start + needle.length - 1]!.length, FUZZY_LINE_CHARS);
    if (work > SLICE) {
      work = 0;
      await yieldLoop();
    }
  }
  return best !== null && best.similarity >= MIN_SIMILARITY
    ? { ...best, similarity: Math.round(best.similarity * 100) / 100 }
    : null;
}

function bigrams(line: string): Grams {
  const s = line.length > FUZZY_LINE_CHARS ? line.slice(0, FUZZY_LINE_CHARS) : line;
  const counts = new Map<string, number>();
  for (let i = 0; i + 1 < s.length; i++) {
    const g = s.slice(i, i + 2);
    counts.set(g, (counts.get(g) ?? 0) + 1);
  }
  return { counts, total: Math.max(0, s.length - 1) };
}

function dice(a: Grams, b: Grams): number {
  const total = a.total + b.total;
  if (total === 0) return 1;
  let shared = 0;
  for (const [g, n] of b.counts) shared += Math.min(n, a.counts.get(g) ?? 0);
  return (2 * shared) / total;
}
