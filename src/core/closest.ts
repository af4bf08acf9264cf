/**
 * "Did you mean": the closest allowed name by edit distance, only when it is close
 * (docs/observations.md). The one rule for every suggestion toolgate makes — a field name, an
 * enum value, a tool name, a store URL scheme: compared without case, `-`, `_` or blanks
 * (customerId is customer_id), and close means at most one edit per three characters of what
 * was sent (at least one).
 */
import { LruCache } from "./lru.js";

/** Optimal-string-alignment distance (Levenshtein plus adjacent transpositions), three rolling rows. */
function editDistance(a: string, b: string, max = 8): number {
  if (Math.abs(a.length - b.length) > max) return max + 1;
  let prev2: number[] = new Array<number>(b.length + 1).fill(0);
  let prev: number[] = new Array<number>(b.length + 1);
  for (let j = 0; j <= b.length; j++) prev[j] = j;
  let row: number[] = new Array<number>(b.length + 1).fill(0);
  for (let i = 1; i <= a.length; i++) {
    row[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let d = Math.min(prev[j]! + 1, row[j - 1]! + 1, prev[j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) d = Math.min(d, prev2[j - 2]! + 1);
      row[j] = d;
    }
    [prev2, prev, row] = [prev, row, prev2];
  }
  return prev[b.length]!;
}

const fold = (s: string) => s.toLowerCase().replace(/[-_\s]/g, "");

function closestFolded(name: string, candidates: readonly string[], folded: readonly string[]): string | undefined {
  if (name.length > 200) return undefined;
  const target = fold(name);
  const same = folded.indexOf(target);
  if (same >= 0) return candidates[same]; // customerId vs customer_id
  const limit = Math.max(1, Math.floor(name.length / 3));
  let best: string | undefined;
  let bestD = limit + 1;
  for (let i = 0; i < candidates.length; i++) {
    const d = editDistance(folded[i]!, target, limit);
    if (d < bestD) {
      best = candidates[i];
      bestD = d;
    }
  }
  return best;
}

/** The closest candidate to `name`, or undefined when none is close enough to be a likely typo. */
export function closest(name: string, candidates: readonly string[]): string | undefined {
  return closestFolded(name, candidates, candidates.map(fold));
}

/** Answers remembered per suggester: a model repeats the same few wrong names. Bounded. */
const MAX_REMEMBERED = 256;

/**
 * `closest` over one fixed candidate list (a schema's property names or enum), for repeated
 * use: the candidates are folded once and each name's answer is remembered, so a failing call
 * does not recompute edit distances its schema location already answered.
 */
export function suggester(candidates: readonly string[]): (name: string) => string | undefined {
  const folded = candidates.map(fold);
  const answers = new LruCache<string, string | null>(MAX_REMEMBERED);
  return (name) => {
    let answer = answers.get(name);
    if (answer === undefined) {
      answer = closestFolded(name, candidates, folded) ?? null;
      answers.set(name, answer);
    }
    return answer ?? undefined;
  };
}
