/**
 * 2026-07-28 requests on the wire, as a hand-written client sends them: the approval's
 * input-required result and its retry, a retry carrying an answer given for another call, and
 * every way a request can break the revision's rules — each a JSON-RPC error naming what is wrong,
 * and the endpoint keeps serving.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createGateway } from "../../../src/runtime/gateway.js";
import { openStore } from "../../../src/idempotency/open.js";
import type { Gateway } from "../../../src/runtime/types.js";
import { serveHttp, type HttpHandle } from "../../../src/mcp/transports/http.js";
import { APPROVAL_INPUT_KEY } from "../../../src/mcp/server/input-required.js";
import catalog from "../fixtures/notes-catalog.js";
import { executions, obsOf, tempDir } from "../support.js";

const REVISION = "2026-07-28";
const ENVELOPE = {
  "io.modelcontextprotocol/protocolVersion": REVISION,
  "io.modelcontextprotocol/clientCapabilities": { elicitation: { form: {} } },
  "io.modelcontextprotocol/clientInfo": { name: "raw-2026", version: "1.0.0" },
};

let notes: string;
let gateway: Gateway;
let http: HttpHandle;

beforeEach(async () => {
  notes = tempDir("modern");
  process.env.NOTES_DIR = notes;
  gateway = createGateway({ tools: catalog, store: await openStore("memory:"), audit: false });
  http = await serveHttp(gateway, { port: 0, approveVia: "both", warn: () => {} });
});
afterEach(async () => {
  await http.close();
  await gateway.close();
});

interface Answer {
  status: number;
  body: { result?: Record<string, unknown>; error?: { code: number; message: string } };
}

async function stateOf(approvalId: string): Promise<string | undefined> {
  return (await gateway.approvals.list()).find((a) => a.id === approvalId)?.state;
}

async function send(body: unknown, headers: Record<string, string>): Promise<Answer> {
  const res = await fetch(http.url, {
    method: "POST",
    headers: { "content-type": "application/json", accept: "application/json, text/event-stream", ...headers },
    body: typeof body === "string" ? body : JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as Answer["body"] };
}

let id = 0;
function callDelete(name: string, extra: Record<string, unknown> = {}): Promise<Answer> {
  return send(
    {
      jsonrpc: "2.0",
      id: ++id,
      method: "tools/call",
      params: { name: "note_delete", arguments: { name }, _meta: ENVELOPE, ...extra },
    },
    { "mcp-protocol-version": REVISION, "mcp-method": "tools/call", "mcp-name": "note_delete" },
  );
}

describe("A3 approval by an input-required result", () => {
  it("asks with one form elicitation whose requestState is the gateway's approval id, and runs on the accepted retry", async () => {
    const first = await callDelete("x");
    expect(first.status).toBe(200);
    expect(first.body.result?.resultType).toBe("input_required");
    const state = first.body.result?.requestState as string;
    expect(state).toMatch(/^ap_/);
    const asked = (first.body.result?.inputRequests as Record<string, { method: string; params: { message: string } }>)[
      APPROVAL_INPUT_KEY
    ]!;
    expect(asked.method).toBe("elicitation/create");
    expect(asked.params.message).toContain(`approval id: ${state}`);
    expect(executions(notes)).toEqual([]);
    const retry = await callDelete("x", {
      inputResponses: { [APPROVAL_INPUT_KEY]: { action: "accept", content: { note: "fine" } } },
      requestState: state,
    });
    expect(retry.body.result?.resultType).toBe("complete");
    expect(obsOf(retry.body.result).ok).toBe(true);
    expect(executions(notes)).toEqual(["note_delete x"]);
    expect(await stateOf(state)).not.toBe("pending");
  });

  it("does not approve other arguments with an answer given for this call", async () => {
    const first = await callDelete("x");
    const state = first.body.result?.requestState as string;
    const forged = await callDelete("y", {
      inputResponses: { [APPROVAL_INPUT_KEY]: { action: "accept" } },
      requestState: state,
    });
    expect(obsOf(forged.body.result).error?.code).toBe("approval_required");
    const text = JSON.stringify(forged.body.result);
    expect(text).toContain(`not given for this call (its requestState names approval ${state}`);
    expect(executions(notes)).toEqual([]);
    expect(await stateOf(state)).toBe("pending");
  });

  it("denies on a declined retry and runs nothing", async () => {
    const first = await callDelete("z");
    const state = first.body.result?.requestState as string;
    const declined = await callDelete("z", {
      inputResponses: { [APPROVAL_INPUT_KEY]: { action: "decline" } },
      requestState: state,
    });
    expect(obsOf(declined.body.result).error?.code).toBe("approval_denied");
    expect(executions(notes)).toEqual([]);
  });
});

describe("requests that break the 2026-07-28 rules", () => {
  it("answers each with the revision's error and keeps serving", async () => {
    const h = { "mcp-protocol-version": REVISION, "mcp-method": "tools/call", "mcp-name": "note_read" };
    const call = (params: Record<string, unknown>) => ({
      jsonrpc: "2.0",
      id: ++id,
      method: "tools/call",
      params: { name: "note_read", arguments: { name: "a" }, ...params },
    });
    const noMeta = await send(call({}), h);
    expect([noMeta.status, noMeta.body.error?.code]).toEqual([400, -32602]);
    expect(noMeta.body.error?.message).toContain("missing the required per-request envelope");
    const wrongName = await send(call({ _meta: ENVELOPE }), { ...h, "mcp-name": "note_delete" });
    expect([wrongName.status, wrongName.body.error?.code]).toEqual([400, -32020]);
    expect(wrongName.body.error?.message).toContain('the Mcp-Name header names "note_delete"');
    const noMethod = await send(call({ _meta: ENVELOPE }), { "mcp-protocol-version": REVISION });
    expect([noMethod.status, noMethod.body.error?.code]).toEqual([400, -32020]);
    const future = { ...ENVELOPE, "io.modelcontextprotocol/protocolVersion": "2031-01-01" };
    const unsupported = await send(call({ _meta: future }), { ...h, "mcp-protocol-version": "2031-01-01" });
    expect([unsupported.status, unsupported.body.error?.code]).toEqual([400, -32022]);
    const unknown = await send(
      { jsonrpc: "2.0", id: ++id, method: "tools/destroy", params: { _meta: ENVELOPE } },
      { "mcp-protocol-version": REVISION, "mcp-method": "tools/destroy" },
    );
    expect(unknown.body.error?.code).toBe(-32601);
    const malformed = await send("{not json", h);
    expect([malformed.status, malformed.body.error?.code]).toEqual([400, -32700]);
    const discover = await send(
      { jsonrpc: "2.0", id: ++id, method: "server/discover", params: { _meta: ENVELOPE } },
      { "mcp-protocol-version": REVISION, "mcp-method": "server/discover" },
    );
    expect(discover.body.result?.supportedVersions).toEqual([REVISION]);
    const ok = await send(call({ _meta: ENVELOPE }), h);
    expect(obsOf(ok.body.result).ok).toBe(true);
  });
});

describe("the operator's warning of a capability ignored without keys", () => {
  it("is printed once per caller, not at every 2026-07-28 request (each has a server of its own)", async () => {
    const lines: string[] = [];
    const warned = await serveHttp(gateway, { port: 0, capabilitiesIgnored: true, warn: (l) => lines.push(l) });
    try {
      for (let i = 0; i < 3; i++) {
        const res = await fetch(warned.url, {
          method: "POST",
          headers: {
            "content-type": "application/json",
            accept: "application/json, text/event-stream",
            "mcp-protocol-version": REVISION,
            "mcp-method": "tools/call",
            "mcp-name": "note_read",
          },
          body: JSON.stringify({
            jsonrpc: "2.0",
            id: i + 1,
            method: "tools/call",
            params: { name: "note_read", arguments: { name: "a" }, _meta: { ...ENVELOPE, "toolgate/capability": "x" } },
          }),
        });
        expect(res.status).toBe(200);
        expect(((await res.json()) as Answer["body"]).result?.isError).not.toBe(true);
      }
      const ignored = lines.filter((l) => l.includes("carries a capability"));
      expect(ignored).toHaveLength(1);
      expect(ignored[0]).toContain("this server has no capability keys");
    } finally {
      await warned.close();
    }
  });
});
