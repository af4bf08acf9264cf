import { describe, expect, it } from "vitest";
import { Client, type CallToolResult, type Tool } from "@modelcontextprotocol/client";
import { InMemoryTransport, Server } from "@modelcontextprotocol/server";
import { createMemoryStore } from "../../../src/idempotency/stores/memory.js";
import { effectFromAnnotations, proxyGrant, proxyToolSpec } from "../../../src/mcp/proxy/proxy-tools.js";
import { createMcpServer } from "../../../src/mcp/server/server.js";
import { ProxyClient } from "../../../src/mcp/proxy/upstream-call.js";
import { createGateway } from "../../../src/runtime/gateway.js";

describe("proxy effects from MCP annotations", () => {
  it("follows MCP's defaults: a tool without annotations is destructive", () => {
    expect(effectFromAnnotations(undefined)).toBe("destructive");
    expect(effectFromAnnotations({})).toBe("destructive");
    expect(effectFromAnnotations({ readOnlyHint: true })).toBe("read");
    expect(effectFromAnnotations({ readOnlyHint: false, destructiveHint: true, idempotentHint: true })).toBe(
      "destructive",
    );
    expect(effectFromAnnotations({ destructiveHint: false, idempotentHint: true })).toBe("idempotent");
    expect(effectFromAnnotations({ destructiveHint: false })).toBe("write");
  });
  it("asks for the path argument when it is absolute, else for the tool", () => {
    expect(proxyGrant("read_text_file", "read", { path: "/srv/a.txt" })).toEqual({
      op: "read",
      target: "path:/srv/a.txt",
      cost: 1,
    });
    expect(proxyGrant("create_entities", "write", { entities: [] })).toEqual({
      op: "write",
      target: "tool:create_entities",
      cost: 1,
    });
    expect(proxyGrant("write_file", "destructive", { path: "rel.txt" })).toEqual({
      op: "write",
      target: "tool:write_file",
      cost: 1,
    });
  });
});

/**
 * An upstream whose structuredContent breaks its own outputSchema: the proxy's SDK client does
 * not check it (the MCP face checks it once, for every call), so the upstream's answer is the
 * call's result, COMPLETED, and the client reads the output_invalid result that says it ran.
 */
describe("a proxied tool's output is checked once, by the MCP face", () => {
  const schema = { type: "object", properties: { n: { type: "integer" } }, required: ["n"] } as const;
  async function upstreamClient(structured: unknown): Promise<{ client: Client; tool: Tool; calls: () => number }> {
    let calls = 0;
    const upstream = new Server({ name: "up", version: "1.0.0" }, { capabilities: { tools: {} } });
    const tool: Tool = {
      name: "count",
      description: "Counts.",
      inputSchema: { type: "object", properties: {}, additionalProperties: false },
      outputSchema: schema,
      annotations: { readOnlyHint: false, destructiveHint: false },
    };
    upstream.setRequestHandler("tools/list", () => ({ tools: [tool] }));
    upstream.setRequestHandler("tools/call", () => {
      calls++;
      return { content: [{ type: "text", text: JSON.stringify(structured) }], structuredContent: structured };
    });
    const [a, b] = InMemoryTransport.createLinkedPair();
    await upstream.connect(a);
    const client = new Client({ name: "proxy", version: "1.0.0" });
    await client.connect(b);
    await client.listTools(); // what the SDK client would validate against
    return { client, tool, calls: () => calls };
  }

  async function callThrough(structured: unknown) {
    const up = await upstreamClient(structured);
    const store = createMemoryStore();
    const gateway = createGateway({ tools: [proxyToolSpec(up.client, up.tool)], store, audit: false });
    const [a, b] = InMemoryTransport.createLinkedPair();
    await createMcpServer(gateway).connect(a);
    const client = new Client({ name: "agent", version: "1.0.0" });
    await client.connect(b);
    const ids = { "toolgate/trajectory_id": "t1", "toolgate/call_id": "c1" };
    const result = (await client.callTool({ name: "count", arguments: {}, _meta: ids })) as CallToolResult;
    const repeat = (await client.callTool({ name: "count", arguments: {}, _meta: ids })) as CallToolResult;
    await client.close();
    await gateway.close();
    await up.client.close();
    return { result, repeat, calls: up.calls() };
  }

  it("answers an upstream's wrong output with output_invalid (it ran), and a repeat replays it", async () => {
    const { result, repeat, calls } = await callThrough({ n: "three" });
    expect(result.isError).toBe(true);
    const text = (result.content as { text: string }[]).map((c) => c.text).join("\n");
    expect(text).toContain("count ran, but its result does not match the outputSchema it publishes in tools/list");
    expect(text).toContain("do not call it again to retry");
    expect((result._meta?.["toolgate/observation"] as { error?: { code?: string } }).error?.code).toBe(
      "output_invalid",
    );
    // COMPLETED, not in doubt: the same ids replay the stored answer and the upstream ran once.
    expect(repeat.isError).toBe(true);
    expect(calls).toBe(1);
  });

  it("passes a conforming output through as structuredContent", async () => {
    const { result, calls } = await callThrough({ n: 3 });
    expect(result.isError).toBeFalsy();
    expect(result.structuredContent).toEqual({ n: 3 });
    expect(calls).toBe(1);
  });
});

