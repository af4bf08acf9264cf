/**
 * Stage 6, shape: the executed (or replayed) result becomes the one observation shape, rendered
 * for the model within the tool's token budget, output fenced as untrusted data and redacted
 * (docs/observations.md: "Observation is a budget"; "No silent writes": name the new state).
 */
import type { AuthorityLevel } from "../core/tool.js";
import { renderError, renderResult, type Rendered, type RenderOptions } from "../observation/observation-text.js";
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
  if (r.failed) return failedAnswer(input, opts);
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

/**
 * The tool's own failure answer: an error observation quoting it. A write's answer is recorded,
 * so the text says a repeat returns it again rather than trying again.
 */
function failedAnswer(input: ShapeInput, opts: RenderOptions): Rendered {
  const r = input.result;
  const recorded = input.authority === "A2" || input.authority === "A3";
  const message = `${input.tool} answered with a failure (its message is below); it did not crash, so this is its answer.${
    recorded
      ? input.replay
        ? " This is the recorded answer of an earlier execution of the same call, replayed; it was not run again."
        : " The answer is recorded: the same call returns it again without running."
      : ""
  } Read the message, fix the cause, and make a new call with corrected arguments.`;
  return renderError(
    {
      tool: input.tool,
      call_id: input.call_id,
      authority: input.authority,
      code: "tool_failed",
      message,
      detail: { reason: "tool_answered_failure", ...(input.replay ? { replay: true } : {}) },
      untrusted: r.text ?? (typeof r.output === "string" ? r.output : JSON.stringify(r.output)),
    },
    opts,
  );
}
