/**
 * Stage 4, settle: A2 and A3 calls run through the idempotency record (docs/idempotency.md),
 * keyed by the derived key or the client's key; A0/A1 calls skip it. Every outcome
 * that is not a fresh execution becomes an observation saying what happened and what to do.
 * The record stores what the model may see: the result, a probe's result and a thrown message
 * pass through the gateway's redactor before the store gets them, so a replay answers with the
 * redacted result and no configured secret rests in the store.
 */
import type { JsonValue } from "../core/json.js";
import type { ProbeOutcome, ToolContext, ToolSpec } from "../core/tool.js";
import { runOnce, type RunOnceOptions } from "../idempotency/run-once.js";
import type { InDoubtCause, RunOnceOutcome } from "../idempotency/outcome.js";
import type { Store } from "../idempotency/store.js";
import { StoreUnavailableError } from "../idempotency/errors.js";
import { storableResult } from "../idempotency/transitions.js";
import type { Redactor } from "../observation/redact.js";
import { refuse, type Refusal } from "./call.js";
import { fromStored, type Executed } from "./execute.js";
import { thrownRefusal } from "./failures.js";

export interface Settled {
  result: Executed;
  replay: boolean;
  record_state: string | null;
}

export interface SettleStageInput {
  store: Store;
  tool: ToolSpec;
  args: JsonValue;
  ctx: ToolContext;
  key: string;
  fingerprint: string;
  lease_ms: number;
  now: () => number;
  run: () => Promise<Executed>;
  /** The key the client supplied, when it did (`key` is then its scoped record key): named in a refusal. */
  client_key?: string;
  /** Applied to what the record stores (the result, a probe's result, a thrown message). */
  redactor: Redactor;
}

/** Runs `run` at most once for the key; returns the result (fresh or replayed) or a refusal. */
export async function settleStage(
  input: SettleStageInput,
): Promise<Settled | (Refusal & { record_state: string | null })> {
  const { tool, redactor } = input;
  const options: RunOnceOptions = {
    lease_ms: input.lease_ms,
    fingerprint: input.fingerprint,
    tool: tool.name,
    now: input.now,
    ...(tool.probe
      ? {
          probe: async () =>
            redactProbe(
              await redacting(redactor, () => tool.probe!(input.args as Record<string, unknown>, input.ctx)),
              redactor,
            ),
        }
      : {}),
  };
  // Without a secret to redact the run is handed over as it is: two async layers less on every write.
  const run = redactor.empty ? input.run : async () => redactResult(await redacting(redactor, input.run), redactor);
  let outcome: RunOnceOutcome;
  try {
    outcome = await runOnce(input.store, input.key, run, options);
  } catch (err) {
    if (err instanceof StoreUnavailableError) {
      const ran = err.effect !== "not_started";
      return {
        ...refuse(
          "store_unavailable",
          ran
            ? `The idempotency store failed after ${tool.name} ran, so its result was not recorded; the call is treated as in doubt. Do not retry; tell the operator (key ${input.key}).`
            : `The idempotency store is unavailable, so ${tool.name} was not run; nothing changed. Retry the same call later.`,
          { detail: { key: input.key } },
        ),
        record_state: ran ? "IN_DOUBT" : null,
      };
    }
    throw err;
  }
  const key = input.key;
  const state = (o: { record: { state: string } | null }) => o.record?.state ?? null;
  switch (outcome.status) {
    case "executed":
      return { result: fromStored(outcome.result), replay: false, record_state: "COMPLETED" };
    case "replay":
      return { result: fromStored(outcome.result), replay: true, record_state: "COMPLETED" };
    case "in_flight": {
      const s = Math.max(1, Math.ceil(outcome.retry_after_ms / 1000));
      return {
        ...refuse(
          "in_flight",
          `This call was started by an earlier attempt (key ${key}) that is still running or whose executor died; it was not run a second time. Send the same call again in about ${s} s: you will get its result if it finished, or an in_doubt answer to settle if it did not.`,
          { detail: { key, retry_after_ms: outcome.retry_after_ms } },
        ),
        record_state: "IN_FLIGHT",
      };
    }
    case "key_reused":
      return {
        ...refuse(
          "key_reused",
          `${input.client_key !== undefined ? `idempotency_key ${JSON.stringify(input.client_key)}` : `This call's idempotency key (${key})`} was already used for a call to ${tool.name} with different arguments; this call was not run. Use a new key for a new call, or repeat the original arguments to get the original result.`,
          { detail: { key } },
        ),
        record_state: state(outcome),
      };
    case "released_no_effect":
      return { ...thrownRefusal(tool, outcome.error, { effect: "none" }), record_state: null };
    case "in_doubt":
      if (outcome.cause === "execute_failed")
        return { ...thrownRefusal(tool, outcome.error, { effect: "in_doubt", key }), record_state: "IN_DOUBT" };
      return {
        ...refuse(
          "in_doubt",
          `Whether this call took effect is unknown (key ${key}): ${IN_DOUBT_WHY[outcome.cause]}. It will not be run again until an operator settles it. Do not retry it under a new call_id; check the current state with a read-only tool or tell the user.`,
          { detail: { key, cause: outcome.cause } },
        ),
        record_state: "IN_DOUBT",
      };
  }
}

/** Runs `fn`; a message it throws is redacted in place (the record's IN_DOUBT reason quotes it), the error itself kept.
 * */
async function redacting<T>(redactor: Redactor, fn: () => T | Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    if (!redactor.empty && err instanceof Error) {
      const message = redactor.text(err.message);
      if (message !== err.message) err.message = message;
    }
    throw err;
  }
}

/** The result as the record will store it; one the store would refuse (not JSON) is left for runOnce to report. */
function redactResult(result: Executed, redactor: Redactor): Executed {
  if (redactor.empty || !storableResult(result).ok) return result;
  return redactor.json(result as unknown as JsonValue) as unknown as Executed;
}

function redactProbe(outcome: ProbeOutcome, redactor: Redactor): ProbeOutcome {
  if (redactor.empty || outcome?.outcome !== "applied" || !storableResult(outcome.result).ok) return outcome;
  return { ...outcome, result: redactor.json(outcome.result) };
}

/**
 * Why the effect is unknown, in the gateway's words: runOnce's reason can quote the tool's
 * thrown message, which is untrusted text and stays out of the gateway's own sentence.
 */
const IN_DOUBT_WHY: Record<InDoubtCause, string> = {
  execute_failed: "the tool failed before confirming its effect",
  result_not_json: "the tool ran but returned a result that cannot be stored",
  lease_expired: "an earlier attempt did not finish within its lease",
  lease_lost: "an earlier attempt finished after its lease ran out",
  unsettled: "an earlier attempt failed before confirming its effect and has not been settled",
  probe_unknown: "the tool's probe could not tell whether it happened",
  probe_failed: "the tool's probe failed",
  probe_busy: "another party is settling it right now",
};
