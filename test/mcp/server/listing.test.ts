/**
 * The one place MCP annotations are made (mcp/server/listing.ts): the three hints that decide
 * authority always follow the effect, whatever a tool or an upstream declared; the title is the
 * spec's; openWorldHint and a proxied tool's declared annotations come from `ToolSpec.mcp`.
 */
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { annotationsFor, mcpAnnotations, toMcpTool } from "../../../src/mcp/server/listing.js";
import { defineTool } from "../../../src/schema/define.js";
import type { Effect, ToolSpec } from "../../../src/core/tool.js";

const spec = (effect: Effect, extra: Partial<ToolSpec> = {}): ToolSpec => ({
  name: "t",
  description: "A tool.",
  inputSchema: { type: "object" },
  effect,
  handler: () => null,
  ...extra,
});

describe("mcpAnnotations", () => {
  it("maps each effect onto readOnlyHint, destructiveHint and idempotentHint", () => {
    expect((["read", "idempotent", "write", "destructive"] as const).map((e) => mcpAnnotations(spec(e)))).toEqual([
      { readOnlyHint: true, destructiveHint: false, idempotentHint: true },
      { readOnlyHint: false, destructiveHint: false, idempotentHint: true },
      { readOnlyHint: false, destructiveHint: false, idempotentHint: false },
      { readOnlyHint: false, destructiveHint: true, idempotentHint: false },
    ]);
  });

  it("a defineTool tool: its title first, then the effect's hints, then its openWorldHint", () => {
    const tool = defineTool({
      name: "local_read",
      title: "Read locally",
      description: "Reads one local thing.",
      input: z.object({}).strict(),
      effect: "read",
      openWorldHint: false,
      handler: () => 1,
    });
    expect(JSON.stringify(mcpAnnotations(tool))).toBe(
      '{"title":"Read locally","readOnlyHint":true,"destructiveHint":false,"idempotentHint":true,"openWorldHint":false}',
    );
    expect(toMcpTool(tool)).toMatchObject({ title: "Read locally", annotations: { title: "Read locally" } });
  });

  it("declared annotations keep their keys and order; their title gives way to the spec's and the effect overrides their hints", () => {
    const declared = { destructiveHint: true, title: "Upstream title", openWorldHint: true, readOnlyHint: true };
    const listed = mcpAnnotations(spec("read", { title: "Spec title", mcp: { declared } }));
    expect(JSON.stringify(listed)).toBe(
      '{"destructiveHint":false,"openWorldHint":true,"readOnlyHint":true,"title":"Spec title","idempotentHint":true}',
    );
  });

  it("a declared title without a spec title is dropped, as the proxy puts the title on the spec", () => {
    expect(mcpAnnotations(spec("write", { mcp: { declared: { title: "Only here" } } }))).toEqual(
      annotationsFor("write"),
    );
  });
});