/**
 * An upstream that answers tools/call with whatever it likes (a hand-driven transport: an SDK
 * server checks its own results before sending them). The proxy sends the call with the SDK's
 * plain request and checks the result itself (`upstreamResultProblem`): a malformed one is
 * refused naming the field, as the SDK's CallToolResult schema refused it.
 */
// Each through the SDK's request funnel (a plain Client) and the proxy's direct call (ProxyClient,
// upstream-call.ts): the two check a result alike.
describe.each([
  ["the SDK's funnel", Client],
  ["the direct call", ProxyClient],
])("an upstream's malformed tools/call result, through %s", (_path, ClientClass) => {
  const tool: Tool = {
    name: "emit",
    description: "Emits.",
    inputSchema: { type: "object", properties: {}, additionalProperties: false },
    annotations: { readOnlyHint: true },
  };
  async function callWith(answer: unknown) {
    const [upstreamSide, clientSide] = InMemoryTransport.createLinkedPair();
    let called: { id?: number | string } | undefined;
    upstreamSide.onmessage = (m) => {
      const r = m as { id?: number; method?: string; params?: { protocolVersion?: string } };
      if (r.method === "initialize")
        void upstreamSide.send({
          jsonrpc: "2.0",
          id: r.id!,
          result: { protocolVersion: r.params!.protocolVersion!, capabilities: { tools: {} }, serverInfo: up },
        });
      else if (r.method === "tools/call") {
        called = r;
        void upstreamSide.send({ jsonrpc: "2.0", id: r.id!, result: answer as Record<string, unknown> });
      }
    };
    const up = { name: "hostile", version: "1.0.0" };
    await upstreamSide.start();
    const client = new ClientClass({ name: "proxy", version: "1.0.0" });
    await client.connect(clientSide);
    const gateway = createGateway({ tools: [proxyToolSpec(client, tool)], store: createMemoryStore(), audit: false });
    const obs = await gateway.call({ tool: "emit", arguments: {}, trajectory_id: "t", turn: 0, call_id: "c" });
    expect(typeof called?.id).toBe(ClientClass === ProxyClient ? "string" : "number");
    await gateway.close();
    await client.close();
    return obs;
  }

  it.each([
    [{ content: [{ type: "text", text: 5 }] }, "content[0].text must be a string; received 5"],
    [{ content: "ok" }, 'content must be an array of content blocks; received "ok"'],
    [{ content: [{ type: "text", text: "a" }, 7] }, "content[1] must be a content block (an object); received 7"],
    [
      { content: [{ type: "video", uri: "x" }] },
      'content[0].type must be one of text, image, audio, resource_link, resource; received "video"',
    ],
    [{ content: [{ type: "image", data: "AAAA" }] }, "content[0].mimeType must be a string; received nothing"],
    [
      { content: [{ type: "resource_link", uri: "file:///a", name: "a", size: "big" }] },
      'content[0].size must be a number; received "big"',
    ],
    [
      { content: [{ type: "resource", resource: { uri: "file:///a" } }] },
      'content[0].resource must carry text or blob (a string); received {"uri":"file:///a"}',
    ],
    [{ content: [], structuredContent: [1, 2] }, "structuredContent must be an object; received [1,2]"],
    [{ content: [], isError: "yes" }, 'isError must be a boolean; received "yes"'],
    [{ task: { taskId: "t1" } }, "content is required when the result carries task"],
  ])("refuses %j, naming what is wrong", async (answer, problem) => {
    const obs = await callWith(answer);
    expect(obs.ok).toBe(false);
    expect(obs.text).toContain("did not answer emit");
    expect(obs.text).toContain(problem);
  });

  it("reads a well-formed result, and one without content as one with none", async () => {
    const full = await callWith({
      content: [
        { type: "text", text: "hello" },
        { type: "resource", resource: { uri: "file:///n.txt", mimeType: "text/plain", text: "note" } },
      ],
      structuredContent: { n: 1 },
      _meta: { seen: true },
    });
    expect(full.ok).toBe(true);
    expect(full.output).toEqual({ n: 1 });
    expect(full.text).toContain("hello\nnote");
    const empty = await callWith({});
    expect(empty.ok).toBe(true);
    expect(empty.output).toBe("");
  });
});
