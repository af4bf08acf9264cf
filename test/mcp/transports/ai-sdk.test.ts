/**
 * The Vercel AI SDK's MCP client (`@ai-sdk/mcp`), a third-party client that probes with
 * `server/discover` and speaks 2026-07-28 when the server does: over Streamable HTTP and over
 * stdio (the CLI spawned from source) it lists, calls, gets a bad call as a tool result and an
 * unknown tool as a JSON-RPC error with the names, and its A3 calls are approved or declined
 * through the input-required round trip.
 */
import { afterEach, describe, expect, it } from "vitest";
import { createMCPClient, ElicitationRequestSchema, type MCPClient, type MCPTransport } from "@ai-sdk/mcp";
import { Experimental_StdioMCPTransport } from "@ai-sdk/mcp/mcp-stdio";
import { createGateway } from "../../../src/runtime/gateway.js";
import { openStore } from "../../../src/idempotency/open.js";
import { serveHttp } from "../../../src/mcp/transports/http.js";
import catalog from "../fixtures/notes-catalog.js";
import { executions, notesServeCommand, obsOf, tempDir } from "../support.js";

const cleanup: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const done of cleanup.splice(0).reverse()) await done().catch(() => {});
});

type Answer = "accept" | "decline";

async function open(transport: MCPTransport | { type: "http"; url: string }, answer: Answer): Promise<MCPClient> {
  const client = await createMCPClient({ transport, capabilities: { elicitation: { form: {} } } });
  client.onElicitationRequest(ElicitationRequestSchema, () => ({ action: answer }));
  cleanup.push(() => client.close());
  return client;
}

async function overHttp(): Promise<{ notes: string; connect: (a: Answer) => Promise<MCPClient> }> {
  const notes = tempDir("ai-sdk-http");
  process.env.NOTES_DIR = notes;
  const gateway = createGateway({ tools: catalog, store: await openStore("memory:"), audit: false });
  const http = await serveHttp(gateway, { port: 0, approveVia: "both", warn: () => {} });
  cleanup.push(async () => {
    await http.close();
    await gateway.close();
  });
  return { notes, connect: (a) => open({ type: "http", url: http.url.href }, a) };
}

async function overStdio(): Promise<{ notes: string; connect: (a: Answer) => Promise<MCPClient> }> {
  const notes = tempDir("ai-sdk-stdio");
  return {
    notes,
    connect: (a) => open(new Experimental_StdioMCPTransport({ ...notesServeCommand(notes), stderr: "pipe" }), a),
  };
}

describe.each([
  ["http", overHttp],
  ["stdio", overStdio],
] as const)("@ai-sdk/mcp over %s", (name, serve) => {
  it("lists, calls, and answers a bad call and an unknown tool", { timeout: 60_000 }, async () => {
    const served = await serve();
    const client = await served.connect("accept");
    // Over stdio the client gives server/discover one second: the CLI started from source (tsx)
    // may take longer, and the client then falls back to initialize; both revisions must serve it.
    expect(name === "http" ? ["2026-07-28"] : ["2025-11-25", "2026-07-28"]).toContain(
      client.initializeResult.protocolVersion,
    );
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name)).toContain("note_read");
    const read = await client.callTool({ name: "note_read", arguments: { name: "a" } });
    expect(read.isError).toBeFalsy();
    const bad = await client.callTool({ name: "note_read", arguments: { name: 42 } });
    expect(obsOf(bad).error?.code).toBe("invalid_arguments");
    const unknown = await client.callTool({ name: "note_raed", arguments: {} }).catch((e: unknown) => e);
    expect(String((unknown as Error).message)).toContain('There is no tool named "note_raed"');
  });

  it("runs an A3 call the person approves, and not one they decline", { timeout: 60_000 }, async () => {
    const served = await serve();
    const yes = await served.connect("accept");
    const approved = await yes.callTool({ name: "note_delete", arguments: { name: "k" } });
    expect(approved.isError).toBeFalsy();
    expect(executions(served.notes)).toEqual(["note_delete k"]);
    const no = await served.connect("decline");
    const denied = await no.callTool({ name: "note_delete", arguments: { name: "d" } });
    expect(obsOf(denied).error?.code).toBe("approval_denied");
    expect(executions(served.notes)).toEqual(["note_delete k"]);
  });
});
