/**
 * What a thrown handler becomes (docs/idempotency.md: an exception does not prove
 * that the effect did not happen). The tool's message is untrusted text and is fenced; the
 * gateway's own sentence says what is known about the effect and what the model should do.
 */
import { NoEffectError } from "../core/errors.js";
import type { ToolSpec } from "../core/tool.js";
import { refuse, type Refusal } from "./call.js";
import { CancelledBeforeStart, ExecutionAborted } from "./execute.js";

/**
 * `none`: nothing happened (NoEffectError, or a released key); `safe`: A0/A1, repeating is
 * harmless; `in_doubt`: A2/A3, the record stays IN_DOUBT under `key`.
 */
export type EffectKnowledge = { effect: "none" } | { effect: "safe" } | { effect: "in_doubt"; key: string };

export function thrownRefusal(tool: ToolSpec, error: unknown, known: EffectKnowledge): Refusal {
  const message = (error as Error)?.message ?? String(error);
  if (error instanceof CancelledBeforeStart) {
    return refuse(
      "cancelled",
      `${tool.name} was cancelled by the caller before it started; nothing was run and nothing changed. Call it again if it is still wanted.`,
      { detail: { cancelled: "before_start" } },
    );
  }
  if (error instanceof NoEffectError) {
    return refuse(
      "precondition_failed",
      `${tool.name} refused before doing anything (${error.code}); nothing changed. Read its message below, fix the cause, and call again.`,
      { untrusted: message, detail: { reason: error.code } },
    );
  }
  const aborted = error instanceof ExecutionAborted ? error : null;
  if (aborted?.reason === "cancelled") return cancelledRefusal(tool, known);
  const code = aborted?.reason === "timeout" ? "timeout" : "tool_failed";
  const what = aborted
    ? `${tool.name} ${aborted.message}.${aborted.reason === "timeout" ? ` ${timeoutHint(tool)}` : ""}`
    : `${tool.name} failed: it threw the error below.`;
  switch (known.effect) {
    case "none":
    case "safe":
      return refuse(
        code,
        `${what} ${tool.effect === "read" ? "It only reads" : "It is idempotent"}, so calling again is safe once the cause is fixed.`,
        {
          ...(aborted ? {} : { untrusted: message }),
        },
      );
    case "in_doubt":
      return refuse(
        code,
        `${what} Whether its effect happened is unknown, so the call is recorded as in doubt (key ${known.key}) and repeating it is refused until it is settled. Do not retry it under a new call_id; check the current state with a read-only tool or tell the user.`,
        { ...(aborted ? {} : { untrusted: message }), detail: { key: known.key, record_state: "IN_DOUBT" } },
      );
  }
}

/**
 * A call its caller cancelled while it ran. A read (or an idempotent call) was stopped and
 * changed nothing that a repeat would not; a write that had started may have done part of its
 * work, so its record stays IN_DOUBT exactly as a crash at that moment would leave it.
 */
function cancelledRefusal(tool: ToolSpec, known: EffectKnowledge): Refusal {
  if (known.effect !== "in_doubt") {
    return refuse(
      "cancelled",
      `${tool.name} was cancelled by the caller while it ran and was stopped. ${tool.effect === "read" ? "It only reads, so nothing changed" : "It is idempotent, so repeating it is safe"}; call it again if the answer is still wanted.`,
      { detail: { cancelled: "stopped" } },
    );
  }
  return refuse(
    "cancelled",
    `${tool.name} was cancelled by the caller after it had started and was stopped, so it may have done part of its work. The call is recorded as in doubt (key ${known.key}), as a crash at that moment would leave it, and repeating it is refused until it is settled. Do not retry it under a new call_id; check the current state with a read-only tool or tell the user.`,
    { detail: { cancelled: "in_doubt", key: known.key, record_state: "IN_DOUBT" } },
  );
}

/** How to get more time than the limit that cut the call: the tool's own hint, else who sets the limit. */
function timeoutHint(tool: ToolSpec): string {
  return (
    tool.timeout_hint ??
    `The limit is ${tool.name}'s time limit, set where toolgate is configured (the tool's timeout_ms, or the gateway's); if the work needs longer, tell the user, or split it into smaller calls.`
  );
}

/**
 * An A0/A1 result that JSON cannot carry (a cycle, a BigInt): the tool ran, so "nothing was
 * executed" would be false, and repeating it fails the same way until the tool is fixed.
 */
export function unrenderableRefusal(tool: ToolSpec, error: unknown): Refusal {
  return refuse(
    "tool_failed",
    `${tool.name} ran but returned a result that is not JSON data (the reason is below), so it cannot be shown. ${tool.effect === "read" ? "It only reads" : "It is idempotent"}, so calling again is safe, but it will fail the same way until the tool returns plain JSON data; tell the user or the tool's author.`,
    { untrusted: (error as Error)?.message ?? String(error) },
  );
}
