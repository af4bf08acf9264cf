/**
 * zod v4 → the published JSON Schema (draft 2020-12, `$schema` set): the input read as the
 * model writes it (`io: "input"`, so a field with a default is not required), every object
 * closed (docs/schemas.md, TG001), descriptions carried.
 */
import { z } from "zod";
import { ToolgateError } from "../core/errors.js";
import { closeOpenObjects } from "./close.js";

export const DRAFT_2020_12 = "https://json-schema.org/draft/2020-12/schema";

/** Converts a zod schema; throws ToolgateError `tool_invalid` for types JSON Schema cannot say (dates, functions, …).
 * */
export function publishSchema(tool: string, which: "input" | "output", schema: z.ZodType): Record<string, unknown> {
  let json: Record<string, unknown>;
  try {
    json = z.toJSONSchema(schema, { target: "draft-2020-12", io: which, unrepresentable: "throw" }) as Record<
      string,
      unknown
    >;
  } catch (err) {
    throw new ToolgateError(
      "tool_invalid",
      `tool ${tool}: its ${which} schema cannot be published as JSON Schema: ${(err as Error).message}. Use JSON types only (a date is z.iso.date(), not z.date()).`,
      { cause: err },
    );
  }
  return { $schema: DRAFT_2020_12, ...closeOpenObjects(json).schema };
}
