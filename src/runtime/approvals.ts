/**
 * Approvals for A3 calls (docs/authority.md, "Approvals for A3 calls": a proposed action plus
 * an approval boundary). An approval is bound to the tool, the canonical-argument hash and
 * the requester — the trajectory and the exact capability chain that asked (its grant id and a
 * one-way fingerprint of the chain) — and checked against all of them when it is redeemed. It
 * expires, and it is single-use because redeeming it is a compare-and-set on the store
 * (approved → consumed), so two replicas can never both run it.
 *
 * Who decided is recorded as `channel:principal`: the channel the decision came through (`cli`:
 * `toolgate approvals` or the embedder's own code; `elicitation`: the person an MCP client asked)
 * and the principal the channel authenticated (the OS user; the session's bearer credential or
 * peer address). A name the decider gives itself is kept only as an unverified label. The
 * operator chooses which channels may approve (`approve_via`); an approval decided through
 * another one is not redeemed.
 */
import { randomBytes } from "node:crypto";
import { ToolgateError } from "../core/errors.js";
import type { JsonValue } from "../core/json.js";
import type { ApprovalRecord, ApprovalStore } from "../idempotency/store.js";
import type { ApprovalsApi } from "./types.js";

/** How an approval decision reached toolgate. */
export type ApprovalChannel = "cli" | "elicitation";
/** Which channels may approve A3 calls. */
export type ApproveVia = ApprovalChannel | "both";
export const APPROVE_VIA: readonly ApproveVia[] = ["cli", "elicitation", "both"];

export function channelsOf(via: ApproveVia): readonly ApprovalChannel[] {
  return via === "both" ? ["cli", "elicitation"] : [via];
}

/** Longest unverified label kept with an approver. */
const MAX_LABEL = 100;

/** The approver as recorded: `cli:alice`, `elicitation:peer 127.0.0.1 [unverified name "Claude"]`. */
export function formatApprover(channel: ApprovalChannel, principal: string, label?: string): string {
  const named = label?.trim() ? ` [unverified name ${JSON.stringify(label.trim().slice(0, MAX_LABEL))}]` : "";
  return `${channel}:${principal}${named}`;
}

/** The channel a recorded approver decided through; null for one recorded without a channel. */
export function approverChannel(approver: string | null): ApprovalChannel | null {
  const channel = approver?.slice(0, approver.indexOf(":"));
  return channel === "cli" || channel === "elicitation" ? channel : null;
}

/** How long ago something happened, for a person: "42 seconds", "16 minutes", "3 hours". */
export function agoText(seconds: number): string {
  const s = Math.max(0, Math.round(seconds));
  if (s < 120) return `${s} second${s === 1 ? "" : "s"}`;
  if (s < 7200) return `${Math.round(s / 60)} minutes`;
  return `${Math.round(s / 3600)} hours`;
}

/** Default lifetime of an approval request (15 minutes). */
export const DEFAULT_APPROVAL_TTL_MS = 15 * 60 * 1000;

/** What an approval is bound to. */
export interface ApprovalBinding {
  tool: string;
  args_hash: string;
  /** The requesting capability: `<grant id>#<chain fingerprint>`, null without capabilities (`requesterCapability`). */
  capability_id: string | null;
  trajectory_id: string;
}

/** The `capability_id` an approval records for a call granted by `grant_id` through the chain `fingerprint`. */
export function requesterCapability(grant: { grant_id: string; chain_fingerprint: string } | null): string | null {
  return grant === null ? null : `${grant.grant_id}#${grant.chain_fingerprint}`;
}

type Field = "tool" | "arguments" | "capability" | "trajectory";

/** Outcome of checking an approval against a proposal (`checkApproval`). */
export type Redemption =
  | { ok: true; record: ApprovalRecord }
  | {
      ok: false;
      reason: "unknown" | "pending" | "denied" | "expired" | "used" | "mismatch" | "channel";
      record: ApprovalRecord | null;
      field?: Field;
    };

type RequestInput = ApprovalBinding & { arguments: JsonValue; now: number; ttl_ms: number };

function pendingRecord(input: RequestInput): ApprovalRecord {
  return {
    id: `ap_${randomBytes(12).toString("base64url")}`,
    tool: input.tool,
    args_hash: input.args_hash,
    arguments: input.arguments,
    capability_id: input.capability_id,
    trajectory_id: input.trajectory_id,
    state: "pending",
    created_at: input.now,
    expires_at: input.now + input.ttl_ms,
    decided_at: null,
    approver: null,
    note: null,
  };
}

/**
 * Creates a pending approval for a proposed A3 call, or returns the one still live for the same
 * call (tool, arguments, capability, trajectory; pending, approved, or consumed by the call it
 * ran, and not expired), so a model that re-proposes it does not flood the operator's queue and
 * the gate can tell a re-proposal of a call approved or run meanwhile. `reused` says which.
 */
export async function requestApproval(
  approvals: ApprovalStore,
  input: RequestInput,
): Promise<{ record: ApprovalRecord; reused: boolean }> {
  const record = pendingRecord(input);
  const live = await approvals.createOrReuse(record, input.now);
  return { record: live, reused: live.id !== record.id };
}

