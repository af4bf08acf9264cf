/**
 * The approval boundary for A3 calls (docs/authority.md: destructive or irreversible → key + approval;
 * a proposed action plus an approval boundary). The first proposal asks
 * for an approval bound to (tool, canonical-argument hash, requesting capability chain,
 * trajectory); a re-proposal with the approval id, by the same requester with the same
 * arguments, proceeds exactly once, when a channel the operator chose approved it.
 */
import type { JsonValue } from "../core/json.js";
import type { Store } from "../idempotency/store.js";
import type { ApprovalRecord } from "../idempotency/store.js";
import { approverChannel, redeemApproval, requestApproval, type ApprovalBinding, type ApprovalChannel } from "./approvals.js";
import { refuse, type Refusal } from "./call.js";
import { NoEffectError } from "../core/errors.js";

export interface ApprovalGateInput {
  binding: ApprovalBinding;
  arguments: JsonValue;
  approval_id: string | undefined;
  /** Channels whose approvals this gateway redeems. */
  channels: readonly ApprovalChannel[];
  /** The call's idempotency key: a used approval may still reach settle when this exact call ran (a replay). */
  key: string;
  now: number;
  ttl_ms: number;
}

const iso = (ms: number) => new Date(ms).toISOString();

/**
 * The call may reach settle only to be answered from its record: this exact call already ran
 * under an approval. Settle must not run it again even if the record has meanwhile expired
 * (between this read and settle's claim): the gateway then hands settle `refuseRun`.
 */
export const REPLAY_ONLY = "replay_only";

/** The `run` settle gets for a REPLAY_ONLY call: if settle claims the key after all, nothing runs and the key is released. */
export function refuseRun(tool: string): never {
  throw new NoEffectError(
    `${tool} is destructive (A3) and this call's earlier run is no longer on record (it expired), so it cannot be replayed and was not run again; nothing was executed. Propose the call without approval_id to request a new approval.`,
    "approval_required",
  );
}

/** The gate let the call through: to run under `approval`, or (REPLAY_ONLY) only to be answered from its record. */
export interface Passed {
  pass: "run" | typeof REPLAY_ONLY;
  /** The approval redeemed (or shown for the replay), for the audit; null for a replay without one. */
  approval: ApprovalRecord | null;
}

/** The approval an audit line names: its id, and who decided it through which channel. */
export function auditedApproval(record: ApprovalRecord | null): { id: string; channel: string | null; approver: string | null } | null {
  return record === null ? null : { id: record.id, channel: approverChannel(record.approver), approver: record.approver };
}

/** A refusal of the gate, with the approval it concerns (for the audit) when there is one. */
export type GateRefusal = Refusal & { approval: ApprovalRecord | null };

function no(refusal: Refusal, approval: ApprovalRecord | null): GateRefusal {
  return { ...refusal, approval };
}

/** How the call may proceed to settle; otherwise what the model is told. */
export async function approvalGate(store: Store, input: ApprovalGateInput): Promise<Passed | GateRefusal> {
  const { binding: b } = input;
  if (input.approval_id === undefined) {
    // The same call re-sent after it ran (its answer lost, or over MCP elicitation, where the
    // client never held an approval id): settle answers with the stored result. Asking a person
    // again would queue a decision about a call that will not run.
    if ((await store.records.get(input.key, input.now))?.state === "COMPLETED") return { pass: REPLAY_ONLY, approval: null };
    const { record, reused } = await requestApproval(store.approvals, { ...b, arguments: input.arguments, now: input.now, ttl_ms: input.ttl_ms });
    const requested = reused
      ? `Approval ${record.id}, requested earlier for exactly these arguments, is still pending: no person has decided yet; it expires at ${iso(record.expires_at)}.`
      : `Approval ${record.id} was requested for exactly these arguments and expires at ${iso(record.expires_at)}.`;
    return no(refuse(
      "approval_required",
      `${b.tool} is destructive (A3) and needs a person's approval before it runs; nothing was executed. ${requested} Once it is approved, propose the same call again with approval_id "${record.id}" and the same arguments.`,
      { detail: { approval_id: record.id, expires_at: iso(record.expires_at), state: "pending", ...(reused ? { reused: true } : {}) } },
    ), record);
  }
  const id = input.approval_id;
  const r = await redeemApproval(store.approvals, id, b, input.now, input.channels);
  if (r.ok) return { pass: "run", approval: r.record };
  const again = `Propose the call without approval_id to request a new approval; nothing was executed.`;
  switch (r.reason) {
    case "unknown":
      return no(refuse("approval_invalid", `approval_id ${JSON.stringify(id)} does not exist. ${again}`, { detail: { approval_id: id, reason: "unknown" } }), null);
    case "mismatch": {
      const what = {
        arguments: "different arguments",
        tool: `another tool (${r.record!.tool})`,
        capability: "a call made with another capability",
        trajectory: "a call of another trajectory",
      }[r.field!];
      return no(refuse(
        "approval_invalid",
        `Approval ${id} was given for ${what}, not for this call to ${b.tool}. An approval covers exactly the call it was requested for. ${again}`,
        { detail: { approval_id: id, reason: `changed_${r.field}` } },
      ), r.record);
    }
    case "pending":
      return no(refuse(
        "approval_required",
        `Approval ${id} is still pending: no person has decided yet; nothing was executed. Wait, then propose the same call again with approval_id "${id}" (it expires at ${iso(r.record!.expires_at)}).`,
        { detail: { approval_id: id, expires_at: iso(r.record!.expires_at), state: "pending" } },
      ), r.record);
    case "denied":
      return no(refuse(
        "approval_denied",
        `Approval ${id} was denied${r.record!.approver ? ` by ${r.record!.approver}` : ""}: ${r.record!.note ?? "no reason given"}. Nothing was executed. Do not retry this call; tell the user and choose another way.`,
        { detail: { approval_id: id, reason: r.record!.note ?? null } },
      ), r.record);
    case "channel":
      return no(refuse(
        "approval_invalid",
        `Approval ${id} was decided through ${approverChannel(r.record!.approver) ?? "an unnamed channel"}, which this server does not accept for destructive calls (it accepts ${input.channels.join(" and ")}). ${again}`,
        { detail: { approval_id: id, reason: "channel" } },
      ), r.record);
    case "expired":
      return no(refuse("approval_invalid", `Approval ${id} expired at ${iso(r.record!.expires_at)}. ${again}`, { detail: { approval_id: id, reason: "expired" } }), r.record);
    case "used":
      // The same call re-sent after it ran: settle answers with the stored result, never a second run.
      if (await store.records.get(input.key, input.now)) return { pass: REPLAY_ONLY, approval: r.record };
      return no(refuse("approval_invalid", `Approval ${id} was already used: an approval runs one call exactly once. ${again}`, { detail: { approval_id: id, reason: "used" } }), r.record);
  }
}
