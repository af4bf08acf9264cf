/**
 * `toolgate/langchain`: the gateway's tools for LangChain.js 1.x (`@langchain/core`, and
 * `@langchain/langgraph` for A3 approvals; optional peer dependencies loaded on first use). An
 * explicit list, documented in docs/api.md.
 */
export { langChainTools } from "../adapters/langchain.js";
export type { LangChainTools, LangChainApprovalRequest, LangChainApprovalDecision } from "../adapters/langchain.js";
export { createAgentRun } from "../adapters/run.js";
export type { AgentRun, AgentRunOptions, CallIds } from "../adapters/run.js";
