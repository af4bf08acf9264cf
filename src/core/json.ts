/** JSON as toolgate passes it around: values, schemas, and the one plain-object test. */

/** JSON Schema (draft 2020-12 or draft-07) as plain JSON. */
export type JsonSchema = Record<string, unknown> | boolean;

export type JsonValue = null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue };

/** A plain object (not null, not an array): the shape every reader of foreign JSON checks first. */
export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/**
 * Whether `value` nests objects and arrays more than `max` levels deep; it looks no deeper than
 * `max + 1`, so a hostile nesting is judged before anything serialises (or recurses through) it.
 */
export function nestedDeeper(value: unknown, max: number, level = 0): boolean {
  if (level > max) return true;
  const children = Array.isArray(value) ? value : isPlainObject(value) ? Object.values(value) : [];
  return children.some((v) => nestedDeeper(v, max, level + 1));
}
