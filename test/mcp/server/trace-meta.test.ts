/**
 * A caller's W3C trace context over MCP: `traceparent` and `tracestate` in a tools/call's `_meta`
 * (or, over HTTP, the W3C headers) reach the audit record of the call, in both protocol
 * revisions, sent by the real SDK v2 client; a malformed one is left out, the call answered as any.
 */
import { afterEach, describe, expect, it } from "vitest";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { createGateway } from "../../../src/runtime/gateway.js";
import { createMemoryAuditSink } from "../../../src/runtime/audit.js";
import { openStore } from "../../../src/idempotency/open.js";
import { serveHttp } from "../../../src/mcp/transports/http.js";
import catalog from "../fixtures/notes-catalog.js";
import { obsOf, tempDir } from "../support.js";

const PARENT = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";

const cleanup: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const done of cleanup.splice(0).reverse()) await done().catch(() => {});
});

/** toolgate over Streamable HTTP in this process, its audit lines kept in memory. */
async function served(headers: Record<string, string> = {}) {
  process.env.NOTES_DIR = tempDir("trace-meta");
  const audit = createMemoryAuditSink();
  const gateway = createGateway({ tools: catalog, store: await openStore("memory:"), audit });
  const http = await serveHttp(gateway, { port: 0, warn: () => {} });
  cleanup.push(async () => {
    await http.close();
    await gateway.close();
  });
  const connect = async (era: "2025-11-25" | "2026-07-28") => {
    const c = new Client(
      { name: `trace-${era}`, version: "1.0.0" },
      era === "2026-07-28" ? { versionNegotiation: { mode: { pin: "2026-07-28" } } } : {},
    );
    await c.connect(new StreamableHTTPClientTransport(http.url, { requestInit: { headers } }));
    cleanup.push(() => c.close());
    return c;
  };
  return { audit, connect };
}

describe.each(["2025-11-25", "2026-07-28"] as const)("a %s client's trace context", { timeout: 30_000 }, (era) => {
  it("reaches the audit record of the call it came with", async () => {
    const { audit, connect } = await served();
    const c = await connect(era);
    const traced = await c.callTool({
      name: "note_read",
      arguments: { name: "a" },
      _meta: { traceparent: PARENT, tracestate: "congo=t61rcWkgMzE", "toolgate/call_id": "traced" },
    });
    const plain = await c.callTool({
      name: "note_read",
      arguments: { name: "a" },
      _meta: { "toolgate/call_id": "plain" },
    });
    expect(obsOf(traced).ok).toBe(obsOf(plain).ok);
    const byCall = new Map(audit.records.map((r) => [r.call_id, r]));
    expect(byCall.get("traced")?.trace).toEqual({ traceparent: PARENT, tracestate: "congo=t61rcWkgMzE" });
    expect(byCall.get("plain")).not.toHaveProperty("trace");
  });

  it("leaves a malformed one out of the record, says why, and answers the call as any other", async () => {
    const { audit, connect } = await served();
    const c = await connect(era);
    const r = await c.callTool({
      name: "note_read",
      arguments: { name: "a" },
      _meta: { traceparent: { forged: true }, "toolgate/call_id": "odd" },
    });
    expect(r.isError).toBeFalsy();
    const record = audit.records.find((x) => x.call_id === "odd")!;
    expect(record).not.toHaveProperty("trace");
    expect(record.trace_ignored).toMatch(/^traceparent left out: .*received an object/);
  });

  it("reads the W3C headers of an HTTP request that carries none in _meta", async () => {
    const { audit, connect } = await served({ traceparent: PARENT, tracestate: "rojo=1" });
    const c = await connect(era);
    await c.callTool({ name: "note_read", arguments: { name: "a" }, _meta: { "toolgate/call_id": "header" } });
    expect(audit.records.find((x) => x.call_id === "header")?.trace).toEqual({
      traceparent: PARENT,
      tracestate: "rojo=1",
    });
  });
});
