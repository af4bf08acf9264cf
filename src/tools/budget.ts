/**
 * How much of the observation budget a tool's own text may use (docs/observations.md: the operator's budget
 * applies to every tool): the call's `ctx.budget_tokens` minus the gateway's frame around the
 * text. A tool that ends its window or page within this is never cut by the gateway, so its own
 * continuation (next offset, cursor) stays exact.
 */
import { frameTokens, type ResultParts } from "../observation/observation-text.js";
import { countTokens } from "../observation/tokens.js";
import type { ToolContext } from "../core/tool.js";

/** The least a tool's text is given, even under a budget mostly taken by the frame. */
const MIN_TEXT_TOKENS = 40;

export type BudgetContext = Pick<ToolContext, "budget_tokens" | "call_id">;

/**
 * Tokens left for the tool's text under `ctx`, at most `cap` (the tool's own limit); `cap` when
 * called outside a gateway. `frame` describes what the gateway adds: pass the post-state and the
 * continuation with their largest numbers.
 */
export function textBudget(
  ctx: BudgetContext | undefined,
  frame: Omit<ResultParts, "output" | "text" | "call_id">,
  cap: number,
): number {
  if (!ctx) return cap;
  return Math.max(MIN_TEXT_TOKENS, Math.min(cap, ctx.budget_tokens - frameTokens({ ...frame, call_id: ctx.call_id })));
}

/**
 * Shrinks a first estimate `n` (from summing per-item counts, which are not additive at the seams)
 * until `render(k)` really fits `maxTokens`; never below one item, so paging never stalls.
 */
export function fitCount(n: number, render: (k: number) => string, maxTokens: number): number {
  let k = n;
  for (let tokens = countTokens(render(k)); tokens > maxTokens && k > 1; tokens = countTokens(render(k))) {
    k = Math.max(1, k - Math.max(1, Math.ceil(((tokens - maxTokens) * k) / tokens)));
  }
  return k;
}
