/**
 * Over Streamable HTTP, a client that can set headers but not a request's `_meta` names its call
 * with `Idempotency-Key` (the IETF httpapi draft) or `Toolgate-Call-Id`: a retry in another session
 * with the same key and arguments gets the stored result, other arguments are refused, and a
 * malformed header is refused naming it. The client here is plain `fetch`, nothing of the SDK.
 */
import { afterEach, describe, expect, it } from "vitest";
import { createGateway } from "../../../src/runtime/gateway.js";
import { createMemoryStore } from "../../../src/idempotency/stores/memory.js";
import type { ToolSpec } from "../../../src/core/tool.js";
import type { Gateway } from "../../../src/runtime/types.js";
import { serveHttp, type HttpHandle } from "../../../src/mcp/transports/http.js";

const S = "https://json-schema.org/draft/2020-12/schema";
let runs = 0;
const appendNote: ToolSpec = {
  name: "append_note",
  description: "Appends a note.",
  effect: "write",
  inputSchema: {
    $schema: S,
    type: "object",
    properties: { note: { type: "string", maxLength: 100 } },
    required: ["note"],
    additionalProperties: false,
  },
  handler: () => ({ run: ++runs }),
} as ToolSpec;

let gateway: Gateway;
let http: HttpHandle;
afterEach(async () => {
  await http?.close();
  await gateway?.close();
});

async function start() {
  runs = 0;
  gateway = createGateway({ tools: [appendNote], store: createMemoryStore(), audit: false });
  http = await serveHttp(gateway, { port: 0, warn: () => {} });
}

const post = (body: unknown, headers: Record<string, string> = {}) =>
  fetch(http.url, {
    method: "POST",
    headers: { "content-type": "application/json", accept: "application/json, text/event-stream", ...headers },
    body: JSON.stringify(body),
  });

/** A new MCP session by hand: initialize, then the initialized notification. */
async function session(): Promise<Record<string, string>> {
  const init = await post({
    jsonrpc: "2.0",
    id: 1,
    method: "initialize",
    params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "plain", version: "1" } },
  });
  await init.text();
  const headers = { "mcp-session-id": init.headers.get("mcp-session-id")!, "mcp-protocol-version": "2025-11-25" };
  await (await post({ jsonrpc: "2.0", method: "notifications/initialized" }, headers)).text();
  return headers;
}

/** The 2026-07-28 revision: no session, each request carries its envelope in `_meta` and its method in headers. */
const REVISION_2026 = {
  headers: { "mcp-protocol-version": "2026-07-28", "mcp-method": "tools/call", "mcp-name": "append_note" },
  meta: {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
    "io.modelcontextprotocol/clientInfo": { name: "plain-2026", version: "1" },
  },
};

/** tools/call with extra headers (and `_meta`); the result's structured observation. */
async function call(headers: Record<string, string>, note: string, meta?: Record<string, unknown>) {
  const res = await post(
    {
      jsonrpc: "2.0",
      id: 2,
      method: "tools/call",
      params: { name: "append_note", arguments: { note }, ...(meta ? { _meta: meta } : {}) },
    },
    headers,
  );
  const text = await res.text();
  const json = res.headers.get("content-type")?.includes("text/event-stream")
    ? text
        .split("\n")
        .filter((l) => l.startsWith("data:"))
        .map((l) => l.slice(5))
        .join("")
    : text;
  const result = (
    JSON.parse(json) as {
      result: {
        _meta: Record<
          string,
          { ok: boolean; replay?: boolean; call_id: string; error?: { code: string; message: string } }
        >;
      };
    }
  ).result;
  return result._meta["toolgate/observation"]!;
}

describe("call ids from HTTP headers", () => {
  it("Idempotency-Key: a retry in a new session with the same key replays; other arguments are refused", async () => {
    await start();
    const key = { "idempotency-key": '"order-7f3a"' };
    const first = await call({ ...(await session()), ...key }, "ship it");
    expect(first).toMatchObject({ ok: true, call_id: "order-7f3a" });
    const retry = await call({ ...(await session()), ...key }, "ship it");
    expect(retry).toMatchObject({ ok: true, replay: true });
    const reused = await call({ ...(await session()), ...key }, "something else");
    expect(reused.error?.code).toBe("key_reused");
    expect(runs).toBe(1);
  });

  it("Toolgate-Call-Id: the same id in the same session replays; without a header every attempt runs", async () => {
    await start();
    const s = await session();
    expect(await call({ ...s, "toolgate-call-id": "c-1" }, "a")).toMatchObject({ ok: true, call_id: "c-1" });
    expect(await call({ ...s, "toolgate-call-id": "c-1" }, "a")).toMatchObject({ ok: true, replay: true });
    await call(s, "a");
    await call(s, "a");
    expect(runs).toBe(3);
  });

  it("the 2026-07-28 revision, sessionless: Idempotency-Key makes a repeated request one call", async () => {
    await start();
    const headers = { ...REVISION_2026.headers, "idempotency-key": "k-2026" };
    expect(await call(headers, "x", REVISION_2026.meta)).toMatchObject({ ok: true, call_id: "k-2026" });
    expect(await call(headers, "x", REVISION_2026.meta)).toMatchObject({ ok: true, replay: true });
    expect(runs).toBe(1);
  });

  it("a malformed header is refused naming it, before anything runs", async () => {
    await start();
    const o = await call({ ...(await session()), "idempotency-key": "x".repeat(300) }, "a");
    expect(o.ok).toBe(false);
    expect(o.error?.message).toContain("the Idempotency-Key header must be at most 255 characters");
    expect(runs).toBe(0);
  });
});
