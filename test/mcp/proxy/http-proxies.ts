/**
 * Proxies in front of a real upstream, served over Streamable HTTP in process, and SDK v2 clients
 * of either revision connected to them; `close` ends every client, endpoint and proxy a suite opened.
 */
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { createGateway } from "../../../src/runtime/gateway.js";
import { openStore } from "../../../src/idempotency/open.js";
import { serveHttp, type HttpHandle } from "../../../src/mcp/transports/http.js";
import { createProxy, type Proxy } from "../../../src/mcp/proxy/proxy.js";

export type Era = "2025-11-25" | "2026-07-28";

export interface Served {
  proxy: Proxy;
  http: HttpHandle;
  /** What the proxy told its operator. */
  lines: string[];
}

export function httpProxies(clientName: string, serverOptions: { logging?: boolean } = {}) {
  const opened: Served[] = [];
  /** Every client to close at the end, these helpers' and any a suite adds. */
  const clients: Array<{ close(): Promise<void> }> = [];

  /** `node ARGS` behind a proxy on an in-memory store, its changes, logs and pass-through served. */
  async function serve(args: string[]): Promise<Served> {
    const lines: string[] = [];
    const proxy = await createProxy({
      upstream: { command: process.execPath, args },
      gateway: async (tools) => createGateway({ tools, store: await openStore("memory:"), audit: false }),
      log: (line) => lines.push(line),
    });
    const http = await serveHttp(proxy.gateway, {
      port: 0,
      warn: () => {},
      toolsChanged: proxy.toolsChanged,
      passThrough: proxy.passThrough,
      ...(serverOptions.logging ? { logging: true } : {}),
    });
    const served = { proxy, http, lines };
    opened.push(served);
    return served;
  }

  async function connect(http: HttpHandle, era: Era): Promise<Client> {
    const c = new Client(
      { name: `${clientName}-${era}`, version: "1.0.0" },
      era === "2026-07-28" ? { versionNegotiation: { mode: { pin: "2026-07-28" } } } : {},
    );
    await c.connect(new StreamableHTTPClientTransport(http.url));
    clients.push(c);
    return c;
  }

  async function close(): Promise<void> {
    await Promise.allSettled(clients.map((c) => c.close()));
    for (const s of opened) {
      await s.http.close();
      await s.proxy.close({ grace_ms: 100 });
    }
  }

  return { serve, connect, clients, close };
}
