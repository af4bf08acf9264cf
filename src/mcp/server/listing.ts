/**
 * ToolSpec → MCP `Tool` for `tools/list` (MCP 2025-11-25 "Tool"), and the one place a tool's MCP
 * annotations are made. The hints that decide authority come from the effect (the side-effect
 * annotation maps onto readOnlyHint, idempotentHint and destructiveHint), so a client sees the
 * same level the gateway enforces; the title comes from the spec, and what only MCP reads from
 * `ToolSpec.mcp` (openWorldHint, or a proxied tool's annotations as its upstream declared them).
 */
import type { Tool } from "@modelcontextprotocol/server";
import type { Effect, ToolAnnotations, ToolSpec } from "../../core/tool.js";
import { DRAFT_2020_12 } from "../../schema/publish.js";

/** MCP annotations implied by an effect (MCP `ToolAnnotations` defaults are the A3 case). */
export function annotationsFor(
  effect: Effect,
): Required<Pick<ToolAnnotations, "readOnlyHint" | "destructiveHint" | "idempotentHint">> {
  switch (effect) {
    case "read":
      return { readOnlyHint: true, destructiveHint: false, idempotentHint: true };
    case "idempotent":
      return { readOnlyHint: false, destructiveHint: false, idempotentHint: true };
    case "write":
      return { readOnlyHint: false, destructiveHint: false, idempotentHint: false };
    case "destructive":
      return { readOnlyHint: false, destructiveHint: true, idempotentHint: false };
  }
}

/**
 * A tool's annotations in tools/list. Declared annotations keep their keys in their order, then
 * the title, then the effect's hints over them; otherwise the title, the effect's hints, then
 * openWorldHint.
 */
export function mcpAnnotations(spec: ToolSpec): ToolAnnotations {
  const title = spec.title !== undefined ? { title: spec.title } : {};
  const declared = spec.mcp?.declared;
  if (declared) {
    const { title: _declaredTitle, ...hints } = declared;
    return { ...hints, ...title, ...annotationsFor(spec.effect) };
  }
  const openWorld = spec.mcp?.openWorldHint;
  return { ...title, ...annotationsFor(spec.effect), ...(openWorld !== undefined ? { openWorldHint: openWorld } : {}) };
}

/**
 * A schema as tools/list sends it: without `$schema` when it names draft 2020-12, the dialect MCP
 * tool schemas have by default, so the one string a model would read with every tool on every turn
 * carries nothing; a schema of another dialect (a proxied draft-07 one) keeps it. `toolgate export`
 * keeps it always: a JSON Schema consumer outside MCP has no such default.
 */
export function listedSchema(schema: Record<string, unknown>): Record<string, unknown> {
  if (schema.$schema !== DRAFT_2020_12) return schema;
  const { $schema: _default, ...rest } = schema;
  return rest;
}

/** The `tools/list` entry for one tool: schemas as published (2020-12), annotations from `mcpAnnotations`. */
export function toMcpTool(spec: ToolSpec): Tool {
  const tool: Tool = {
    name: spec.name,
    description: spec.description,
    inputSchema: listedSchema(spec.inputSchema) as Tool["inputSchema"],
    annotations: mcpAnnotations(spec),
  };
  if (spec.title !== undefined) tool.title = spec.title;
  if (spec.outputSchema) tool.outputSchema = listedSchema(spec.outputSchema) as NonNullable<Tool["outputSchema"]>;
  if (spec.mcp?.icons && spec.mcp.icons.length > 0) tool.icons = spec.mcp.icons.map((icon) => ({ ...icon }));
  return tool;
}
