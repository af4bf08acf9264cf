/**
 * `toolgate/anthropic`: the gateway's tools for `@anthropic-ai/sdk` 1.15 (its tool runner, or
 * plain `tool_use` blocks; an optional peer dependency loaded on first use). An explicit list,
 * documented in docs/api.md.
 */
export { anthropicTools } from "../adapters/anthropic.js";
export type {
  AnthropicTools,
  AnthropicRunnableTool,
  AnthropicToolDefinition,
  AnthropicToolUse,
  AnthropicToolResult,
} from "../adapters/anthropic.js";
export { createAgentRun } from "../adapters/run.js";
export type { AgentRun, AgentRunOptions, CallIds } from "../adapters/run.js";
