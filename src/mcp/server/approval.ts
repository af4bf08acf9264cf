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
 *
 * One prompt per approval: a call whose approval is already being asked about (the same call
 * proposed again, by a model told its first request timed out) waits for that answer instead of
 * asking again. While a call waits, a request that carries a progressToken gets progress
 * notifications, so a client that resets its timeout on progress keeps waiting. An answer that
 * arrives after the client gave up is still recorded, and the gateway, told the request is gone,
 * does not run the call on it: the approval stays for the re-proposal.
 */
import type { RequestId, Server } from "@modelcontextprotocol/server";
import { ToolgateError } from "../../core/errors.js";
import { escapeUntrusted, jsonForDisplay } from "../../observation/escape.js";
import type { Gateway, Proposal } from "../../runtime/types.js";
import type { TraceContextInput } from "../../runtime/trace-context.js";
import type { Observation } from "../../core/observation.js";
import { agoText } from "../../runtime/approvals.js";

/** Errors of `approve`/`deny` that mean the approval was settled by someone else (or by time). */
const DECIDED_ELSEWHERE = new Set(["approval_decided", "approval_expired"]);

/** How long a person has to answer an elicitation before the call stays pending. */
export const DEFAULT_APPROVAL_TIMEOUT_MS = 10 * 60_000;

/** How often a call waiting for a person's answer sends progress (the SDKs' request timeout is 60 s). */
export const DEFAULT_APPROVAL_PROGRESS_MS = 10_000;

/** What either approval channel (elicitation, input-required) hands the gateway with an approved re-proposal. */
export interface ReproposalContext {
  gateway: Gateway;
  /** The caller as the transport authenticated it: recorded as the approver, and it scopes client keys. */
  principal: string;
  /** Fires when the tools/call is gone (the client cancelled it, the connection closed): handed to the gateway. */
  abandoned: AbortSignal;
  /** Fires when the client cancelled the tools/call: aborts the approved call's run. */
  cancelled: AbortSignal;
  /** The caller's trace context, handed to the gateway with the re-proposal. */
  trace?: TraceContextInput;
}

/** Proposes the call again under its approval; the gateway, not the channel, decides what the answer allows. */
export function proposeApproved(ctx: ReproposalContext, proposal: Proposal, approvalId: string): Promise<Observation> {
  return ctx.gateway.call(
    { ...proposal, approval_id: approvalId },
    {
      abandoned: ctx.abandoned,
      principal: ctx.principal,
      signal: ctx.cancelled,
      ...(ctx.trace ? { trace: ctx.trace } : {}),
    },
  );
}

export interface ElicitContext extends ReproposalContext {
  server: Server;
  /** The tools/call request the elicitation belongs to (keeps it on the same HTTP stream). */
  requestId: RequestId;
  timeoutMs: number;
  /** False: never ask, always leave the approval pending for the CLI. */
  elicit: boolean;
  /** Approvals decided with `toolgate approvals` are redeemed: say so in a pending observation. */
  cli: boolean;
  /** Sends the tools/call's n-th progress notification; null when the request carries no progressToken. */
  progress: ((n: number, message: string) => void) | null;
  /** How often `progress` is sent while the call waits for a person, ms. */
  progressMs: number;
}

/** What asking a person came to: a decision recorded (by this prompt or anyone), or none, with why when it is worth
 * saying. */
type Asked = { decided: true } | { decided: false; note?: string };

/** The prompts open per gateway, by approval id: a call for an approval already being asked about waits for that
 * answer. */
const prompts = new WeakMap<Gateway, Map<string, Promise<Asked>>>();

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
  const ranAgo = obs.error?.detail?.identical_call_ran_s_ago;
  return [
    `Approve a destructive call (${obs.authority ?? "A3"})?`,
    `tool: ${escapeUntrusted(proposal.tool)}`,
    `arguments (exactly what will run):`,
    jsonForDisplay(proposal.arguments, 2),
    ...(typeof ranAgo === "number"
      ? [`An identical call (same tool and arguments) ran ${agoText(ranAgo)} ago; approving runs it again.`]
      : []),
    `approval id: ${escapeUntrusted(approvalId)}`,
    `Accept to approve and run it once; decline to deny it.`,
  ].join("\n");
}

export const NOTE_SCHEMA = {
  type: "object" as const,
  properties: {
    note: {
      type: "string" as const,
      title: "Note",
      description: "Optional: recorded with your decision in the approval record.",
      maxLength: 500,
    },
  },
};

