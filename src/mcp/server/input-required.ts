/**
 * A3 approval in the 2026-07-28 revision, which has no server-to-client requests: the server
 * answers the tools/call with an input-required result embedding one form elicitation, and the
 * client retries the same call carrying the person's answer (`inputResponses`) and the
 * `requestState` it was given, byte for byte.
 *
 * The approval is the gateway's own: `requestState` is the approval id the gateway gave the call,
 * and on the retry the call is proposed again, so the gateway names the approval that belongs to
 * exactly this tool, these canonical arguments, this capability and this requester. An answer is
 * recorded only when that id is the one the retry carries: a retry that carries an answer given for
 * another call (other arguments, another capability) approves nothing. The state is not secret:
 * forging it only names an approval the same call would be given anyway.
 *
 * Accept → approve; decline → deny; cancel, no answer, or a client that cannot elicit → the call
 * stays pending and the model gets the `approval_required` observation with the id for
 * `toolgate approvals approve ID`, exactly as in the 2025-11-25 revision.
 */
import { inputRequired, inputResponse, type InputRequiredResult } from "@modelcontextprotocol/server";
import { ToolgateError } from "../../core/errors.js";
import type { Observation } from "../../core/observation.js";
import type { Proposal } from "../../runtime/types.js";
import { escapeUntrusted } from "../../observation/escape.js";
import { approvalMessage, NOTE_SCHEMA, pendingApprovalId, proposeApproved, withHint } from "./approval.js";
import type { ReproposalContext } from "./approval.js";

/** The key of the one embedded request, in `inputRequests` and in the retry's `inputResponses`. */
export const APPROVAL_INPUT_KEY = "toolgate/approval";

export interface InputRequiredContext extends ReproposalContext {
  /** The operator lets the client's person approve, and this request's client declared elicitation. */
  elicit: boolean;
  /** Approvals decided with `toolgate approvals` are redeemed: say so in a pending observation. */
  cli: boolean;
  /** The name the client gives itself: kept only as an unverified label. */
  label: string | undefined;
  /** The retry's answers, as the SDK lifted them from the request. */
  inputResponses: Record<string, unknown> | undefined;
  /** The retry's `requestState`, as the client echoed it; undefined on a first request. */
  requestState: unknown;
  /**
   * Runs the call on its recorded approval instead of `proposeApproved`: a call that may ask its
   * client questions as it runs is held for the retries that answer them (call-held.ts), and
   * answers with its observation or its first questions.
   */
  propose?: (approvalId: string) => Promise<Observation | InputRequiredResult>;
}

/** Errors of `approve`/`deny` that mean the approval was settled by someone else (or by time). */
const DECIDED_ELSEWHERE = new Set(["approval_decided", "approval_expired"]);

function pending(ctx: InputRequiredContext, obs: Observation, approvalId: string, note?: string): Observation {
  const noted = note === undefined ? obs : { ...obs, text: `${obs.text}\n${note}` };
  return ctx.cli ? withHint(noted, approvalId) : noted;
}

/**
 * The answer to an `approval_required` observation in the 2026-07-28 revision: the input-required
 * result that asks the person, or (on the retry) the observation of the call run on the
 * recorded answer, or the pending observation when nothing was decided.
 */
export async function approveByInputRequired(
  ctx: InputRequiredContext,
  proposal: Proposal,
  obs: Observation,
): Promise<Observation | InputRequiredResult> {
  const approvalId = pendingApprovalId(obs);
  if (approvalId === null || ctx.abandoned.aborted) return obs;
  if (!ctx.elicit) return pending(ctx, obs, approvalId);
  const answer = inputResponse(ctx.inputResponses, APPROVAL_INPUT_KEY);
  if (answer.kind === "missing") {
    return inputRequired({
      inputRequests: {
        [APPROVAL_INPUT_KEY]: inputRequired.elicit({
          mode: "form",
          message: approvalMessage(proposal, obs, approvalId),
          requestedSchema: NOTE_SCHEMA,
        }),
      },
      requestState: approvalId,
    });
  }
  if (ctx.requestState !== approvalId) {
    const given = typeof ctx.requestState === "string" ? escapeUntrusted(ctx.requestState.slice(0, 100)) : "none";
    return pending(
      ctx,
      obs,
      approvalId,
      `The answer this request carried was not given for this call (its requestState names approval ${given}, this call's approval is ${approvalId}), so it was not recorded; call again without inputResponses to be asked about this call.`,
    );
  }
  if (answer.kind !== "elicit" || (answer.action !== "accept" && answer.action !== "decline"))
    return pending(ctx, obs, approvalId);
  const content = answer.content as Record<string, unknown> | undefined;
  const note = typeof content?.note === "string" && content.note !== "" ? content.note.slice(0, 500) : undefined;
  const by = {
    approver: ctx.principal,
    channel: "elicitation" as const,
    ...(ctx.label !== undefined && ctx.label !== "" ? { label: ctx.label } : {}),
  };
  try {
    if (answer.action === "accept")
      await ctx.gateway.approvals.approve(approvalId, note === undefined ? by : { ...by, note });
    else
      await ctx.gateway.approvals.deny(approvalId, {
        ...by,
        reason: note ?? "declined by the person asked through an MCP input-required request",
      });
  } catch (err) {
    if (!(err instanceof ToolgateError) || !DECIDED_ELSEWHERE.has(err.code)) {
      const reason = err instanceof Error ? err.message : String(err);
      return pending(
        ctx,
        obs,
        approvalId,
        `The answer could not be recorded (${reason}); the approval is still pending.`,
      );
    }
  }
  // The gateway, not this adapter, decides what the answer allows.
  return ctx.propose ? ctx.propose(approvalId) : proposeApproved(ctx, proposal, approvalId);
}
