/**
 * The approval boundary for A3 calls (docs/authority.md: destructive or irreversible → key + approval;
 * a proposed action plus an approval boundary). The first proposal asks for an approval bound to
 * (tool, canonical-argument hash, requesting capability chain, trajectory); a re-proposal by the
 * same requester with the same arguments proceeds exactly once, when a channel the operator chose
 * approved it — with the approval id, or found by that binding while it is live.
 *
 * A proposal that carries no call id of its own (`joins`: each attempt got a fresh one from the
 * adapter) is the logical call of the approval live for its binding, keyed by that approval
 * (`keyFor`): a re-proposal while it is pending shares it, one after it was approved runs the call
 * once, one after the call ran is answered from its record. A call whose caller gave up
 * (`abandoned`) does not run on an approval that is there by now: the approval stays approved for
 * the re-proposal. The approval is consumed only by the run that holds the call's idempotency
 * record (`consumeApproval` inside settle), so two re-proposals never both run it.
 */
import type { JsonValue } from "../core/json.js";
import type { Store } from "../idempotency/store.js";
import type { ApprovalRecord } from "../idempotency/store.js";
import {
  agoText,
  approverChannel,
  checkApproval,
  consumeApproval,
  decidedVia,
  requestApproval,
  requestNewApproval,
  type ApprovalBinding,
  type ApprovalChannel,
} from "./approvals.js";
import { refuse, type Refusal } from "./call.js";
import { NoEffectError } from "../core/errors.js";

export interface ApprovalGateInput {
  binding: ApprovalBinding;
  arguments: JsonValue;
  approval_id: string | undefined;
  /** Channels whose approvals this gateway redeems. */
  channels: readonly ApprovalChannel[];
  /** The call's idempotency key from its own ids (or the client's key): a used approval may still reach settle when
   * this exact call ran (a replay). */
  key: string;
  /** The proposal has no call id or key of its own: it is the logical call of the approval live for its binding, keyed
   * by `keyFor`. */
  joins: boolean;
  /** The idempotency key of the logical call an approval was asked for, for a proposal that `joins`. */
  keyFor: (approvalId: string) => string;
  /** Fires when whoever proposed the call gave up on its answer; its reason, when a string, says how ("request
   * cancelled"). */
  abandoned: AbortSignal | undefined;
  /** When an identical call (trajectory, tool, arguments) last started in this gateway, epoch ms; null when none is
   * known. */
  last_run_at: number | null;
  now: number;
  ttl_ms: number;
  /**
   * The tool's semantic check refused this call. It is the answer unless the call is one that
   * already ran and is answered from its record: its own effect may be what the check now finds.
   */
  refused?: Refusal | null;
}

const iso = (ms: number) => new Date(ms).toISOString();

/**
 * The call may reach settle only to be answered from its record: this exact call already ran
 * under an approval. Settle must not run it again even if the record has meanwhile expired
 * (between this read and settle's claim): the gateway then hands settle `refuseRun`.
 */
export const REPLAY_ONLY = "replay_only";

/** The `run` settle gets for a REPLAY_ONLY call: if settle claims the key after all, nothing runs and the key is
 * released. */
export function refuseRun(tool: string): never {
  throw new NoEffectError(
    `${tool} is destructive (A3) and this call's earlier run is no longer on record (it expired), so it cannot be replayed and was not run again; nothing was executed. Propose the call without approval_id to request a new approval.`,
    "approval_required",
  );
}

/**
 * The gate let the call through, to settle under `key`: to run, consuming the approved
 * `approval` once settle holds the key's record, or (REPLAY_ONLY) only to be answered from its
 * record (`approval`, for the audit, is null for a replay without one).
 */
export type Passed =
  | { pass: "run"; approval: ApprovalRecord; key: string }
  | { pass: typeof REPLAY_ONLY; approval: ApprovalRecord | null; key: string };

/** The approval an audit line names: its id, and who decided it through which channel. */
export function auditedApproval(
  record: ApprovalRecord | null,
): { id: string; channel: string | null; approver: string | null } | null {
  return record === null
    ? null
    : { id: record.id, channel: approverChannel(record.approver), approver: record.approver };
}

/** A refusal of the gate, with the approval it concerns (for the audit) when there is one, and the logical call's key
 * when the gate knows it. */
export type GateRefusal = Refusal & { approval: ApprovalRecord | null; key?: string };

