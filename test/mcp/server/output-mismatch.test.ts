/**
 * A tool whose result does not match the outputSchema it publishes: the real SDK Client checks
 * structuredContent against that schema and throws a protocol error (-32602), so the call must
 * come back as a readable isError result instead, saying what did not match.
 */
import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { createMemoryStore } from "../../../src/idempotency/stores/memory.js";
import { createMcpServer } from "../../../src/mcp/server/server.js";
import { createGateway } from "../../../src/runtime/gateway.js";
import type { Gateway } from "../../../src/runtime/types.js";
import { defineTool } from "../../../src/schema/define.js";
import type { ToolSpec } from "../../../src/core/tool.js";
import { resolveInDoubt } from "../../../src/idempotency/resolve-in-doubt.js";

let gateway: Gateway | undefined;
let client: Client | undefined;
afterEach(async () => {
  await client?.close();
  await gateway?.close();
});

const output = z.object({ count: z.int().min(0).max(10).describe("Open tickets.") });
const tool = (name: string, effect: "read" | "write", value: unknown) =>
  defineTool({
    name,
    description: "Counts the open tickets in the support queue right now.",
    input: z.object({}),
    output,
    effect,
    handler: () => value,
  });

/** A gateway over `tools` behind an MCP server, and the SDK client connected to it. */
async function connect(tools: ToolSpec[], store = createMemoryStore()): Promise<Client> {
  gateway = createGateway({ tools, store, audit: false });
  const server = createMcpServer(gateway);
  const [a, b] = InMemoryTransport.createLinkedPair();
  await server.connect(a);
  client = new Client({ name: "output-mismatch-test", version: "1.0.0" });
  await client.connect(b);
  await client.listTools();
  return client;
}

describe("structuredContent that breaks the tool's outputSchema", () => {
  it("is an isError result naming the mismatch, never a JSON-RPC error", async () => {
    const tools = [
      tool("count_open_tickets", "read", { count: "three" }),
      tool("close_stale_tickets", "write", "closed 3"),
      tool("count_closed_tickets", "read", { count: 2 }),
    ];
    const mcp = await connect(tools);

    const read = (await mcp.callTool({ name: "count_open_tickets", arguments: {} })) as CallToolResult;
    expect(read.isError).toBe(true);
    expect((read._meta?.["toolgate/observation"] as { error?: { code?: string } }).error?.code).toBe("output_invalid");
    expect(read.content[0]).toMatchObject({ type: "text" });
    const text = (read.content[0] as { text: string }).text;
    expect(text).toContain("count must be an integer");
    expect(text).toContain("does not match the outputSchema");

    const write = (await mcp.callTool({ name: "close_stale_tickets", arguments: {} })) as CallToolResult;
    expect(write.isError).toBe(true);
    expect((write.content[0] as { text: string }).text).toContain("it ran");

    const fine = (await mcp.callTool({ name: "count_closed_tickets", arguments: {} })) as CallToolResult;
    expect([fine.isError, fine.structuredContent]).toEqual([undefined, { count: 2 }]);
  });

  it("a replayed result that breaks the schema (stored by an operator's settle) tells the model to tell the operator, not the tool's author", async () => {
    let attempts = 0;
    const flaky = defineTool({
      name: "close_stale_tickets",
      description: "Closes the stale tickets in the support queue right now.",
      input: z.object({}),
      output,
      effect: "write",
      handler: () => (attempts++ === 0 ? Promise.reject(new Error("connection reset")) : { count: 1 }),
    });
    const store = createMemoryStore();
    const mcp = await connect([flaky], store);
    const ids = { "toolgate/trajectory_id": "t-settle", "toolgate/turn": 1, "toolgate/call_id": "c-1" };
    const doubt = (await mcp.callTool({ name: "close_stale_tickets", arguments: {}, _meta: ids })) as CallToolResult;
    const key = (doubt._meta?.["toolgate/observation"] as { error: { detail: { key: string } } }).error.detail.key;
    await resolveInDoubt(store, key, { outcome: "applied", result: { count: "three" } }); // the library call, which has no catalog to check against
    const replay = (await mcp.callTool({ name: "close_stale_tickets", arguments: {}, _meta: ids })) as CallToolResult;
    expect(replay.isError).toBe(true);
    const text = (replay.content[0] as { text: string }).text;
    expect(text).not.toContain("tool's author");
    expect(text.slice(text.indexOf("This call already ran"))).toMatchInlineSnapshot(`
      "This call already ran; its stored result (kept by an earlier run, or given by an operator settling the call) does not match the outputSchema close_stale_tickets publishes in tools/list:
      - count must be an integer; received "three" (string)
      The result is shown above as text only. Do not call it again to retry; tell the operator, who can inspect it with toolgate records show."
    `);
    expect(attempts).toBe(1);
  });
});
