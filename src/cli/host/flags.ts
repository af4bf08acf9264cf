/**
 * Flags `toolgate serve` and `toolgate proxy` share, parsed to settings with errors that name
 * the flag, the value and an example.
 */
import { MIN_BUDGET_TOKENS } from "../../observation/budget.js";
import { ToolgateError } from "../../core/errors.js";
import { wholeNumber } from "../whole-number.js";

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
  const n = wholeNumber(text, MIN_BUDGET_TOKENS);
  if (n === null) {
    throw new ToolgateError("bad_flag", `--budget-tokens must be a whole number of o200k tokens, at least ${MIN_BUDGET_TOKENS} (a cut needs room for its marker); received ${JSON.stringify(text)}; example --budget-tokens 2000`);
  }
  return n;
}

export interface ListenAddress {
  host: string;
  port: number;
}

/** Parses `HOST:PORT`, `:PORT` or `PORT` (host defaults to loopback), `[::1]:PORT` for IPv6. */
export function parseListenAddress(text: string): ListenAddress {
  const m = /^(?:(\[[0-9a-fA-F:.]+\]|[^:[\]]*):)?(\d{1,5})$/.exec(text.trim());
  const port = m ? Number(m[2]) : NaN;
  if (!m || port > 65535) {
    throw new ToolgateError("bad_address", `--http must be HOST:PORT, :PORT or PORT with a port from 0 to 65535; received ${JSON.stringify(text)}; example 127.0.0.1:8765`);
  }
  const host = m[1] ? m[1].replace(/^\[|\]$/g, "") : "127.0.0.1";
  return { host, port };
}
