/** "Did you mean": the closest allowed name by edit distance, only when it is close (seed 003, "An error is also an observation"). */

/** Optimal-string-alignment distance (Levenshtein plus adjacent transpositions), bounded for speed. */
export function editDistance(a: string, b: string, max = 8): number {
  if (Math.abs(a.length - b.length) > max) return max + 1;
  const rows: number[][] = [];
  for (let i = 0; i <= a.length; i++) {
    const row: number[] = [i];
    for (let j = 1; j <= b.length; j++) {
      if (i === 0) {
        row.push(j);
        continue;
      }
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let d = Math.min(rows[i - 1]![j]! + 1, row[j - 1]! + 1, rows[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) d = Math.min(d, rows[i - 2]![j - 2]! + 1);
      row.push(d);
    }
    rows.push(row);
  }
  return rows[a.length]![b.length]!;
}

const fold = (s: string) => s.toLowerCase().replace(/[-_\s]/g, "");

/** The closest candidate to `name`, or undefined when none is close enough to be a likely typo. */
export function closest(name: string, candidates: readonly string[]): string | undefined {
  if (name.length > 200) return undefined;
  const folded = fold(name);
  const same = candidates.find((c) => fold(c) === folded);
  if (same !== undefined) return same; // customerId vs customer_id
  const limit = Math.max(1, Math.floor(name.length / 3));
  let best: string | undefined;
  let bestD = limit + 1;
  for (const c of candidates) {
    const d = editDistance(fold(c), folded, limit);
    if (d < bestD) {
      best = c;
      bestD = d;
    }
  }
  return best;
}