function no(refusal: Refusal, approval: ApprovalRecord | null, key?: string): GateRefusal {
  return { ...refusal, approval, ...(key !== undefined ? { key } : {}) };
}

const AGAIN = `Propose the call without approval_id to request a new approval; nothing was executed.`;

/** The answer to a call whose approval another call consumed first (seen by the gate, or when spending it). */
function usedRefusal(id: string): Refusal {
  return refuse(
    "approval_invalid",
    `Approval ${id} was already used: an approval runs one call exactly once. ${AGAIN}`,
    { detail: { approval_id: id, reason: "used" } },
  );
}

/**
 * Spends the approval a passed gate runs under, once the run holds the call's idempotency record:
 * the consumed approval, or what the call is told when it cannot be spent (nothing ran).
 */
export async function spendApproval(
  store: Store,
  approval: ApprovalRecord,
  tool: string,
): Promise<ApprovalRecord | Refusal> {
  try {
    return (await consumeApproval(store.approvals, approval.id)) ?? usedRefusal(approval.id);
  } catch (err) {
    return refuse(
      "store_unavailable",
      `The store failed while approval ${approval.id} was being spent (${(err as Error)?.message ?? String(err)}), so ${tool} was not run; nothing was executed. Propose the same call again later.`,
      { detail: { approval_id: approval.id } },
    );
  }
}

/** When identical A3 calls (trajectory, tool, arguments) last started in this process, for the text of a later approval
 * request; bounded, oldest forgotten first. */
export class RecentRuns {
  private readonly at = new Map<string, number>();
  constructor(private readonly max = 1_000) {}
  note(b: ApprovalBinding, now: number): void {
    const id = identical(b);
    this.at.delete(id);
    this.at.set(id, now);
    if (this.at.size > this.max) this.at.delete(this.at.keys().next().value!);
  }
  last(b: ApprovalBinding): number | null {
    return this.at.get(identical(b)) ?? null;
  }
}

const identical = (b: ApprovalBinding) => JSON.stringify([b.trajectory_id, b.tool, b.args_hash]);

/** The key settle uses under approval `id`. */
function keyUnder(input: ApprovalGateInput, id: string): string {
  return input.joins ? input.keyFor(id) : input.key;
}

/** The approved `record` runs this call, unless its caller is gone: then it stays approved for the re-proposal. */
function runUnder(input: ApprovalGateInput, record: ApprovalRecord, key: string): Passed | GateRefusal {
  const gone = input.abandoned;
  if (!gone?.aborted) return { pass: "run", approval: record, key };
  const why =
    typeof gone.reason === "string" && gone.reason.trim() !== ""
      ? gone.reason.trim().slice(0, 100)
      : "request abandoned";
  return no(
    refuse(
      "abandoned",
      `The caller gave up on this call (${why}) before it could run, so ${input.binding.tool} was not run on approval ${record.id}; nothing was executed. The approval stays approved: propose the same call again (same tool and arguments) to run it once.`,
      { detail: { approval_id: record.id, reason: why }, outcome: `abandoned: ${why} before approval` },
    ),
    record,
    key,
  );
}

/** `approval_required` for a pending `record`, saying when an identical call last ran. */
function asked(input: ApprovalGateInput, record: ApprovalRecord, reused: boolean): GateRefusal {
  const { tool } = input.binding;
  const requested = reused
    ? `Approval ${record.id}, requested earlier for exactly these arguments, is still pending: no person has decided yet; it expires at ${iso(record.expires_at)}.`
    : `Approval ${record.id} was requested for exactly these arguments and expires at ${iso(record.expires_at)}.`;
  const ago = input.last_run_at === null ? null : Math.max(0, Math.round((input.now - input.last_run_at) / 1000));
  const ran =
    ago === null
      ? ""
      : ` An identical call (same tool and arguments) ran ${agoText(ago)} ago; approving this one runs it again.`;
  return no(
    refuse(
      "approval_required",
      `${tool} is destructive (A3) and needs a person's approval before it runs; nothing was executed. ${requested}${ran} Once it is approved, propose the same call again with approval_id "${record.id}" and the same arguments.`,
      {
        detail: {
          approval_id: record.id,
          expires_at: iso(record.expires_at),
          state: "pending",
          ...(reused ? { reused: true } : {}),
          ...(ago !== null ? { identical_call_ran_s_ago: ago } : {}),
        },
      },
    ),
    record,
  );
}

