/**
 * "About one time in forty": a rate as a person says it. The worked example (docs/economics.md)
 * turns p_break = 40 ms / 1,800 ms ≈ 2.2 % (exactly one in 45) into "more often than about one time in forty".
 *
 * The rule: N is 1/p rounded DOWN to a round number — a whole number below 10, else one of
 * 1, 1.2, 1.5, 2, 2.5, 3, 4, 5, 6, 7, 8, 9 times a power of ten (45 → 40, 19 → 15, 130 → 120).
 * Rounding down keeps the sentence true: a rate above one in N is above p_break, since 1/N ≥ p.
 * N is spelled out below 100 ("forty", "twenty-five"), written in digits from 100 on ("1,500").
 * Below one in two (p > 50 %) there is no such phrase: say the percentage instead.
 */

const MANTISSAS = [1, 1.2, 1.5, 2, 2.5, 3, 4, 5, 6, 7, 8, 9];

/** Tolerance for a ratio computed in floating point that lands a hair under a round number. */
const EPSILON = 1e-9;

/**
 * The round N ≤ `ratio` (= 1/p) a person would say, or null when `ratio` < 2 or is not finite.
 * Pass the ratio itself (e.g. T_repair / (L · t_mask)) rather than 1/p where you can: it is exact.
 */
export function roundOneIn(ratio: number): number | null {
  if (!Number.isFinite(ratio) || ratio < 2) return null;
  const x = ratio * (1 + EPSILON);
  if (x < 10) return Math.floor(x);
  const scale = 10 ** Math.floor(Math.log10(x));
  let best = scale;
  for (const m of MANTISSAS) if (m * scale <= x) best = m * scale;
  return Math.round(best);
}

const ONES = [
  "zero",
  "one",
  "two",
  "three",
  "four",
  "five",
  "six",
  "seven",
  "eight",
  "nine",
  "ten",
  "eleven",
  "twelve",
  "thirteen",
  "fourteen",
  "fifteen",
  "sixteen",
  "seventeen",
  "eighteen",
  "nineteen",
];
const TENS = ["", "", "twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety"];

/** A whole number as it is written in a sentence: words below 100, digits with separators from 100. */
export function numberWords(n: number): string {
  if (!Number.isInteger(n) || n < 0 || n >= 100) return n.toLocaleString("en-US");
  if (n < 20) return ONES[n]!;
  const tens = TENS[Math.floor(n / 10)]!;
  return n % 10 === 0 ? tens : `${tens}-${ONES[n % 10]!}`;
}

/** "about one time in forty" for a ratio of 45; null when no such phrase fits (ratio < 2). */
export function aboutOneIn(ratio: number): string | null {
  const n = roundOneIn(ratio);
  return n === null ? null : `about one time in ${numberWords(n)}`;
}
