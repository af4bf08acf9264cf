/**
 * Flags `toolgate serve` and `toolgate proxy` share, parsed to settings with errors that name
 * the flag, the value and an example.
 */
import { MIN_BUDGET_TOKENS } from "../observation/budget.js";
import { ToolgateError } from "../core/errors.js";

export interface GatewayFlags {
  store?: string;
  keys?: string;
  capability?: string;
  audit?: string;
  budgetTokens?: string;
  http?: string;
}

/** `--budget-tokens N`: a whole number of at least MIN_BUDGET_TOKENS, or undefined when absent. */
export function parseBudget(text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  const n = Number(text);
  if (!/^\d+$/.test(text.trim()) || !Number.isSafeInteger(n) || n < MIN_BUDGET_TOKENS) {
    throw new ToolgateError("bad_flag", `--budget-tokens must be a whole number of o200k tokens, at least ${MIN_BUDGET_TOKENS} (a cut needs room for its marker); received ${JSON.stringify(text)}; example --budget-tokens 2000`);
  }
  return n;
}