/** How the call may proceed to settle; otherwise what the model is told. */
export async function approvalGate(store: Store, input: ApprovalGateInput): Promise<Passed | GateRefusal> {
  const { binding: b } = input;
  if (input.approval_id === undefined) {
    // The same call re-sent after it ran (its answer lost): settle answers with the stored
    // result. Asking a person again would queue a decision about a call that will not run.
    if (!input.joins && (await store.records.get(input.key, input.now))?.state === "COMPLETED")
      return { pass: REPLAY_ONLY, approval: null, key: input.key };
    // A call without ids of its own that its check refused is not matched to a consumed approval's
    // record (that needs the approval live for its binding, which only a request would look up): the
    // check's answer stands, and no approval is requested for it.
    if (input.refused) return no(input.refused, null);
    const request = { ...b, arguments: input.arguments, now: input.now, ttl_ms: input.ttl_ms };
    const { record, reused } = await requestApproval(store.approvals, request);
    if (!reused || record.state === "pending") return asked(input, record, reused);
    const key = keyUnder(input, record.id);
    if (record.state === "approved" && decidedVia(record, input.channels)) return runUnder(input, record, key);
    // Consumed by this logical call: its record answers (a replay, or in flight, or in doubt).
    if (record.state === "consumed" && (await store.records.get(key, input.now)))
      return { pass: REPLAY_ONLY, approval: record, key };
    // Approved through a channel this server does not accept, or consumed by another call (other
    // ids, or a run that left no record): this call needs an approval of its own.
    return asked(input, await requestNewApproval(store.approvals, request), false);
  }
  const id = input.approval_id;
  const r = await checkApproval(store.approvals, id, b, input.now, input.channels);
  if (input.refused && !(!r.ok && r.reason === "used" && (await store.records.get(keyUnder(input, id), input.now))))
    return no(input.refused, r.record ?? null);
  if (r.ok) return runUnder(input, r.record, keyUnder(input, id));
  switch (r.reason) {
    case "unknown":
      return no(
        refuse("approval_invalid", `approval_id ${JSON.stringify(id)} does not exist. ${AGAIN}`, {
          detail: { approval_id: id, reason: "unknown" },
        }),
        null,
      );
    case "mismatch": {
      const what = {
        arguments: "different arguments",
        tool: `another tool (${r.record!.tool})`,
        capability: "a call made with another capability",
        trajectory: "a call of another trajectory",
      }[r.field!];
      return no(
        refuse(
          "approval_invalid",
          `Approval ${id} was given for ${what}, not for this call to ${b.tool}. An approval covers exactly the call it was requested for. ${AGAIN}`,
          { detail: { approval_id: id, reason: `changed_${r.field}` } },
        ),
        r.record,
      );
    }
    case "pending":
      return no(
        refuse(
          "approval_required",
          `Approval ${id} is still pending: no person has decided yet; nothing was executed. Wait, then propose the same call again with approval_id "${id}" (it expires at ${iso(r.record!.expires_at)}).`,
          { detail: { approval_id: id, expires_at: iso(r.record!.expires_at), state: "pending" } },
        ),
        r.record,
      );
    case "denied":
      return no(
        refuse(
          "approval_denied",
          `Approval ${id} was denied${r.record!.approver ? ` by ${r.record!.approver}` : ""}: ${r.record!.note ?? "no reason given"}. Nothing was executed. Do not retry this call; tell the user and choose another way.`,
          { detail: { approval_id: id, reason: r.record!.note ?? null } },
        ),
        r.record,
      );
    case "channel":
      return no(
        refuse(
          "approval_invalid",
          `Approval ${id} was decided through ${approverChannel(r.record!.approver) ?? "an unnamed channel"}, which this server does not accept for destructive calls (it accepts ${input.channels.join(" and ")}). ${AGAIN}`,
          { detail: { approval_id: id, reason: "channel" } },
        ),
        r.record,
      );
    case "expired":
      return no(
        refuse("approval_invalid", `Approval ${id} expired at ${iso(r.record!.expires_at)}. ${AGAIN}`, {
          detail: { approval_id: id, reason: "expired" },
        }),
        r.record,
      );
    case "used": {
      // The same call re-sent after it ran: settle answers with the stored result, never a second run.
      const key = keyUnder(input, id);
      if (await store.records.get(key, input.now)) return { pass: REPLAY_ONLY, approval: r.record, key };
      return no(usedRefusal(id), r.record);
    }
  }
}