/** A pending approval's observation, with the command a person runs to decide it added to the text. */
export function withHint(obs: Observation, approvalId: string): Observation {
  const hint = `A person can decide it from a shell: toolgate approvals approve ${approvalId} (or toolgate approvals deny ${approvalId} --reason "…").`;
  return { ...obs, text: `${obs.text}\n${hint}` };
}

/**
 * Asks the person (or waits for the prompt already open for this approval) and re-proposes. When
 * nobody can be asked (no elicitation capability, the client failed, the person cancelled) the
 * call stays pending: the first observation is returned with the CLI command that decides it.
 */
export async function approveByElicitation(
  ctx: ElicitContext,
  proposal: Proposal,
  obs: Observation,
): Promise<Observation> {
  const approvalId = pendingApprovalId(obs);
  // Nobody is asked for a request already gone: its answer would reach no one.
  if (approvalId === null || ctx.abandoned.aborted) return obs;
  const open = prompts.get(ctx.gateway) ?? new Map<string, Promise<Asked>>();
  prompts.set(ctx.gateway, open);
  let asking = open.get(approvalId);
  if (asking === undefined) {
    if (!ctx.elicit || !ctx.server.getClientCapabilities()?.elicitation) return withCliHint(ctx, obs, approvalId);
    const prompt = ask(ctx, proposal, obs, approvalId);
    open.set(approvalId, (asking = prompt));
    void prompt.then(() => open.get(approvalId) === prompt && open.delete(approvalId));
  }
  const asked = await whileWaiting(ctx, proposal.tool, approvalId, asking);
  if (!asked.decided)
    return withCliHint(ctx, asked.note ? { ...obs, text: `${obs.text}\n${asked.note}` } : obs, approvalId);
  // The gateway, not this adapter, decides what the answer allows (and whether the request is still there to run it
  // for).
  return proposeApproved(ctx, proposal, approvalId);
}

function withCliHint(ctx: ElicitContext, obs: Observation, approvalId: string): Observation {
  return ctx.cli ? withHint(obs, approvalId) : obs;
}

/** `wait`, with a progress notification at once and every `progressMs` while it lasts (when the request asked for
 * progress). */
async function whileWaiting<T>(ctx: ElicitContext, tool: string, approvalId: string, wait: Promise<T>): Promise<T> {
  const progress = ctx.progress;
  if (progress === null) return wait;
  const message = `Waiting for a person to approve ${escapeUntrusted(tool)} (approval ${escapeUntrusted(approvalId)})`;
  let n = 0;
  progress(++n, message);
  const timer = setInterval(() => progress(++n, message), ctx.progressMs);
  try {
    return await wait;
  } finally {
    clearInterval(timer);
  }
}

/**
 * One prompt: asks the person and records the answer through `gateway.approvals`. It runs to its
 * end even when the request that opened it is gone, so a late answer is kept. Never rejects.
 */
async function ask(ctx: ElicitContext, proposal: Proposal, obs: Observation, approvalId: string): Promise<Asked> {
  let answer;
  try {
    answer = await ctx.server.elicitInput(
      { mode: "form", message: approvalMessage(proposal, obs, approvalId), requestedSchema: NOTE_SCHEMA },
      { relatedRequestId: ctx.requestId, timeout: ctx.timeoutMs },
    );
  } catch {
    // The client could not ask (no form support, disconnected, timed out): the approval stays pending.
    return { decided: false };
  }
  const name = ctx.server.getClientVersion()?.name;
  const by = {
    approver: ctx.principal,
    channel: "elicitation" as const,
    ...(typeof name === "string" && name !== "" ? { label: name } : {}),
  };
  const note = typeof answer.content?.note === "string" && answer.content.note !== "" ? answer.content.note : undefined;
  if (answer.action !== "accept" && answer.action !== "decline") return { decided: false };
  try {
    if (answer.action === "accept") {
      await ctx.gateway.approvals.approve(approvalId, note === undefined ? by : { ...by, note });
    } else {
      await ctx.gateway.approvals.deny(approvalId, {
        ...by,
        reason: note ?? "declined by the person asked through MCP elicitation",
      });
    }
  } catch (err) {
    // Decided meanwhile — the CLI may have answered first, or it expired: the gateway reports the
    // approval's real state when the call is proposed again. Anything else stays a readable tool
    // result, never a JSON-RPC error.
    if (!(err instanceof ToolgateError) || !DECIDED_ELSEWHERE.has(err.code)) {
      const reason = err instanceof Error ? err.message : String(err);
      return { decided: false, note: `The answer could not be recorded (${reason}); the approval is still pending.` };
    }
  }
  return { decided: true };
}
