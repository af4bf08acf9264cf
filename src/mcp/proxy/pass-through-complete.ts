/**
 * The pass-through's completions: a completion/complete for a prompt or a resource template sent
 * to the upstream that serves it (an empty answer when that upstream offers none), at most
 * `MAX_VALUES` values of at most `MAX_VALUE_CHARS` characters passed on.
 */
import type { CompleteRequestParams, CompleteResult } from "@modelcontextprotocol/client";
import { ask, invalid, isObject, shown, type Item, type PassThroughSource, type Routed } from "./pass-through-ask.js";
import type { Served } from "./pass-through-lists.js";
import { promptOf } from "./pass-through-prompts.js";

/** Completion values passed on (MCP's own bound) and each one's length. */
const MAX_VALUES = 100;
const MAX_VALUE_CHARS = 1_024;

/** What `UpstreamPassThrough.complete` does: routes `params.ref` through `served`, asks only `withCompletions`. */
export function passThroughCompletions(
  served: Served,
  withCompletions: readonly PassThroughSource[],
): (params: CompleteRequestParams, request: Routed) => Promise<CompleteResult> {
  return async (params, request) => {
    const ref = params.ref as { type: string; name?: string; uri?: string };
    let owner: PassThroughSource;
    let upstreamRef: Item;
    if (ref.type === "ref/prompt") {
      const prompt = promptOf(served, "completion/complete", "params.ref.name", String(ref.name));
      owner = prompt.source;
      upstreamRef = { type: "ref/prompt", name: prompt.name };
    } else {
      const uri = String(ref.uri);
      const found = served.templates.find((t) => t.item.uriTemplate === uri)?.source ?? served.byUri.get(uri)?.source;
      if (!found)
        throw invalid(
          `completion/complete params.ref.uri ${shown(uri)} is not a resource template this server serves; call resources/templates/list for them`,
        );
      owner = found;
      upstreamRef = { type: "ref/resource", uri };
    }
    if (!withCompletions.includes(owner)) return { completion: { values: [], hasMore: false } };
    request.routed?.(owner.server);
    const answer = await ask(
      owner,
      "completion/complete",
      {
        ref: upstreamRef,
        argument: params.argument,
        ...(params.context !== undefined ? { context: params.context } : {}),
      },
      request.signal,
    );
    const c = isObject(answer.completion) ? answer.completion : {};
    const values = (Array.isArray(c.values) ? c.values : [])
      .filter((v): v is string => typeof v === "string" && v.length <= MAX_VALUE_CHARS)
      .slice(0, MAX_VALUES);
    return {
      completion: {
        values,
        ...(typeof c.total === "number" && Number.isSafeInteger(c.total) && c.total >= 0 ? { total: c.total } : {}),
        ...(typeof c.hasMore === "boolean" ? { hasMore: c.hasMore } : {}),
      },
    };
  };
}
