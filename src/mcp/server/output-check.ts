/**
 * Does an observation's output conform to the outputSchema its tool publishes in tools/list?
 * MCP requires a conforming `structuredContent` when a tool declares one, and the SDK client
 * checks it and throws a protocol error otherwise (-32602); checking here lets the server answer
 * a tool's bad result with a readable `isError` result instead (MCP 2025-11-25, "Output Schema").
 */
import { renderIssue } from "../../schema/issue-text.js";
import type { JsonSchema } from "../../core/json.js";
import { createValidator } from "../../schema/validate.js";

/** The problems with `output` as sentences, or null when it conforms (or the schema cannot be compiled: then the client
 * judges). */
export type OutputCheck = (tool: string, schema: JsonSchema, output: unknown) => string[] | null;

let shared: OutputCheck | undefined;

/** One check for the process: compiled schemas are cached per schema object, so every session (HTTP) shares them. */
export function outputCheck(): OutputCheck {
  return (shared ??= createOutputCheck());
}

function createOutputCheck(): OutputCheck {
  const validator = createValidator();
  return (tool, schema, output) => {
    if (typeof schema !== "object") return null;
    let verdict;
    try {
      verdict = validator.validate({ name: tool, inputSchema: schema }, output);
    } catch {
      return null;
    }
    return verdict.ok ? null : verdict.issues.map(renderIssue);
  };
}
