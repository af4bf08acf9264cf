/**
 * Secret redaction (docs/observations.md): keys and configured env values are redacted from every
 * observation. The gateway knows the secret values it was configured with; every observation —
 * text and structured fields — passes through one redactor before it leaves the boundary.
 */
import { ToolgateError } from "../core/errors.js";
import type { JsonValue } from "../core/json.js";

/** What replaces a secret value. */
export const REDACTED = "[REDACTED]";

/** Secrets shorter than this would redact ordinary words; refused at configuration time. */
export const MIN_SECRET_LENGTH = 6;

export interface Redactor {
  /** True when there is nothing to redact (the fast path skips the walk). */
  readonly empty: boolean;
  text(value: string): string;
  json<T extends JsonValue | undefined>(value: T): T;
}

/**
 * Builds a redactor for `secrets` (values, e.g. from `process.env`). Longer secrets are replaced
 * first so a secret containing a shorter one is hidden whole.
 */
export function createRedactor(secrets: readonly string[]): Redactor {
  const values = [...new Set(secrets.filter((s) => s.length > 0))].sort((a, b) => b.length - a.length);
  for (const s of values) {
    if (s.length < MIN_SECRET_LENGTH) {
      throw new ToolgateError(
        "invalid_config",
        `secrets: every secret must be at least ${MIN_SECRET_LENGTH} characters (received one of ${s.length}); a shorter value would redact ordinary text — drop it or configure the full secret`,
      );
    }
  }
  const text = (value: string): string => {
    let out = value;
    for (const s of values) if (out.includes(s)) out = out.split(s).join(REDACTED);
    return out;
  };
  const json = <T extends JsonValue | undefined>(value: T): T =>
    values.length === 0 ? value : (walk(value, text) as T);
  return { empty: values.length === 0, text, json };
}

function walk(value: JsonValue | undefined, text: (s: string) => string): JsonValue | undefined {
  if (typeof value === "string") return text(value);
  if (Array.isArray(value)) return value.map((v) => walk(v, text) as JsonValue);
  if (value !== null && typeof value === "object") {
    const out: { [key: string]: JsonValue } = {};
    for (const [k, v] of Object.entries(value)) out[text(k)] = walk(v, text) as JsonValue;
    return out;
  }
  return value;
}
