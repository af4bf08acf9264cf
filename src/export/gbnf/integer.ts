/**
 * Integer ranges as GBNF (for `toGbnf`): an expression admitting exactly the canonical
 * decimal forms (no leading zeros, no `+`, no `-0`) of the integers in [min, max], either end
 * open. Built digit length by digit length, splitting each fixed-length range at its first
 * differing digit — the usual range-to-regular-expression construction.
 */

const digits = (lo: number, hi: number) => (lo === hi ? `"${lo}"` : `[${lo}-${hi}]`);

/** Same-length decimal strings a ≤ b: the expression for every string between them. */
function fixedRange(a: string, b: string): string {
  if (a.length === 0) return "";
  if (a === b) return `"${a}"`;
  const rest = a.length - 1;
  const any = rest === 0 ? "" : rest === 1 ? " [0-9]" : ` [0-9]{${rest}}`;
  const a0 = Number(a[0]);
  const b0 = Number(b[0]);
  if (a0 === b0) return `"${a[0]}" ${fixedRange(a.slice(1), b.slice(1))}`.trim();
  if (/^0*$/.test(a.slice(1)) && /^9*$/.test(b.slice(1))) return `${digits(a0, b0)}${any}`;
  const alts = [`"${a0}" ${fixedRange(a.slice(1), "9".repeat(rest))}`.trim()];
  if (a0 + 1 <= b0 - 1) alts.push(`${digits(a0 + 1, b0 - 1)}${any}`);
  alts.push(`"${b0}" ${fixedRange("0".repeat(rest), b.slice(1))}`.trim());
  return `(${alts.join(" | ")})`;
}

/** Non-negative integers in [lo, hi] (hi = Infinity for no upper end). */
function naturals(lo: number, hi: number): string {
  const alts: string[] = [];
  const loLen = String(lo).length;
  const hiLen = hi === Infinity ? loLen : String(hi).length;
  for (let len = loLen; len <= hiLen; len++) {
    const from = len === loLen ? lo : 10 ** (len - 1);
    const to = hi !== Infinity && len === hiLen ? hi : 10 ** len - 1;
    alts.push(fixedRange(String(from), String(to)));
  }
  // Every longer number is above any finite lower end.
  if (hi === Infinity) alts.push(`[1-9] [0-9]{${loLen},}`);
  return alts.length === 1 ? alts[0]! : `(${alts.join(" | ")})`;
}

/**
 * The integers in [min, max] (safe integers; ±Infinity for an open end). Returns null for an
 * empty range.
 */
export function integerRange(min: number, max: number): string | null {
  if (min > max) return null;
  const parts: string[] = [];
  if (min < 0) {
    // Negative part: "-" then the magnitudes in [max(1, -max), -min].
    const magLo = max < 0 ? -max : 1;
    parts.push(`"-" ${naturals(magLo, min === -Infinity ? Infinity : -min)}`);
  }
  if (max >= 0) parts.push(naturals(Math.max(0, min), max));
  return parts.length === 1 ? parts[0]! : `(${parts.join(" | ")})`;
}
