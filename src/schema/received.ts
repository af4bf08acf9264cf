/** How a received value appears in an observation: short, in code points, never the whole payload. */

/** At most this many code points of a received value are echoed back to the model. */
export const RECEIVED_MAX = 80;

export function cut(text: string, max = RECEIVED_MAX): string {
  // No more UTF-16 units than the bound: no more code points either.
  if (text.length <= max) return text;
  // Slice the UTF-16 string first so a 5 MB value costs no more than its head.
  const head = Array.from(text.length > max * 2 + 2 ? text.slice(0, max * 2 + 2) : text);
  if (head.length <= max) return text;
  return `${head.slice(0, max).join("")}… (${codePoints(text)} characters)`;
}

export function codePoints(text: string): number {
  let n = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c < 0xd800 || c > 0xdbff || i + 1 >= text.length) n++;
    else {
      n++;
      i++;
    }
  }
  return n;
}

/** Strings as written (`3/5/26`), everything else as JSON; cut to a bound. */
export function showValue(value: unknown): string {
  if (typeof value === "string") return cut(value);
  if (value === undefined) return "nothing";
  let json: string | undefined;
  try {
    json = JSON.stringify(value);
  } catch (err) {
    // Nested deeper than the serialiser goes: String() would recurse as deep.
    if (err instanceof RangeError) return "a value nested too deeply to show";
    json = undefined;
  }
  try {
    return cut(json ?? String(value));
  } catch {
    return "a value that cannot be shown";
  }
}

/** The JSON type of a value, as a model would name it. */
export function jsonType(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "array";
  if (typeof value === "number") return Number.isInteger(value) ? "integer" : "number";
  return typeof value;
}

/** A typed rendering for type mismatches, where the raw form would hide the type: `"50" (string)`. */
export function showTyped(value: unknown): string {
  const shown = typeof value === "string" ? cut(JSON.stringify(value)) : showValue(value);
  return `${shown} (${jsonType(value)})`;
}
