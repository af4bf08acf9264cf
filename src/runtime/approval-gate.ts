/**
 * The approval boundary for A3 calls (seed 000: destructive or irreversible → key + approval;
 * seed 003, exercise 2: "a proposed action plus an approval boundary"). The first proposal asks
 * for an approval bound to (tool, canonical-argument hash, capability id); a re-proposal with the
 * approval id and the same arguments proceeds exactly once.
 */
import type { JsonValue } from "../schema/types.js";
import type { Store } from "../idempotency/store.js";
import { redeemApproval, requestApproval, type ApprovalBinding } from "./approvals.js";
import { refuse, type Refusal } from "./call.js";
import { NoEffectError } from "../schema/errors.js";

export interface ApprovalGateInput {
  binding: ApprovalBinding;
  arguments: JsonValue;
  trajectory_id: string;
  approval_id: string | undefined;
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

/** null when the call may proceed to settle, REPLAY_ONLY when settle may only replay it; otherwise what the model is told. */
export async function approvalGate(store: Store, input: ApprovalGateInput): Promise<null | typeof REPLAY_ONLY | Refusal> {
  const { binding: b } = input;
  if (input.approval_id === undefined) {
    // The same call re-sent after it ran (its answer lost, or over MCP elicitation, where the
    // client never held an approval id): settle answers with the stored result. Asking a person
    // again would queue a decision about a call that will not run.
    if ((await store.records.get(input.key, input.now))?.state === "COMPLETED") return REPLAY_ONLY;
    const { record, reused } = await requestApproval(store.approvals, { ...b, arguments: input.arguments, trajectory_id: input.trajectory_id, now: input.now, ttl_ms: input.ttl_ms });
    const requested = reused
      ? `Approval ${record.id}, requested earlier for exactly these arguments, is still pending: no person has decided yet; it expires at ${iso(record.expires_at)}.`
      : `Approval ${record.id} was requested for exactly these arguments and expires at ${iso(record.expires_at)}.`;
    return refuse(
      "approval_required",
      `${b.tool} is destructive (A3) and needs a person's approval before it runs; nothing was executed. ${requested} Once it is approved, propose the same call again with approval_id "${record.id}" and the same arguments.`,
      { detail: { approval_id: record.id, expires_at: iso(record.expires_at), state: "pending", ...(reused ? { reused: true } : {}) } },
    );
  }
  const id = input.approval_id;
  const r = await redeemApproval(store.approvals, id, b, input.now);
  if (r.ok) return null;
  const again = `Propose the call without approval_id to request a new approval; nothing was executed.`;
  switch (r.reason) {
    case "unknown":
      return refuse("approval_invalid", `approval_id ${JSON.stringify(id)} does not exist. ${again}`, { detail: { approval_id: id, reason: "unknown" } });
    case "mismatch": {
      const what = r.field === "arguments" ? "different arguments" : r.field === "tool" ? `another tool (${r.record!.tool})` : "another capability";
      return refuse(
        "approval_invalid",
        `Approval ${id} was given for ${what}, not for this call to ${b.tool}. An approval covers exactly the call it was requested for. ${again}`,
        { detail: { approval_id: id, reason: `changed_${r.field}` } },
      );
    }
    case "pending":
      return refuse(
        "approval_required",
        `Approval ${id} is still pending: no person has decided yet; nothing was executed. Wait, then propose the same call again with approval_id "${id}" (it expires at ${iso(r.record!.expires_at)}).`,
        { detail: { approval_id: id, expires_at: iso(r.record!.expires_at), state: "pending" } },
      );
    case "denied":
      return refuse(
        "approval_denied",
        `Approval ${id} was denied${r.record!.approver ? ` by ${r.record!.approver}` : ""}: ${r.record!.note ?? "no reason given"}. Nothing was executed. Do not retry this call; tell the user and choose another way.`,
        { detail: { approval_id: id, reason: r.record!.note ?? null } },
      );
    case "expired":
      return refuse("approval_invalid", `Approval ${id} expired at ${iso(r.record!.expires_at)}. ${again}`, { detail: { approval_id: id, reason: "expired" } });
    case "used":
      // The same call re-sent after it ran: settle answers with the stored result, never a second run.
      if (await store.records.get(input.key, input.now)) return REPLAY_ONLY;
      return refuse("approval_invalid", `Approval ${id} was already used: an approval runs one call exactly once. ${again}`, { detail: { approval_id: id, reason: "used" } });
  }
}
