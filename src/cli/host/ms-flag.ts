/** Millisecond flags (`--grace-ms`, `--session-idle-ms`): a whole number, with an error that names the flag, the value
 * and an example. */
import { CliError } from "../io.js";
import { wholeNumber } from "../whole-number.js";

/** Parses `text` as whole milliseconds of at least `min`; a usage error otherwise. */
export function parseMsFlag(flag: string, text: string, limits: { min: number; example: number }): number {
  const ms = wholeNumber(text, limits.min);
  if (ms === null) {
    const floor = limits.min > 0 ? ` of at least ${limits.min}` : "";
    throw new CliError(
      `${flag} must be a whole number of milliseconds${floor}, e.g. ${flag} ${limits.example}; received ${JSON.stringify(text)}`,
    );
  }
  return ms;
}

/** Shorter than this, a session would close between one call of a client and its next. */
export const MIN_SESSION_IDLE_MS = 1000;

/** `--session-idle-ms N` of `toolgate serve` and `toolgate proxy`; undefined when absent (the default applies). Only
 * sessions over `--http` expire. */
export function parseSessionIdle(text: string | undefined, http: boolean): number | undefined {
  if (text === undefined) return undefined;
  if (!http)
    throw new CliError(
      "--session-idle-ms applies to Streamable HTTP sessions: add --http HOST:PORT, or drop it (over stdio the session ends with the client)",
    );
  return parseMsFlag("--session-idle-ms", text, { min: MIN_SESSION_IDLE_MS, example: 1_800_000 });
}
