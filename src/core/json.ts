/** JSON as toolgate passes it around: values, schemas, and the one plain-object test. */

/** JSON Schema (draft 2020-12 or draft-07) as plain JSON. */
export type JsonSchema = Record<string, unknown> | boolean;

export type JsonValue = null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue };

/** A plain object (not null, not an array): the shape every reader of foreign JSON checks first. */
export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
