/**
 * `read_more`: the built-in tool that returns what a budget cut removed, in order, one page per
 * call (docs/observations.md, "Observation is a budget"). Enabled by `continuations` on the gateway;
 * it is read-only (A0) and reads only the gateway's own cursor cache.
 */
import { NoEffectError } from "../core/errors.js";
import { toolResult, type ToolSpec } from "../core/tool.js";
import { takeHead } from "../observation/budget.js";
import { CURSOR_PATTERN, type ContinuationCache } from "../observation/continuations.js";

export const READ_MORE = "read_more";

/** Tokens a page leaves for the observation's frame (header, fence lines, continuation line). */
const FRAME_TOKENS = 150;

export function readMoreTool(cache: ContinuationCache, budget_tokens: number): ToolSpec {
  const page = Math.max(50, budget_tokens - FRAME_TOKENS);
  return {
    name: READ_MORE,
    title: "Read the rest of a cut result",
    description:
      "Returns the part of an earlier tool result that was cut to fit the observation budget, in order, one page per call. Use the cursor named in the cut marker; cursors expire after 15 minutes.",
    inputSchema: {
      $schema: "https://json-schema.org/draft/2020-12/schema",
      type: "object",
      properties: {
        cursor: {
          type: "string",
          pattern: CURSOR_PATTERN,
          description: "The cursor from a cut marker, e.g. m_Ab3dEf5hIj7kLm9n.",
        },
      },
      required: ["cursor"],
      additionalProperties: false,
    },
    effect: "read",
    budget_tokens,
    handler: (args: Record<string, unknown>) => {
      const cursor = args.cursor as string;
      const entry = cache.get(cursor);
      if (!entry) {
        throw new NoEffectError(
          `cursor ${cursor} is unknown or expired (cursors live 15 minutes in the gateway that made them); call the original tool again with a narrower query`,
          "cursor_expired",
        );
      }
      const { head, rest } = takeHead(entry.text, page);
      if (!rest) return toolResult(head, { text: head });
      const next = cache.reserve();
      cache.put(next, { ...entry, text: rest });
      return toolResult(head, {
        text: head,
        next: { arguments: { cursor: next }, hint: `more of the ${entry.tool} result (call ${entry.call_id})` },
      });
    },
  };
}
