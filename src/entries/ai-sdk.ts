/**
 * `toolgate/ai-sdk`: the gateway's tools for the Vercel AI SDK (`ai` 7, an optional peer
 * dependency loaded on first use). An explicit list, documented in docs/api.md.
 */
export { aiSdkTools } from "../adapters/ai-sdk.js";
export type { AiSdkTools, AiSdkMessage } from "../adapters/ai-sdk.js";
export { createAgentRun } from "../adapters/run.js";
export type { AgentRun, AgentRunOptions, CallIds } from "../adapters/run.js";
