/**
 * Observation → MCP `CallToolResult`. Every refusal is a tool result with `isError: true` that a
 * model can read, never a JSON-RPC error (MCP 2025-11-25: an error is an observation too). The structured part of an
 * observation that is not the output (error code,
 * issues, replay, truncation, post-state) rides in `_meta["toolgate/observation"]` so clients and
 * tests can act on it without parsing text; `structuredContent` carries only a successful output,
 * because a client validates it against the tool's outputSchema.
 *
 * Budgets bound the text, and what a client may hand a model beside it. When the gateway cut the
 * text, `structuredContent` is left out — unless the tool declares an outputSchema, where MCP
 * requires a structured result: then it is cut too (`observation/structured.ts`: strings and
 * arrays shortened, keys kept) to no more characters than the cut text, and the text says so.
 * If the cut one no longer matches the outputSchema, the result carries the text only, as an
 * `isError` result that says the call itself succeeded.
 */
import type { CallToolResult } from "@modelcontextprotocol/server";
import type { JsonValue } from "../../core/json.js";
import type { Observation } from "../../core/observation.js";
import { isPlainObject } from "../../core/json.js";
import { boundJson } from "../../observation/structured.js";

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

/**
 * The tools/call result for one observation; `hasOutputSchema`: the tool declares an outputSchema,
 * and `conforms` tells whether a cut structured result still matches it.
 */
export function toCallToolResult(
  obs: Observation,
  hasOutputSchema = false,
  conforms: (cut: JsonValue) => boolean = () => true,
): CallToolResult {
  const result: CallToolResult = {
    content: [{ type: "text", text: obs.text }],
    _meta: { [OBSERVATION_META]: observationMeta(obs) },
  };
  if (!obs.ok) result.isError = true;
  else if (isPlainObject(obs.output)) {
    if (!obs.truncated?.omitted_tokens) result.structuredContent = obs.output;
    else if (hasOutputSchema) return withCutStructure(result, obs, conforms);
  }
  return result;
}

/** The structured result of an observation whose text the gateway cut, bounded like the text. */
function withCutStructure(
  result: CallToolResult,
  obs: Observation,
  conforms: (cut: JsonValue) => boolean,
): CallToolResult {
  const bounded = boundJson(obs.output!, obs.text.length);
  if (bounded && isPlainObject(bounded.value) && conforms(bounded.value)) {
    const { strings, arrays } = bounded.cuts;
    const what = [
      strings > 0 ? `${plural(strings, "string")} shortened (ending "…[N characters cut]")` : "",
      arrays > 0 ? `${plural(arrays, "array")} cut to its first items` : "",
    ]
      .filter(Boolean)
      .join(" and ");
    result.structuredContent = bounded.value;
    result.content = [
      {
        type: "text",
        text: `${obs.text}\nThe structured result is cut to the same size as this text: ${what}; the marker above says how to get the rest.`,
      },
    ];
    return result;
  }
  const ran =
    obs.authority === "A2" || obs.authority === "A3" ? ": it ran and its effect happened, so do not call it again" : "";
  const message = `The result is larger than the observation budget, and cut to fit it would no longer match the outputSchema ${obs.tool} publishes, so only the text above is given and this result is marked isError. The call itself succeeded${ran}; the marker above says how to get the rest.`;
  return {
    content: [{ type: "text", text: `${obs.text}\n${message}` }],
    _meta: { [OBSERVATION_META]: { ...observationMeta(obs), ok: false, error: { code: "output_too_large", message } } },
    isError: true,
  };
}

function plural(n: number, word: string): string {
  return n === 1 ? `1 ${word}` : `${n} ${word}s`;
}

/**
 * An ok observation whose output breaks the tool's outputSchema (`problems`, from
 * output-check.ts): the text the model reads plus what did not match, as an `isError` result,
 * since a client rejects such a `structuredContent`. A write says that it ran.
 */
export function outputMismatchResult(obs: Observation, problems: readonly string[]): CallToolResult {
  const ran =
    obs.authority === "A2" || obs.authority === "A3"
      ? " The call was not refused: it ran and its effect happened, so do not call it again to retry."
      : "";
  const list = problems.map((p) => `- ${p}`).join("\n");
  // A replayed result was stored by an earlier run or by an operator (`toolgate records settle`):
  // who to tell is the operator, not the tool's author.
  const message = obs.replay
    ? `This call already ran; its stored result (kept by an earlier run, or given by an operator settling the call) does not match the outputSchema ${obs.tool} publishes in tools/list:\n${list}\nThe result is shown above as text only. Do not call it again to retry; tell the operator, who can inspect it with toolgate records show.`
    : `${obs.tool} ran, but its result does not match the outputSchema it publishes in tools/list:\n${list}\nThe result is shown above as text only.${ran} Tell the tool's author.`;
  return {
    content: [{ type: "text", text: `${obs.text}\n${message}` }],
    _meta: { [OBSERVATION_META]: { ...observationMeta(obs), ok: false, error: { code: "output_invalid", message } } },
    isError: true,
  };
}
