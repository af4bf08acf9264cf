/**
 * zod v4 → the published JSON Schema (draft 2020-12, `$schema` set): the input read as the
 * model writes it (`io: "input"`, so a field with a default is not required), every object
 * closed (seed 000, "Schema Rules for Tool Definitions", rule 1), descriptions carried.
 */
import { z } from "zod";
import { ToolgateError } from "./errors.js";
import { isRecord } from "./lint/util.js";

export const DRAFT_2020_12 = "https://json-schema.org/draft/2020-12/schema";

/** Converts a zod schema; throws ToolgateError `tool_invalid` for types JSON Schema cannot say (dates, functions, …). */
export function publishSchema(tool: string, which: "input" | "output", schema: z.ZodType): Record<string, unknown> {
  let json: Record<string, unknown>;
  try {
    json = z.toJSONSchema(schema, { target: "draft-2020-12", io: which, unrepresentable: "throw" }) as Record<string, unknown>;
  } catch (err) {
    throw new ToolgateError("tool_invalid", `tool ${tool}: its ${which} schema cannot be published as JSON Schema: ${(err as Error).message}. Use JSON types only (a date is z.iso.date(), not z.date()).`, { cause: err });
  }
  closeObjects(json);
  return { $schema: DRAFT_2020_12, ...json };
}

/** Sets `additionalProperties: false` on every object with properties that says nothing about extra keys (iteratively: no depth limit). */
export function closeObjects(root: unknown): void {
  const stack: unknown[] = [root];
  while (stack.length > 0) {
    const node = stack.pop();
    if (Array.isArray(node)) {
      stack.push(...node);
      continue;
    }
    if (!isRecord(node)) continue;
    if (isRecord(node.properties) && node.additionalProperties === undefined && node.unevaluatedProperties === undefined) node.additionalProperties = false;
    for (const [key, value] of Object.entries(node)) {
      // `properties`/`$defs` values are schemas; `default`, `const`, `enum`, `examples` are data and stay as written.
      if (key === "default" || key === "const" || key === "enum" || key === "examples") continue;
      if (typeof value === "object" && value !== null) stack.push(value);
    }
  }
}
