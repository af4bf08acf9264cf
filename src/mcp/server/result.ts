/**
 * Observation → MCP `CallToolResult`. Every refusal is a tool result with `isError: true` that a
 * model can read, never a JSON-RPC error (MCP 2025-11-25: an error is an observation too). The structured part of an observation that is not the output (error code,
 * issues, replay, truncation, post-state) rides in `_meta["toolgate/observation"]` so clients and
 * tests can act on it without parsing text; `structuredContent` carries only a successful output,
 * because a client validates it against the tool's outputSchema.
 *
 * Budgets bound the text. When the text was cut, `structuredContent` is left out — unless the
 * tool declares an outputSchema, where MCP requires a conforming structured result and a cut
 * object would not conform; clients that put structured results in front of a model should use
 * the text for such tools (`_meta["toolgate/observation"].truncated` says it was cut).
 */
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import type { JsonValue } from "../../core/json.js";
import type { Observation } from "../../core/observation.js";
import { isPlainObject } from "../../core/json.js";

/** The `_meta` key under which the observation's structured fields travel. */
export const OBSERVATION_META = "toolgate/observation";

/** The observation without its output and text: what a client needs to branch on. */
export function observationMeta(obs: Observation): Record<string, JsonValue> {
  const meta: Record<string, JsonValue> = { ok: obs.ok, tool: obs.tool, call_id: obs.call_id };
  if (obs.authority) meta.authority = obs.authority;
  if (obs.error) meta.error = obs.error as unknown as JsonValue;
  if (obs.replay) meta.replay = true;
  if (obs.truncated) meta.truncated = obs.truncated;
  if (obs.next) meta.next = obs.next;
  if (obs.state) meta.state = obs.state;
  return meta;
}

/** The tools/call result for one observation; `hasOutputSchema`: the tool declares an outputSchema. */
export function toCallToolResult(obs: Observation, hasOutputSchema = false): CallToolResult {
  const result: CallToolResult = {
    content: [{ type: "text", text: obs.text }],
    _meta: { [OBSERVATION_META]: observationMeta(obs) },
  };
  if (!obs.ok) result.isError = true;
  else if (isPlainObject(obs.output) && (obs.truncated === undefined || hasOutputSchema)) result.structuredContent = obs.output;
  return result;
}

/**
 * An ok observation whose output breaks the tool's outputSchema (`problems`, from
 * output-check.ts): the text the model reads plus what did not match, as an `isError` result,
 * since a client rejects such a `structuredContent`. A write says that it ran.
 */
export function outputMismatchResult(obs: Observation, problems: readonly string[]): CallToolResult {
  const ran = obs.authority === "A2" || obs.authority === "A3" ? " The call was not refused: it ran and its effect happened, so do not call it again to retry." : "";
  const message = `${obs.tool} ran, but its result does not match the outputSchema it publishes in tools/list:\n${problems.map((p) => `- ${p}`).join("\n")}\nThe result is shown above as text only.${ran} Tell the tool's author.`;
  return {
    content: [{ type: "text", text: `${obs.text}\n${message}` }],
    _meta: { [OBSERVATION_META]: { ...observationMeta(obs), ok: false, error: { code: "output_invalid", message } } },
    isError: true,
  };
}