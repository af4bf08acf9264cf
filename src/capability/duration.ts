/** Durations as people type them (`90s`, `10m`, `1h`, `7d`, `500ms`), for `--ttl`. */
import { ToolgateError } from "../core/errors.js";

const UNITS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** Milliseconds in `text`; throws ToolgateError naming the accepted forms. */
export function parseDuration(text: string, what = "duration"): number {
  const m = /^(\d+(?:\.\d+)?)(ms|s|m|h|d)$/.exec(text.trim());
  const ms = m ? Math.round(Number(m[1]) * UNITS[m[2]!]!) : NaN;
  if (!Number.isSafeInteger(ms) || ms <= 0) {
    throw new ToolgateError(
      "invalid_duration",
      `${what} must be a positive number with a unit (ms, s, m, h, d), e.g. 10m or 1h; received ${JSON.stringify(text)}`,
    );
  }
  return ms;
}
