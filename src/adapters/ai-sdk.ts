/**
 * The Vercel AI SDK (`ai` 7): the gateway's tools as `tool()` objects. `execute(input, { toolCallId,
 * messages, abortSignal })` becomes `gateway.call` with the model's tool-call id as `call_id` and
 * the step as `turn`; the observation is the tool's output (its structured part kept) and
 * `toModelOutput` hands the model the bounded text. An A3 call goes through the SDK's own approval
 * flow: `needsApproval` asks the gateway, which records the approval request once, and the
 * person's answer (a `tool-approval-response` in the messages) is recorded in `gateway.approvals`,
 * so the person is asked once, by the application.
 */
import type { Observation } from "../core/observation.js";
import { AUTHORITY } from "../core/tool.js";
import type { Gateway } from "../runtime/types.js";
import { importFramework } from "./peer.js";
import { createAgentRun, type AgentRun, type AgentRunOptions, type CallIds } from "./run.js";

/** The parts of an AI SDK model message this adapter reads (structurally, so any `ModelMessage` fits). */
interface MessagePart {
  type: string;
  toolCallId?: string;
  toolName?: string;
  input?: unknown;
  approvalId?: string;
  approved?: boolean;
  reason?: string;
}
export interface AiSdkMessage {
  role: string;
  content: string | readonly unknown[];
}

export interface AiSdkTools {
  /** Pass as `tools` to `generateText`, `streamText` or an agent. */
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  tools: Record<string, any>;
  run: AgentRun;
  /**
   * Records in the gateway the denials among the messages' `tool-approval-response` parts (an
   * approval is recorded when the approved call executes). Call it with the messages you resume
   * with; a denial not recorded leaves the gateway's request pending until it expires, and nothing runs.
   */
  recordDenials(messages: readonly AiSdkMessage[]): Promise<number>;
}

/** The AI SDK tools of a gateway for one run (a chat); `run` may be an existing run (a sub-agent's). */
export async function aiSdkTools(gateway: Gateway | AgentRun, options?: AgentRunOptions): Promise<AiSdkTools> {
  const ai = await importFramework("toolgate/ai-sdk", "ai", "^7", () => import("ai"));
  const run = "subAgent" in gateway ? gateway : createAgentRun(gateway, options!);
  const tools: Record<string, unknown> = {};
  for (const spec of run.tools) {
    const name = spec.name;
    const a3 = AUTHORITY[spec.effect] === "A3";
    tools[name] = ai.tool({
      description: spec.description,
      // toolgate validates the arguments itself, so that an invalid call reaches the model as its
      // actionable refusal rather than as the SDK's schema error.
      inputSchema: ai.jsonSchema(spec.inputSchema as Parameters<typeof ai.jsonSchema>[0]),
      ...(a3
        ? {
            needsApproval: (input: unknown, o: { toolCallId: string; messages: readonly AiSdkMessage[] }) =>
              run.needsApproval(name, input, ids(o.toolCallId, o.messages)),
          }
        : {}),
      execute: (
        input: unknown,
        o: { toolCallId: string; messages: readonly AiSdkMessage[]; abortSignal?: AbortSignal },
      ): Promise<Observation> => {
        const at = ids(o.toolCallId, o.messages, o.abortSignal);
        return a3 && approvedIn(o.messages, o.toolCallId)
          ? run.callApproved(name, input, at)
          : run.call(name, input, at);
      },
      toModelOutput: ({ output }: { output: Observation }) => ({
        type: output.ok ? ("text" as const) : ("error-text" as const),
        value: output.text,
      }),
    });
  }
  return {
    tools,
    run,
    async recordDenials(messages) {
      let n = 0;
      for (const d of decisions(messages)) {
        if (d.approved) continue;
        const call = toolCall(messages, d.toolCallId);
        if (call === null || !run.tools.some((t) => t.name === call.toolName)) continue;
        if (await run.deny(call.toolName, call.input, ids(d.toolCallId, messages), d.reason)) n++;
      }
      return n;
    },
  };
}

function parts(m: AiSdkMessage): MessagePart[] {
  return typeof m.content === "string" ? [] : (m.content as MessagePart[]);
}

/**
 * The step of a tool call: the index of the assistant message that holds it, or, while the step is
 * being answered (its message not yet in `messages`), the number of assistant messages before it.
 * A retried step and an approval resumed later both find the same number.
 */
export function stepOf(messages: readonly AiSdkMessage[], toolCallId: string): number {
  let assistants = 0;
  for (const m of messages) {
    if (m.role !== "assistant") continue;
    if (parts(m).some((p) => p.type === "tool-call" && p.toolCallId === toolCallId)) return assistants;
    assistants++;
  }
  return assistants;
}

function ids(toolCallId: string, messages: readonly AiSdkMessage[], signal?: AbortSignal): CallIds {
  return { call_id: toolCallId, turn: stepOf(messages, toolCallId), ...(signal ? { signal } : {}) };
}

/** Every approval response in the messages, with the tool call its request was for. */
function decisions(messages: readonly AiSdkMessage[]): { toolCallId: string; approved: boolean; reason?: string }[] {
  const requests = new Map<string, string>();
  for (const m of messages)
    for (const p of parts(m))
      if (p.type === "tool-approval-request" && p.approvalId && p.toolCallId) requests.set(p.approvalId, p.toolCallId);
  const out: { toolCallId: string; approved: boolean; reason?: string }[] = [];
  for (const m of messages)
    for (const p of parts(m)) {
      if (p.type !== "tool-approval-response" || !p.approvalId) continue;
      const toolCallId = requests.get(p.approvalId);
      if (toolCallId !== undefined)
        out.push({ toolCallId, approved: p.approved === true, ...(p.reason ? { reason: p.reason } : {}) });
    }
  return out;
}

/** The application approved this tool call through the SDK (its response is in the messages). */
function approvedIn(messages: readonly AiSdkMessage[], toolCallId: string): boolean {
  return decisions(messages).some((d) => d.toolCallId === toolCallId && d.approved);
}

function toolCall(messages: readonly AiSdkMessage[], toolCallId: string): { toolName: string; input: unknown } | null {
  for (const m of messages)
    for (const p of parts(m))
      if (p.type === "tool-call" && p.toolCallId === toolCallId && typeof p.toolName === "string")
        return { toolName: p.toolName, input: p.input };
  return null;
}
