/**
 * The shared core of the framework adapters: one agent run over a gateway. A framework hands each
 * tool execution the model's own tool-call id; the run makes it the proposal's `call_id`, beside
 * the caller's trajectory id (the chat or run id) and the step as `turn`, so a retried step is the
 * same logical call and settles to the stored result (docs/idempotency.md). The capability is given
 * once per run; `subAgent` narrows it for a sub-agent. Everything goes through the public gateway
 * API: `gateway.call` and `gateway.approvals`.
 */
import { canonicalize } from "../canonical/jcs.js";
import { ToolgateError } from "../core/errors.js";
import { LruCache } from "../core/lru.js";
import type { Observation } from "../core/observation.js";
import type { ToolSpec } from "../core/tool.js";
import { AUTHORITY } from "../core/tool.js";
import { attenuate } from "../capability/attenuate.js";
import type { NarrowerInput } from "../capability/input.js";
import type { Gateway, Proposal } from "../runtime/types.js";

export interface AgentRunOptions {
  /** The chat's or run's id: with the tool-call id, it names each logical call. */
  trajectory_id: string;
  /** The run's capability token (`tg1.…`); required when the gateway has keys. */
  capability?: string;
  /** The tools offered, by name, in this order. Default: the whole catalog. */
  tools?: readonly string[];
  /**
   * Who decides A3 calls through the framework's own approval flow, as your application
   * authenticated them (a user id); recorded as `cli:<approver>`. Default `framework-user`.
   */
  approver?: string;
  /** Scopes client-supplied idempotency keys when the gateway requires no capability (`CallOptions.principal`). */
  principal?: string;
}

/** The ids that place one tool execution in its run. */
export interface CallIds {
  /** The model's tool-call id. */
  call_id: string;
  /** The step (turn) of the run, ≥ 0. */
  turn: number;
  signal?: AbortSignal;
}

/** One agent run over a gateway, shared by every framework adapter. */
export interface AgentRun {
  readonly gateway: Gateway;
  readonly trajectory_id: string;
  readonly capability: string | undefined;
  /** The tools offered to the model. */
  readonly tools: readonly ToolSpec[];
  /** Runs one tool call; never throws for a refused call (the observation says why). */
  call(tool: string, args: unknown, ids: CallIds): Promise<Observation>;
  /**
   * Runs a call a person approved through the framework: when the gateway asks for approval, the
   * approval is recorded as decided by the run's approver and the call proposed again under it.
   */
  callApproved(tool: string, args: unknown, ids: CallIds): Promise<Observation>;
  /**
   * Whether the framework should ask a person before this call: true only when the gateway would
   * hold it for approval (an A3 call that passes validation and the capability check; the
   * approval request is then recorded once, in the gateway). A call the gateway refuses for
   * another reason is not put to a person: its execution returns the refusal to the model.
   */
  needsApproval(tool: string, args: unknown, ids: CallIds): Promise<boolean>;
  /** Records a person's refusal given through the framework; false when no approval was pending. */
  deny(tool: string, args: unknown, ids: CallIds, reason?: string): Promise<boolean>;
  /** The same gateway for a sub-agent: its capability narrowed by `narrower` (no key needed), its own trajectory. */
  subAgent(narrower: NarrowerInput, options?: { trajectory_id?: string; tools?: readonly string[] }): AgentRun;
}

const DEFAULT_APPROVER = "framework-user";
/** Approval requests a run remembers, by call (tool and arguments). */
const REMEMBERED_APPROVALS = 256;

