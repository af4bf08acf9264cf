/**
 * The rate stage, after grant and before anything is approved, claimed or run: a call counts in
 * the windows the operator set for its tool (per tool, per server, per grant holder) in the
 * guard store, so replicas sharing the store share the limits. A full window refuses the call
 * with when to retry (`retry_after_ms`); nothing was executed. Every proposal that passes grant
 * counts, a repeat of a completed call included: the limit bounds what an agent asks, not only
 * what reaches the tool.
 */
import type { RateStore, RateWindow } from "../idempotency/guard-store.js";
import { refuse, type Refusal } from "./call.js";

/** A window of a call, with the words that name it to the model ("calls of fs__read_file"). */
export interface LabelledWindow extends RateWindow {
  label: string;
}

export interface RateLimits {
  store: RateStore;
  /**
   * The windows a call of `tool` counts in. `holder` names the issued grant the call's capability
   * verifies as (shared by every attenuation of it), or null without keys or a token.
   */
  windows(tool: string, holder: string | null): readonly LabelledWindow[];
  /** Whether any window is per holder, so the stage looks the holder up (one more verify per call). */
  perHolder: boolean;
}

/** Null when the call may go on; else the refusal that says which limit and when to retry. */
export async function rateLimit(
  limits: RateLimits,
  tool: string,
  holder: () => Promise<string | null>,
  now: number,
): Promise<Refusal | null> {
  const windows = limits.windows(tool, limits.perHolder ? await holder() : null);
  if (windows.length === 0) return null;
  let decision;
  try {
    decision = await limits.store.take(windows, now);
  } catch (err) {
    return refuse(
      "store_unavailable",
      `The rate limits of ${tool} could not be checked, so the call was not run; nothing was executed. Retry in a moment.`,
      { detail: { code: "rate_store_unavailable" }, untrusted: (err as Error)?.message ?? String(err) },
    );
  }
  if (decision.ok) return null;
  const full = windows.find((w) => w.key === decision.key);
  return refuse(
    "rate_limited",
    `Too many calls: ${full?.label ?? tool} may run at most ${decision.limit} times per ${seconds(decision.window_ms)}, and that many already ran in this window. Nothing was executed; retry after ${seconds(decision.retry_after_ms)} (retry_after_ms ${decision.retry_after_ms}), or do something else meanwhile.`,
    {
      detail: {
        code: "rate_limited",
        retry_after_ms: decision.retry_after_ms,
        limit: decision.limit,
        window_ms: decision.window_ms,
      },
    },
  );
}

function seconds(ms: number): string {
  return ms < 1000 ? `${ms} ms` : `${Math.round(ms / 100) / 10} s`;
}
