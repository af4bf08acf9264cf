/**
 * The bytes toolgate's MCP server sends for `tools/list`, for the catalogs a deployment serves:
 * the coding catalog with `read_more`, a `defineTool` catalog, and two proxied catalogs (the real
 * server-memory, and `fixtures/hints-server.mjs`, whose tools carry every form of annotations a
 * proxy meets). Each answer is the JSON-RPC message exactly as the server hands it to its
 * transport (what stdio writes as one line), asked for by a real SDK client; the workspace path
 * reads `/WORKSPACE`.
 *
 * `tools-list.test.ts` compares them with `fixtures/tools-list.jsonl`. When a change is meant to
 * alter tools/list, write the file again with `npx tsx test/mcp/tools-list.ts --write` and say
 * why in the commit.
 */
import { mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";
import { createGateway } from "../../src/runtime/gateway.js";
import { openStore } from "../../src/idempotency/open.js";
import { createMcpServer } from "../../src/mcp/server/server.js";
import { createProxy } from "../../src/mcp/proxy/proxy.js";
import { createCodingCatalog } from "../../src/tools/catalog.js";
import type { ToolSpec } from "../../src/core/tool.js";
import type { Gateway } from "../../src/runtime/types.js";
import notesCatalog from "./fixtures/notes-catalog.js";

export const TOOLS_LIST_FILE = fileURLToPath(new URL("./fixtures/tools-list.jsonl", import.meta.url));
const memoryServer = fileURLToPath(import.meta.resolve("@modelcontextprotocol/server-memory/dist/index.js"));
const hintsServer = fileURLToPath(new URL("./fixtures/hints-server.mjs", import.meta.url));

/** The `tools/list` answer a real client gets from `gateway`, as the server sent it. */
async function listedBytes(gateway: Gateway): Promise<string> {
  const server = createMcpServer(gateway);
  const [serverSide, clientSide] = InMemoryTransport.createLinkedPair();
  const sent: JSONRPCMessage[] = [];
  const send = serverSide.send.bind(serverSide);
  serverSide.send = (message, options) => {
    sent.push(message);
    return send(message, options);
  };
  await server.connect(serverSide);
  const client = new Client({ name: "tools-list", version: "1.0.0" });
  await client.connect(clientSide);
  try {
    await client.listTools();
  } finally {
    await client.close();
    await server.close();
  }
  const answer = sent.find((m) => "result" in m && "tools" in (m.result as object));
  if (!answer) throw new Error(`the server sent no tools/list answer; it sent ${JSON.stringify(sent)}`);
  return JSON.stringify(answer);
}

const gatewayOf = async (tools: ToolSpec[], continuations = false) =>
  createGateway({ tools, store: await openStore("memory:"), audit: false, continuations });

/** One line per catalog: `{"catalog": NAME, "answer": <the JSON-RPC message>}` with the message's own bytes. */
export async function toolsListLines(): Promise<string[]> {
  const base = realpathSync(mkdtempSync(join(tmpdir(), "toolgate-tools-list-")));
  const workspace = join(base, "ws");
  const lines: string[] = [];
  const add = (catalog: string, bytes: string) =>
    lines.push(`{"catalog":${JSON.stringify(catalog)},"answer":${bytes.replaceAll(workspace, "/WORKSPACE")}}`);
  try {
    (await import("node:fs")).mkdirSync(workspace);
    const coding = await gatewayOf(createCodingCatalog({ workspace }), true);
    add("coding catalog with read_more", await listedBytes(coding));
    await coding.close();
    const notes = await gatewayOf(notesCatalog);
    add("defineTool catalog (test/mcp/fixtures/notes-catalog.ts)", await listedBytes(notes));
    await notes.close();
    for (const [catalog, server, env] of [
      ["proxy of @modelcontextprotocol/server-memory", memoryServer, { MEMORY_FILE_PATH: join(base, "memory.jsonl") }],
      ["proxy of test/mcp/fixtures/hints-server.mjs", hintsServer, {}],
    ] as const) {
      const proxy = await createProxy({
        upstream: { command: process.execPath, args: [server], env },
        gateway: (tools) => gatewayOf(tools),
        log: () => {},
      });
      try {
        add(catalog, await listedBytes(proxy.gateway));
      } finally {
        await proxy.close({ grace_ms: 100 });
      }
    }
  } finally {
    rmSync(base, { recursive: true, force: true });
  }
  return lines;
}

if (process.argv[1] === fileURLToPath(import.meta.url) && process.argv.includes("--write")) {
  writeFileSync(TOOLS_LIST_FILE, (await toolsListLines()).join("\n") + "\n");
  process.stdout.write(`wrote ${TOOLS_LIST_FILE}\n`);
}
