/**
 * The proxy in front of the real @modelcontextprotocol/server-everything, asked by the real SDK v2
 * client in both revisions over Streamable HTTP: an image, resource links and an embedded resource
 * pass through as content blocks (checked and bounded on the way, named in the text), and the
 * caller's trace context goes on to the upstream in the `_meta` of its tools/call (the logging
 * wrapper records every line the upstream receives).
 */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { createGateway } from "../../../src/runtime/gateway.js";
import { openStore } from "../../../src/idempotency/open.js";
import { serveHttp, type HttpHandle } from "../../../src/mcp/transports/http.js";
import { createProxy, type Proxy } from "../../../src/mcp/proxy/proxy.js";
import { tempDir } from "../support.js";

const wrapper = fileURLToPath(new URL("../fixtures/logging-wrapper.mjs", import.meta.url));
const everything = fileURLToPath(import.meta.resolve("@modelcontextprotocol/server-everything/dist/index.js"));
const PARENT = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";

let proxy: Proxy;
let http: HttpHandle;
let log: string;
const clients: Client[] = [];

beforeAll(async () => {
  log = join(tempDir("everything"), "upstream.jsonl");
  proxy = await createProxy({
    upstream: {
      command: process.execPath,
      args: [wrapper, process.execPath, everything, "stdio"],
      env: { WRAPPER_LOG: log },
    },
    gateway: async (tools) => createGateway({ tools, store: await openStore("memory:"), audit: false }),
    log: () => {},
  });
  http = await serveHttp(proxy.gateway, { port: 0, warn: () => {} });
}, 60_000);

afterAll(async () => {
  await Promise.allSettled(clients.map((c) => c.close()));
  await http?.close();
  await proxy?.close({ grace_ms: 100 });
});

/** What the upstream received for tools/call, in order. */
function upstreamCalls(): Array<{ name: string; _meta?: Record<string, unknown> }> {
  return (existsSync(log) ? readFileSync(log, "utf8").split("\n").filter(Boolean) : [])
    .map((l) => JSON.parse(l) as { method?: string; params?: { name: string; _meta?: Record<string, unknown> } })
    .filter((m) => m.method === "tools/call")
    .map((m) => m.params!);
}

type Block = { type: string; [key: string]: unknown };

describe.each(["2025-11-25", "2026-07-28"] as const)("a %s client through the proxy", { timeout: 60_000 }, (era) => {
  async function connect(): Promise<Client> {
    const c = new Client(
      { name: `everything-${era}`, version: "1.0.0" },
      era === "2026-07-28" ? { versionNegotiation: { mode: { pin: "2026-07-28" } } } : {},
    );
    await c.connect(new StreamableHTTPClientTransport(http.url));
    clients.push(c);
    return c;
  }

  it("gets the upstream's image as an image block, named in the text", async () => {
    const c = await connect();
    const r = await c.callTool({ name: "get-tiny-image", arguments: {} });
    expect(r.isError).toBeFalsy();
    const blocks = r.content as Block[];
    const image = blocks.find((b) => b.type === "image")!;
    expect(image.mimeType).toBe("image/png");
    expect(String(image.data)).toMatch(/^iVBORw0KGgo/);
    const text = blocks.find((b) => b.type === "text")!.text as string;
    expect(text).toContain("Here's the image you requested:");
    expect(text).toMatch(/\[image image\/png, [\d,]+ bytes, attached\]/);
  });

  it("gets resource links as resource_link blocks with their names and types", async () => {
    const c = await connect();
    const r = await c.callTool({ name: "get-resource-links", arguments: { count: 2 } });
    const links = (r.content as Block[]).filter((b) => b.type === "resource_link");
    expect(links).toHaveLength(2);
    for (const l of links) {
      expect(l.uri).toMatch(/^demo:\/\//);
      expect(typeof l.name).toBe("string");
    }
    expect((r.content as Block[])[0]!.text).toContain("[link ");
  });

  it("reads an embedded text resource into the text", async () => {
    const c = await connect();
    const r = await c.callTool({ name: "get-resource-reference", arguments: { resourceType: "Text", resourceId: 2 } });
    expect(r.isError).toBeFalsy();
    expect((r.content as Block[])[0]!.text).toMatch(/Resource 2/);
  });

  it("passes the caller's trace context on to the upstream", async () => {
    const c = await connect();
    await c.callTool({ name: "echo", arguments: { message: `traced ${era}` }, _meta: { traceparent: PARENT } });
    await c.callTool({ name: "echo", arguments: { message: `forged ${era}` }, _meta: { traceparent: "forged" } });
    const calls = upstreamCalls().filter((m) => m.name === "echo");
    expect(calls.at(-2)?._meta?.traceparent).toBe(PARENT);
    // A malformed traceparent stops at the gateway: the upstream never sees it.
    expect(calls.at(-1)?._meta?.traceparent).toBeUndefined();
  });
});
