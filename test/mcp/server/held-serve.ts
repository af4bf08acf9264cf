/**
 * The tasks catalog (`fixtures/tasks-catalog.ts`) served to a 2026-07-28 SDK v2 client that
 * declared elicitation and no tasks, over stdio (`serve --catalog`, spawned from source) or
 * Streamable HTTP (in process, on a memory store): what the held call suites share
 * (`held-notices.test.ts`, `held-approval.test.ts`).
 */
import { afterEach } from "vitest";
import { Client, StreamableHTTPClientTransport, type Transport } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { openStore } from "../../../src/idempotency/open.js";
import { createGateway } from "../../../src/runtime/gateway.js";
import { serveHttp, type HttpOptions } from "../../../src/mcp/transports/http.js";
import catalog from "../fixtures/tasks-catalog.js";
import { notesServeCommand } from "../support.js";

const cleanup: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const done of cleanup.splice(0).reverse()) await done().catch(() => {});
});

/** A transport to the catalog with `notes` as its notes dir; over HTTP served with `options`. */
export async function heldServer(over: "stdio" | "http", notes: string, options: HttpOptions = {}): Promise<Transport> {
  if (over === "stdio")
    return new StdioClientTransport({ ...notesServeCommand(notes, { catalog: "tasks-catalog.ts" }), stderr: "pipe" });
  process.env.NOTES_DIR = notes;
  const store = await openStore("memory:");
  const gateway = createGateway({ tools: catalog, store, audit: false });
  const http = await serveHttp(gateway, { port: 0, warn: () => {}, ...options });
  cleanup.push(async () => {
    await http.close();
    await gateway.close({ grace_ms: 0 });
  });
  return new StreamableHTTPClientTransport(http.url);
}

/** A 2026-07-28 SDK v2 client on `transport` that declared form elicitation, closed after the test. */
export async function heldClient(transport: Transport): Promise<Client> {
  const c = new Client(
    { name: "held-client", version: "1.0.0" },
    { capabilities: { elicitation: { form: {} } }, versionNegotiation: { mode: { pin: "2026-07-28" } } },
  );
  await c.connect(transport);
  cleanup.push(() => c.close());
  return c;
}
