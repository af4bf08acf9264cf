/**
 * A3 approval by elicitation (a destructive call runs only with an idempotency key and an
 * approval). When the gateway answers `approval_required`, the operator lets elicitation approve
 * (`approveVia`) and the client declared the elicitation capability, the person is asked through
 * `elicitation/create`, shown the tool and its exact arguments; their answer is recorded through
 * `gateway.approvals` and the same proposal is sent again with the approval id, so the gateway,
 * not this adapter, decides. Accept → approve; decline → deny; cancel or no answer → the call
 * stays pending and the model gets the `approval_required` observation with the id for
 * `toolgate approvals approve ID`.
 *
 * Whoever answers is the MCP client, which may be the agent itself: the decision is recorded as
 * the `elicitation` channel and the session's authenticated principal (its bearer credential or
 * peer address over HTTP, the process that started toolgate over stdio); the name the client
 * gives itself is kept only as an unverified label.
 */
import type { Server } from "@modelcontextprotocol/sdk/server/index.js";
import type { RequestId } from "@modelcontextprotocol/sdk/types.js";
import { ToolgateError } from "../../core/errors.js";
import { escapeUntrusted, jsonForDisplay } from "../../observation/escape.js";
import type { Gateway, Proposal } from "../../runtime/types.js";
import type { Observation } from "../../core/observation.js";

/** Errors of `approve`/`deny` that mean the approval was settled by someone else (or by time). */
const DECIDED_ELSEWHERE = new Set(["approval_decided", "approval_expired"]);

/** How long a person has to answer an elicitation before the call stays pending. */
export const DEFAULT_APPROVAL_TIMEOUT_MS = 10 * 60_000;

export interface ElicitContext {
  server: Server;
  gateway: Gateway;
  /** The tools/call request the elicitation belongs to (keeps it on the same HTTP stream). */
  requestId: RequestId;
  timeoutMs: number;
  /** False: never ask, always leave the approval pending for the CLI. */
  elicit: boolean;
  /** The session's caller as the transport authenticated it: recorded as the approver. */
  principal: string;
  /** Approvals decided with `toolgate approvals` are redeemed: say so in a pending observation. */
  cli: boolean;
}

/** The approval id an `approval_required` observation carries, if any. */
export function pendingApprovalId(obs: Observation): string | null {
  if (obs.ok || obs.error?.code !== "approval_required") return null;
  const id = obs.error.detail?.approval_id;
  return typeof id === "string" ? id : null;
}

/**
 * The prompt a person reads: tool, authority and the exact arguments that will run. The
 * arguments are the model's: a bidi override or an invisible character in them would make the
 * person read something other than what runs, so they are shown as JSON escapes (`\u202e`).
 */
export function approvalMessage(proposal: Proposal, obs: Observation, approvalId: string): string {
  return [
    `Approve a destructive call (${obs.authority ?? "A3"})?`,
    `tool: ${escapeUntrusted(proposal.tool)}`,
    `arguments (exactly what will run):`,
    jsonForDisplay(proposal.arguments, 2),
    `approval id: ${escapeUntrusted(approvalId)}`,
    `Accept to approve and run it once; decline to deny it.`,
  ].join("\n");
}

const NOTE_SCHEMA = {
  type: "object" as const,
  properties: {
    note: { type: "string" as const, title: "Note", description: "Optional: recorded with your decision in the approval record.", maxLength: 500 },
  },
};

/** A pending approval's observation, with the command a person runs to decide it added to the text. */
export function withHint(obs: Observation, approvalId: string): Observation {
  const hint = `A person can decide it from a shell: toolgate approvals approve ${approvalId} (or toolgate approvals deny ${approvalId} --reason "…").`;
  return { ...obs, text: `${obs.text}\n${hint}` };
}

/**
 * Asks the person and re-proposes. When nobody can be asked (no elicitation capability, the
 * client failed, the person cancelled) the call stays pending: the first observation is
 * returned with the CLI command that decides it.
 */
export async function approveByElicitation(ctx: ElicitContext, proposal: Proposal, obs: Observation): Promise<Observation> {
  const approvalId = pendingApprovalId(obs);
  if (approvalId === null) return obs;
  const withCliHint = (o: Observation, id: string) => (ctx.cli ? withHint(o, id) : o);
  if (!ctx.elicit || !ctx.server.getClientCapabilities()?.elicitation) return withCliHint(obs, approvalId);
  let answer;
  try {
    answer = await ctx.server.elicitInput(
      { mode: "form", message: approvalMessage(proposal, obs, approvalId), requestedSchema: NOTE_SCHEMA },
      { relatedRequestId: ctx.requestId, timeout: ctx.timeoutMs },
    );
  } catch {
    // The client could not ask (no form support, disconnected, timed out): the approval stays pending.
    return withCliHint(obs, approvalId);
  }
  const name = ctx.server.getClientVersion()?.name;
  const by = { approver: ctx.principal, channel: "elicitation" as const, ...(typeof name === "string" && name !== "" ? { label: name } : {}) };
  const note = typeof answer.content?.note === "string" && answer.content.note !== "" ? answer.content.note : undefined;
  if (answer.action !== "accept" && answer.action !== "decline") return withCliHint(obs, approvalId);
  try {
    if (answer.action === "accept") {
      await ctx.gateway.approvals.approve(approvalId, note === undefined ? by : { ...by, note });
    } else {
      await ctx.gateway.approvals.deny(approvalId, { ...by, reason: note ?? "declined by the person asked through MCP elicitation" });
    }
  } catch (err) {
    // Decided meanwhile — a repeated proposal shares one pending approval, and a person or the
    // CLI may have answered first, or it expired: the gateway reports the approval's real state
    // when the call is proposed again. Anything else stays a readable tool result, never a
    // JSON-RPC error.
    if (!(err instanceof ToolgateError) || !DECIDED_ELSEWHERE.has(err.code)) {
      const reason = err instanceof Error ? err.message : String(err);
      return withCliHint({ ...obs, text: `${obs.text}
The answer could not be recorded (${reason}); the approval is still pending.` }, approvalId);
    }
  }
  return ctx.gateway.call({ ...proposal, approval_id: approvalId });
}
