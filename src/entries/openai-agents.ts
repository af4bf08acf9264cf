/**
 * `toolgate/openai-agents`: the gateway's tools for OpenAI Agents JS (`@openai/agents` 0.20, an
 * optional peer dependency loaded on first use). An explicit list, documented in docs/api.md.
 */
export { openAiAgentsTools } from "../adapters/openai-agents.js";
export type { OpenAiAgentsTools, ApprovalItemLike, RunStateLike } from "../adapters/openai-agents.js";
export { createAgentRun } from "../adapters/run.js";
export type { AgentRun, AgentRunOptions, CallIds } from "../adapters/run.js";
