/** How messages name a value that arrived instead of the one expected. */

/** What arrived instead of the expected shape: "null", "an array", "an object with keys a, b", or its type. */
export function shapeOf(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  return typeof value === "object"
    ? `an object with keys ${Object.keys(value).slice(0, 5).join(", ") || "(none)"}`
    : typeof value;
}

/** A value as a message quotes it: its kind, and for a primitive its JSON text, cut short. */
export function describe(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  return typeof value === "object" ? "an object" : `${typeof value} ${short(JSON.stringify(value) ?? String(value))}`;
}

/** Cuts a text for a message (code points, not UTF-16 units). */
export function short(text: string, max = 60): string {
  const cps = Array.from(text.length > max * 4 ? text.slice(0, max * 4) : text);
  return cps.length > max ? cps.slice(0, max).join("") + "…" : text;
}
