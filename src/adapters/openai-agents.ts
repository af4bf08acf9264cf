/**
 * OpenAI Agents JS (`@openai/agents` 0.20): the gateway's tools as `tool()` objects. `execute`
 * proposes the call under the model's call id (`details.toolCall.callId`) and the step's abort
 * signal; the observation's bounded text is the tool's output. The turn is 0: the SDK gives a tool
 * no step number that survives a run resumed from its history (its usage counts restart), and the
 * model's call ids are unique within a trajectory, so the call id alone names the call. An A3 call goes through the run's own approval flow: `needsApproval` asks the
 * gateway (which records the request once), the run stops with an interruption, and
 * `state.approve(item)` / `reject(state, item)` decide it; an approved call records its approval
 * in `gateway.approvals` when it executes.
 */
import { AUTHORITY } from "../core/tool.js";
import type { Gateway } from "../runtime/types.js";
import { importFramework } from "./peer.js";
import { createAgentRun, type AgentRun, type AgentRunOptions, type CallIds } from "./run.js";

/** The parts of the SDK's run context and approval item this adapter reads (structurally). */
interface RunContextLike {
  isToolApproved(approval: { toolName: string; callId: string }): boolean | undefined;
}
export interface ApprovalItemLike {
  rawItem: { type?: string; name?: string; callId?: string; arguments?: string };
}
export interface RunStateLike {
  approve(item: never, options?: never): void;
  reject(item: never, options?: { message?: string }): void;
}

export interface OpenAiAgentsTools {
  /** Pass as an Agent's `tools`. */
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  tools: any[];
  run: AgentRun;
  /** Rejects an interruption in the run state and records the denial in the gateway. */
  reject(state: RunStateLike, item: ApprovalItemLike, reason?: string): Promise<void>;
}

/** The OpenAI Agents tools of a gateway for one run; `run` may be an existing run (a sub-agent's). */
export async function openAiAgentsTools(
  gateway: Gateway | AgentRun,
  options?: AgentRunOptions,
): Promise<OpenAiAgentsTools> {
  const sdk = await importFramework(
    "toolgate/openai-agents",
    "@openai/agents",
    "^0.20",
    () => import("@openai/agents"),
  );
  const run = "subAgent" in gateway ? gateway : createAgentRun(gateway, options!);
  const tools = run.tools.map((spec) => {
    const name = spec.name;
    const a3 = AUTHORITY[spec.effect] === "A3";
    return sdk.tool({
      name,
      description: spec.description,
      // toolgate validates the arguments itself: an invalid call reaches the model as its refusal.
      parameters: spec.inputSchema as never,
      strict: false,
      ...(a3
        ? {
            needsApproval: (ctx: unknown, input: unknown, callId?: string) =>
              run.needsApproval(name, input, ids(callId ?? "")),
          }
        : {}),
      execute: async (
        input: unknown,
        ctx?: unknown,
        details?: { toolCall?: { callId?: string }; signal?: AbortSignal },
      ) => {
        const context = ctx as RunContextLike;
        const callId = details?.toolCall?.callId ?? "";
        const at = ids(callId, details?.signal);
        const approved = a3 && context.isToolApproved({ toolName: name, callId }) === true;
        const o = approved ? await run.callApproved(name, input, at) : await run.call(name, input, at);
        return o.text;
      },
    });
  });
  return {
    tools,
    run,
    async reject(state, item, reason) {
      state.reject(item as never, reason !== undefined ? { message: reason } : undefined);
      const raw = item.rawItem;
      if (raw.type !== "function_call" || !raw.name || !raw.callId) return;
      let input: unknown;
      try {
        input = JSON.parse(raw.arguments ?? "{}");
      } catch {
        return;
      }
      await run.deny(raw.name, input, ids(raw.callId), reason);
    },
  };
}

function ids(callId: string, signal?: AbortSignal): CallIds {
  return { call_id: callId, turn: 0, ...(signal ? { signal } : {}) };
}
