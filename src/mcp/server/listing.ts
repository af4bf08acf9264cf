/**
 * ToolSpec → MCP `Tool` for `tools/list` (MCP 2025-11-25 "Tool"). The annotations that decide
 * authority come from the effect (the side-effect annotation maps onto readOnlyHint,
 * idempotentHint and destructiveHint), so a client sees the
 * same level the gateway enforces; title and openWorldHint pass through from the spec.
 */
import type { Tool } from "@modelcontextprotocol/sdk/types.js";
import { annotationsFor, type ToolSpec } from "../../core/tool.js";

/** The `tools/list` entry for one tool: schemas as published (2020-12), annotations from the effect. */
export function toMcpTool(spec: ToolSpec): Tool {
  const title = spec.title ?? spec.annotations.title;
  const annotations: Tool["annotations"] = { ...spec.annotations, ...annotationsFor(spec.effect) };
  if (title !== undefined) annotations.title = title;
  const tool: Tool = {
    name: spec.name,
    description: spec.description,
    inputSchema: spec.inputSchema as Tool["inputSchema"],
    annotations,
  };
  if (title !== undefined) tool.title = title;
  if (spec.outputSchema) tool.outputSchema = spec.outputSchema as NonNullable<Tool["outputSchema"]>;
  return tool;
}
