/**
 * `toolgate/export`: a catalog in other ecosystems' formats (`toolgate export`): MCP, OpenAI,
 * Anthropic, Vercel AI SDK, a llama.cpp GBNF grammar, and the OpenAI strict-mode check. An
 * explicit list, documented in docs/api.md.
 */
export { exportCatalog } from "../export/catalog.js";
export type { CatalogExport, ExportOptions } from "../export/catalog.js";
export type { ExportFormat } from "../export/formats.js";
export { toGbnf } from "../export/gbnf/grammar.js";
export type { GbnfResult, GbnfOptions } from "../export/gbnf/grammar.js";
export type { GbnfGap } from "../export/gbnf/tool.js";
export { checkOpenAIStrict } from "../export/openai-strict.js";
export type { StrictVerdict, StrictProblem } from "../export/openai-strict.js";
export type { ToolDescriptor } from "../schema/descriptor.js";
