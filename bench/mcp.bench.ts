/**
 * MCP round trips over stdio, same SDK Client, same run:
 * - `toolgate serve --catalog` with a no-op read tool vs a bare SDK McpServer with the same tool (goal ≤ 1.10×);
 * - a no-op write (A2: idempotency key claimed and settled in the default SQLite store) vs the bare server (goal ≤ 1.3×);
 * - `toolgate proxy` in front of the bare server vs calling the bare server directly.
 * Both servers are child processes started from source (tsx for toolgate), default settings
 * (SQLite store and audit trail under a temporary workspace). A last row runs both servers in
 * process over the SDK's InMemoryTransport (real gateway, memory store, no audit), which
 * separates the boundary's own cost from process and I/O noise.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { getDefaultEnvironment, StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import type { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { z } from "zod";
import { openStore } from "../src/idempotency/open.js";
import { createMcpServer } from "../src/mcp/server.js";
import { createGateway } from "../src/runtime/gateway.js";
import { noop } from "../test/mcp/fixtures/notes-catalog.js";
import type { Harness } from "./harness.js";

const root = dirname(dirname(fileURLToPath(import.meta.url)));
const bare = join(root, "bench/fixtures/bare-mcp-server.mjs");
const toolgate = [process.execPath, "--import", "tsx", join(root, "src/cli/main.ts")];

async function connect(command: string, args: string[], cwd: string): Promise<Client> {
  const client = new Client({ name: "bench", version: "1.0.0" });
  await client.connect(new StdioClientTransport({ command, args, cwd, env: getDefaultEnvironment(), stderr: "ignore" }));
  await client.listTools(); // caches output validators on both sides alike
  return client;
}

async function connectInMemory(server: Server | McpServer): Promise<Client> {
  const [serverSide, clientSide] = InMemoryTransport.createLinkedPair();
  await server.connect(serverSide);
  const client = new Client({ name: "bench", version: "1.0.0" });
  await client.connect(clientSide);
  await client.listTools();
  return client;
}

/** Fewer, smaller batches than the default: each call is a process round trip. */
const SIZE = { batch: 50, rounds: 20 } as const;

export default async function (h: Harness): Promise<void> {
  const ws = mkdtempSync(join(tmpdir(), "toolgate-bench-mcp-"));
  const clients: Client[] = [];
  try {
    const direct = await connect(process.execPath, [bare], root);
    const served = await connect(toolgate[0]!, [...toolgate.slice(1), "serve", "--workspace", ws, "--catalog", join(root, "test/mcp/fixtures/notes-catalog.ts")], root);
    const proxied = await connect(toolgate[0]!, [...toolgate.slice(1), "proxy", "--store", `sqlite:${join(ws, "proxy.db")}`, "--audit", join(ws, "proxy-audit.jsonl"), "--", process.execPath, bare], root);
    clients.push(direct, served, proxied);

    const read = (c: Client) => () => c.callTool({ name: "noop_read", arguments: {} });
    await h.compare({
      area: "mcp",
      hot_path: "tools/call no-op read (A0) over stdio",
      toolgate: read(served),
      peer: { name: "bare SDK McpServer", fn: read(direct) },
      goal: { op: "<=", value: 1.1, label: "≤ 1.10×" },
      note: "toolgate serve --catalog, default SQLite store + audit trail",
      ...SIZE,
    });

    let n = 0;
    const write = (c: Client) => () => c.callTool({ name: "noop_write", arguments: { n: n++ } });
    await h.compare({
      area: "mcp",
      hot_path: "tools/call no-op write (A2) over stdio",
      toolgate: write(served),
      peer: { name: "bare SDK McpServer", fn: write(direct) },
      goal: { op: "<=", value: 1.3, label: "≤ 1.3×" },
      note: "each call claims and settles an idempotency key in SQLite (WAL)",
      ...SIZE,
    });

    await h.compare({
      area: "mcp",
      hot_path: "toolgate proxy → upstream no-op read",
      toolgate: read(proxied),
      peer: { name: "upstream called directly", fn: read(direct) },
      note: "two stdio hops vs one",
      ...SIZE,
    });

    const gateway = createGateway({ tools: [noop], store: await openStore("memory:"), audit: false });
    const bareServer = new McpServer({ name: "bare", version: "1.0.0" });
    bareServer.registerTool("noop_read", { description: "Does nothing and returns ok.", inputSchema: {}, outputSchema: { ok: z.boolean() } }, () => ({
      content: [{ type: "text", text: '{"ok":true}' }],
      structuredContent: { ok: true },
    }));
    const inProcess = await connectInMemory(createMcpServer(gateway));
    const bareInProcess = await connectInMemory(bareServer);
    clients.push(inProcess, bareInProcess);
    await h.compare({
      area: "mcp",
      hot_path: "tools/call no-op read, in process",
      toolgate: read(inProcess),
      peer: { name: "bare SDK McpServer", fn: read(bareInProcess) },
      note: "InMemoryTransport; real gateway, memory store, audit off",
    });
  } finally {
    await Promise.allSettled(clients.map((c) => c.close()));
    rmSync(ws, { recursive: true, force: true });
  }
}