export function createAgentRun(gateway: Gateway, options: AgentRunOptions): AgentRun {
  if (typeof options?.trajectory_id !== "string" || options.trajectory_id.length === 0)
    throw new ToolgateError(
      "invalid_option",
      `trajectory_id must be a non-empty string (the chat's or run's id); received ${JSON.stringify(options?.trajectory_id)}`,
    );
  if (gateway.requiresCapability && options.capability === undefined)
    throw new ToolgateError(
      "invalid_option",
      "capability: this gateway requires a capability token (tg1.…) for every call; pass the run's capability once here",
    );
  const tools = pick(gateway, options.tools);
  const approver = options.approver ?? DEFAULT_APPROVER;
  let subs = 0;
  // The approval each call was last asked under: a model re-proposes a call under a new tool-call id
  // and cannot name the approval itself, so the run does, and a call a person denied is answered
  // as denied instead of asking again.
  const asked = new LruCache<string, string>(REMEMBERED_APPROVALS);
  const callKey = (tool: string, args: unknown): string | null => {
    try {
      return canonicalize([tool, args as never]);
    } catch {
      return null;
    }
  };

  const proposal = (tool: string, args: unknown, ids: CallIds, approval_id?: string): Proposal => ({
    trajectory_id: options.trajectory_id,
    turn: ids.turn,
    call_id: ids.call_id,
    tool,
    arguments: args,
    ...(options.capability !== undefined ? { capability: options.capability } : {}),
    ...(approval_id !== undefined ? { approval_id } : {}),
  });
  const send = (p: Proposal, ids: CallIds) =>
    gateway.call(p, {
      ...(ids.signal ? { signal: ids.signal, abandoned: ids.signal } : {}),
      ...(options.principal !== undefined ? { principal: options.principal } : {}),
    });
  /**
   * Proposes the call under the approval it was last asked under, if any; an approval that no
   * longer applies (expired, used, unknown) is forgotten and the call proposed without it.
   */
  async function propose(tool: string, args: unknown, ids: CallIds): Promise<Observation> {
    const k = isA3(tool) ? callKey(tool, args) : null;
    const remembered = k === null ? undefined : asked.get(k);
    let o = await send(proposal(tool, args, ids, remembered), ids);
    if (remembered !== undefined && o.error?.code === "approval_invalid") {
      asked.delete(k!);
      o = await send(proposal(tool, args, ids), ids);
    }
    const id = pendingId(o);
    if (k !== null && id !== null) asked.set(k, id);
    if (k !== null && o.error?.code === "approval_denied") asked.delete(k);
    return o;
  }
  const pendingId = (o: Observation): string | null =>
    o.error?.code === "approval_required" && typeof o.error.detail?.approval_id === "string"
      ? o.error.detail.approval_id
      : null;
  const isA3 = (tool: string) => {
    const spec = gateway.tools.get(tool);
    return spec !== undefined && AUTHORITY[spec.effect] === "A3";
  };

  const run: AgentRun = {
    gateway,
    trajectory_id: options.trajectory_id,
    capability: options.capability,
    tools,
    call: propose,
    async callApproved(tool, args, ids) {
      const first = await propose(tool, args, ids);
      const id = pendingId(first);
      if (id === null) return first;
      await gateway.approvals.approve(id, { approver, channel: "cli", note: "approved through the agent framework" });
      return send(proposal(tool, args, ids, id), ids);
    },
    async needsApproval(tool, args, ids) {
      if (!isA3(tool)) return false;
      return pendingId(await propose(tool, args, ids)) !== null;
    },
    async deny(tool, args, ids, reason) {
      if (!isA3(tool)) return false;
      const id = pendingId(await propose(tool, args, ids));
      if (id === null) return false;
      await gateway.approvals.deny(id, {
        approver,
        channel: "cli",
        reason: reason ?? "denied through the agent framework",
      });
      return true;
    },
    subAgent(narrower, sub = {}) {
      if (options.capability === undefined)
        throw new ToolgateError(
          "invalid_option",
          "subAgent: this run has no capability to narrow; create the run with a capability (tg1.…) from a gateway with keys",
        );
      return createAgentRun(gateway, {
        ...options,
        trajectory_id: sub.trajectory_id ?? `${options.trajectory_id}/sub-${++subs}`,
        capability: attenuate(options.capability, narrower),
        tools: sub.tools ?? tools.map((t) => t.name),
      });
    },
  };
  return run;
}

function pick(gateway: Gateway, names: readonly string[] | undefined): ToolSpec[] {
  if (names === undefined) return [...gateway.tools.values()];
  return names.map((name) => {
    const spec = gateway.tools.get(name);
    if (!spec)
      throw new ToolgateError(
        "invalid_option",
        `tools: ${JSON.stringify(name)} is not in the gateway's catalog; choose from ${[...gateway.tools.keys()].join(", ")}`,
      );
    return spec;
  });
}
