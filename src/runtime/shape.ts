/**
 * Stage 6, shape: the executed (or replayed) result becomes the one observation shape, rendered
 * for the model within the tool's token budget, output fenced as untrusted data and redacted
 * (docs/observations.md: "Observation is a budget"; "No silent writes": name the new state).
 */
import type { AuthorityLevel } from "../core/tool.js";
import { renderResult, type Rendered, type RenderOptions } from "../observation/observation-text.js";
import type { Executed } from "./execute.js";

export interface ShapeInput {
  tool: string;
  call_id: string;
  authority: AuthorityLevel;
  result: Executed;
  replay: boolean;
}

export function shape(input: ShapeInput, opts: RenderOptions): Rendered {
  const r = input.result;
  return renderResult(
    {
      tool: input.tool,
      call_id: input.call_id,
      authority: input.authority,
      output: r.output,
      ...(r.text !== undefined ? { text: r.text } : {}),
      ...(r.state ? { state: r.state } : {}),
      ...(r.next ? { next: r.next } : {}),
      ...(r.truncated ? { tool_truncated: r.truncated } : {}),
      ...(r.content !== undefined ? { content: r.content } : {}),
      ...(input.replay ? { replay: true } : {}),
    },
    opts,
  );
}
