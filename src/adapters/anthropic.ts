/**
 * `@anthropic-ai/sdk` 1.15: the gateway's tools for the SDK's tool runner
 * (`client.beta.messages.toolRunner`), or as plain definitions with `toolResults` turning a reply's
 * `tool_use` blocks into `tool_result` blocks. The `tool_use.id` is the call id. A refusal is a
 * `tool_result` with `is_error: true` and toolgate's text (the runner's convention: a `ToolError`,
 * which the runner turns into that result and goes on). The SDK has no approval flow of its own: an
 * A3 call answers `approval_required` naming its approval, a person decides it through
 * `gateway.approvals` (or `toolgate approvals`), and the model's next proposal of the same call
 * runs it once, or is told it was denied.
 */
import type { Observation } from "../core/observation.js";
import type { Gateway } from "../runtime/types.js";
import { importFramework } from "./peer.js";
import { createAgentRun, type AgentRun, type AgentRunOptions } from "./run.js";

/** A tool definition as the Messages API takes it (its input schema is always an object schema). */
export interface AnthropicToolDefinition {
  name: string;
  description: string;
  input_schema: { type: "object"; [keyword: string]: unknown };
}
/** The `tool_use` block of a reply (the fields read). */
export interface AnthropicToolUse {
  type: "tool_use";
  id: string;
  name: string;
  input: unknown;
}
/** The `tool_result` block answering one. */
export interface AnthropicToolResult {
  type: "tool_result";
  tool_use_id: string;
  content: string;
  is_error?: boolean;
}
/** A tool for the SDK's tool runner: the definition plus `run` and `parse`. */
export interface AnthropicRunnableTool extends AnthropicToolDefinition {
  parse(input: unknown): unknown;
  run(input: unknown, context?: { toolUse?: { id?: string }; signal?: AbortSignal | null }): Promise<string>;
}

export interface AnthropicTools {
  /** Pass as `tools` to `client.beta.messages.toolRunner`. */
  runnable: AnthropicRunnableTool[];
  /** Pass as `tools` to `client.messages.create` when you run the loop yourself. */
  definitions: AnthropicToolDefinition[];
  /** The `tool_result` blocks answering every `tool_use` block of `content`, in order. */
  toolResults(content: readonly { type: string }[], signal?: AbortSignal): Promise<AnthropicToolResult[]>;
  run: AgentRun;
}

/** The Anthropic tools of a gateway for one run; `run` may be an existing run (a sub-agent's). */
export async function anthropicTools(gateway: Gateway | AgentRun, options?: AgentRunOptions): Promise<AnthropicTools> {
  const { ToolError } = await importFramework(
    "toolgate/anthropic",
    "@anthropic-ai/sdk",
    "^1.15",
    () => import("@anthropic-ai/sdk/lib/tools/ToolError"),
  );
  const run = "subAgent" in gateway ? gateway : createAgentRun(gateway, options!);
  const definitions = run.tools.map((t) => ({
    name: t.name,
    description: t.description,
    input_schema: t.inputSchema as AnthropicToolDefinition["input_schema"],
  }));
  const propose = (use: AnthropicToolUse, signal?: AbortSignal | null): Promise<Observation> =>
    run.call(use.name, use.input, { call_id: use.id, turn: 0, ...(signal ? { signal } : {}) });
  return {
    definitions,
    run,
    // toolgate validates the arguments itself: `parse` passes them on, so an invalid call gets toolgate's refusal.
    runnable: definitions.map((d) => ({
      ...d,
      parse: (input: unknown) => input,
      async run(input, context) {
        const id = context?.toolUse?.id ?? "";
        const o = await propose({ type: "tool_use", id, name: d.name, input }, context?.signal);
        if (!o.ok) throw new ToolError(o.text);
        return o.text;
      },
    })),
    async toolResults(content, signal) {
      const uses = content.filter((b): b is AnthropicToolUse => b.type === "tool_use");
      return Promise.all(
        uses.map(async (use) => {
          const o = await propose(use, signal);
          return {
            type: "tool_result" as const,
            tool_use_id: use.id,
            content: o.text,
            ...(o.ok ? {} : { is_error: true }),
          };
        }),
      );
    },
  };
}