/** Creates a new pending approval even though one for the same call is live (it cannot serve this call). */
export async function requestNewApproval(approvals: ApprovalStore, input: RequestInput): Promise<ApprovalRecord> {
  const record = pendingRecord(input);
  await approvals.create(record);
  return record;
}

/** Checks the binding without consuming (a consumed approval may still be shown for a replay). */
export function matchBinding(record: ApprovalRecord, b: ApprovalBinding): Field | null {
  if (record.tool !== b.tool) return "tool";
  if (record.args_hash !== b.args_hash) return "arguments";
  if (record.capability_id !== b.capability_id) return "capability";
  if (record.trajectory_id !== b.trajectory_id) return "trajectory";
  return null;
}

/** The approval was decided through one of `channels` (the operator's `approve_via`). */
export function decidedVia(record: ApprovalRecord, channels: readonly ApprovalChannel[]): boolean {
  const channel = approverChannel(record.approver);
  return channel !== null && channels.includes(channel);
}

/**
 * Whether an approval may run this call: binding must match, state must be approved and
 * unexpired, through one of `channels`. Changed arguments, another requester or a channel the
 * operator did not choose never pass. It consumes nothing: `consumeApproval` does, once the run
 * holds the call's idempotency record.
 */
export async function checkApproval(
  approvals: ApprovalStore,
  id: string,
  b: ApprovalBinding,
  now: number,
  channels: readonly ApprovalChannel[],
): Promise<Redemption> {
  const record = await approvals.get(id);
  if (!record) return { ok: false, reason: "unknown", record: null };
  const field = matchBinding(record, b);
  if (field) return { ok: false, reason: "mismatch", record, field };
  if (record.state === "denied") return { ok: false, reason: "denied", record };
  if (record.state === "consumed") return { ok: false, reason: "used", record };
  if (now >= record.expires_at) return { ok: false, reason: "expired", record };
  if (record.state === "pending") return { ok: false, reason: "pending", record };
  if (!decidedVia(record, channels)) return { ok: false, reason: "channel", record };
  return { ok: true, record };
}

/**
 * Spends an approval: the compare-and-set approved → consumed decides the single winner, so two
 * replicas can never both run it. Null when it was no longer approved (used meanwhile).
 */
export function consumeApproval(approvals: ApprovalStore, id: string): Promise<ApprovalRecord | null> {
  return approvals.update(id, "approved", { state: "consumed" });
}

/** `gateway.approvals`: what an operator (CLI, UI) uses to list and decide approvals. */
export function createApprovalsApi(approvals: ApprovalStore, clock: () => number): ApprovalsApi {
  const decide = async (id: string, state: "approved" | "denied", approver: string | null, note: string | null) => {
    const now = clock();
    const record = await approvals.get(id);
    if (!record)
      throw new ToolgateError(
        "approval_not_found",
        `approval ${id} does not exist; run \`toolgate approvals list\` to see the ids`,
      );
    if (record.state !== "pending") {
      throw new ToolgateError(
        "approval_decided",
        `approval ${id} is already ${record.state}${record.approver ? ` (by ${record.approver})` : ""}; an approval is decided once`,
      );
    }
    if (now >= record.expires_at) {
      throw new ToolgateError(
        "approval_expired",
        `approval ${id} expired at ${new Date(record.expires_at).toISOString()}; the agent must propose the call again for a new approval`,
      );
    }
    const updated = await approvals.update(id, "pending", { state, decided_at: now, approver, note });
    if (!updated)
      throw new ToolgateError(
        "approval_decided",
        `approval ${id} was decided by someone else just now; list it again to see the outcome`,
      );
    return updated;
  };
  const channelOf = (input: { channel?: ApprovalChannel }): ApprovalChannel | ToolgateError => {
    const channel = input.channel ?? "cli";
    return channel === "cli" || channel === "elicitation"
      ? channel
      : new ToolgateError(
          "invalid_input",
          `approvals: channel must be "cli" or "elicitation"; received ${JSON.stringify(channel)}`,
        );
  };
  return {
    list: (query = {}) => approvals.list(query),
    approve: (id, input) => {
      if (!input.approver?.trim())
        return Promise.reject(
          new ToolgateError(
            "invalid_input",
            "approve: approver is required (the authenticated principal who approves this call, e.g. the OS user)",
          ),
        );
      const channel = channelOf(input);
      if (channel instanceof ToolgateError) return Promise.reject(channel);
      return decide(id, "approved", formatApprover(channel, input.approver.trim(), input.label), input.note ?? null);
    },
    deny: (id, input) => {
      if (!input.reason?.trim())
        return Promise.reject(
          new ToolgateError(
            "invalid_input",
            'deny: a reason is required; the agent is told it, e.g. --reason "not during the freeze"',
          ),
        );
      const channel = channelOf(input);
      if (channel instanceof ToolgateError) return Promise.reject(channel);
      return decide(
        id,
        "denied",
        input.approver?.trim() ? formatApprover(channel, input.approver.trim(), input.label) : null,
        input.reason,
      );
    },
  };
}
