/**
 * The one reading of a whole-number flag (`--budget-tokens`, `--max-sessions`,
 * `--max-sessions-per-client`, `--grace-ms`, `--session-idle-ms`, the `--limit` of `records list`
 * and `approvals list`): decimal digits only (blanks around them allowed), a safe integer, at
 * least `min`. Each flag words its own refusal; this says only whether the text is one.
 */
export function wholeNumber(text: string, min: number): number | null {
  const n = Number(text);
  return /^\d+$/.test(text.trim()) && Number.isSafeInteger(n) && n >= min ? n : null;
}
