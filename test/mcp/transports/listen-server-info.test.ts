/**
 * The result toolgate writes itself to end a 2026-07-28 `subscriptions/listen` stream over
 * Streamable HTTP (past `maxListenMs`) names the server as every other result does
 * (`io.modelcontextprotocol/serverInfo`, the name and version the server was given), read from the
 * raw SSE body a hostile-or-plain client gets. Over stdio, listen-lifetime.test.ts.
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import { Server } from "@modelcontextprotocol/server";
import { openStore } from "../../../src/idempotency/open.js";
import { serveHttp, type HttpHandle } from "../../../src/mcp/transports/http.js";
import { createGateway } from "../../../src/runtime/gateway.js";
import type { Gateway } from "../../../src/runtime/types.js";
import catalog from "../fixtures/notes-catalog.js";
import { request } from "./raw-http.js";

const ENVELOPE = {
  "io.modelcontextprotocol/protocolVersion": "2026-07-28",
  "io.modelcontextprotocol/clientCapabilities": {},
  "io.modelcontextprotocol/clientInfo": { name: "raw-2026", version: "1.0.0" },
};
const headers = (method: string) => ({
  "content-type": "application/json",
  accept: "application/json, text/event-stream",
  "mcp-protocol-version": "2026-07-28",
  "mcp-method": method,
});

let gateway: Gateway;
let server: HttpHandle;
afterEach(async () => {
  vi.restoreAllMocks();
  await server?.close();
  await gateway?.close();
});

/** The JSON messages of an SSE body. */
const messages = (body: string) =>
  [...body.matchAll(/^data: (.*)$/gm)].map((m) => JSON.parse(m[1]!) as Record<string, unknown>);

describe("the graceful end of a listen over HTTP", { timeout: 30_000 }, () => {
  it("names the server, as the other results name it", async () => {
    // The SDK ends at once a listen for nothing the server declares: declare tools.listChanged so it stays open.
    const original = Server.prototype.getCapabilities;
    vi.spyOn(Server.prototype, "getCapabilities").mockImplementation(function (this: Server) {
      return { ...original.call(this), tools: { listChanged: true } };
    });
    gateway = createGateway({ tools: catalog, store: await openStore("memory:"), audit: false });
    server = await serveHttp(gateway, {
      port: 0,
      warn: () => {},
      maxListenMs: 300,
      name: "tg-named",
      version: "9.8.7",
    });
    const listed = await request(server.url, {
      headers: headers("tools/list"),
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list", params: { _meta: ENVELOPE } }),
    });
    const info = { name: "tg-named", version: "9.8.7" };
    const [list] = messages(listed.body).length > 0 ? messages(listed.body) : [JSON.parse(listed.body)];
    expect((list!.result as { _meta: Record<string, unknown> })._meta["io.modelcontextprotocol/serverInfo"]).toEqual(
      info,
    );
    const ended = await request(server.url, {
      headers: headers("subscriptions/listen"),
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: "L1",
        method: "subscriptions/listen",
        params: { _meta: ENVELOPE, notifications: { toolsListChanged: true } },
      }),
    });
    expect(messages(ended.body).at(-1)).toEqual({
      jsonrpc: "2.0",
      id: "L1",
      result: {
        resultType: "complete",
        _meta: { "io.modelcontextprotocol/subscriptionId": "L1", "io.modelcontextprotocol/serverInfo": info },
      },
    });
  });
});
