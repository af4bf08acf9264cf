/**
 * The 2026-07-28 paths of Streamable HTTP, attacked as a hostile client would, on the wire (raw
 * HTTP, raw sockets where Node's client refuses to send the bytes): envelopes that are huge, deep
 * or of the wrong types, forged and oversized `requestState`s, an approval replayed by another
 * principal, smuggled `Mcp-Method`/`Mcp-Name` headers, one era's request in the other's place,
 * floods, slow bodies, batches and ids of every JSON type. Each gets a clear protocol error (or a
 * tool result the model can read), nothing crashes, and another principal is served after each.
 */
import net from "node:net";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createGateway } from "../../../src/runtime/gateway.js";
import { openStore } from "../../../src/idempotency/open.js";
import { keyRingFromMap } from "../../../src/capability/keys.js";
import { createCapabilityAuthority } from "../../../src/capability/authority.js";
import type { Gateway } from "../../../src/runtime/types.js";
import { serveHttp, type HttpHandle, type HttpOptions } from "../../../src/mcp/transports/http.js";
import { APPROVAL_INPUT_KEY } from "../../../src/mcp/server/input-required.js";
import catalog from "../fixtures/notes-catalog.js";
import { executions, obsOf, tempDir } from "../support.js";
import { open as openSession, inSession, request, type Answer } from "./raw-http.js";

const REVISION = "2026-07-28";
const ENVELOPE = {
  "io.modelcontextprotocol/protocolVersion": REVISION,
  "io.modelcontextprotocol/clientCapabilities": { elicitation: { form: {} } },
  "io.modelcontextprotocol/clientInfo": { name: "hostile", version: "1.0.0" },
};
const keys = keyRingFromMap({ k1: Buffer.alloc(32, 9).toString("base64") }, "test");
const authority = createCapabilityAuthority({ keys });
const grant = () =>
  authority.issue({
    rights: ["read", "write"],
    objects: ["tool:note_read", "tool:note_delete"],
    ttl_ms: 600_000,
  });
const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

let notes: string;
let gateway: Gateway;
let server: HttpHandle;
const errors: Error[] = [];

async function start(options: Omit<HttpOptions, "warn"> = {}, withKeys = false): Promise<void> {
  gateway = createGateway({
    tools: catalog,
    store: await openStore("memory:"),
    audit: false,
    ...(withKeys ? { keys } : {}),
  });
  server = await serveHttp(gateway, {
    port: 0,
    approveVia: "both",
    warn: () => {},
    onError: (e) => errors.push(e),
    ...options,
  });
}

beforeEach(() => {
  notes = tempDir("hostile-2026");
  process.env.NOTES_DIR = notes;
  errors.length = 0;
});
afterEach(async () => {
  await server?.close();
  await gateway?.close();
});

const headers = (method: string, name?: string): Record<string, string> => ({
  "content-type": "application/json",
  accept: "application/json, text/event-stream",
  "mcp-protocol-version": REVISION,
  "mcp-method": method,
  ...(name !== undefined ? { "mcp-name": name } : {}),
});
let seq = 0;
const callOf = (
  tool: string,
  args: Record<string, unknown>,
  params: Record<string, unknown> = {},
  id: unknown = ++seq,
) =>
  JSON.stringify({
    jsonrpc: "2.0",
    id,
    method: "tools/call",
    params: { name: tool, arguments: args, _meta: ENVELOPE, ...params },
  });
const post = (body: string, h: Record<string, string>, extra: Record<string, string> = {}) =>
  request(server.url, { headers: { ...h, ...extra }, body });
const json = (a: Answer) =>
  JSON.parse(a.body) as {
    id: unknown;
    result?: Record<string, unknown>;
    error?: { code: number; message: string; data?: unknown };
  };

/** Another caller's ordinary call is answered. */
async function stillServed(who: Record<string, string> = {}): Promise<void> {
  const ok = await post(callOf("note_read", { name: "ok" }), headers("tools/call", "note_read"), who);
  expect(ok.status).toBe(200);
  expect(obsOf(json(ok).result).ok).toBe(true);
}

/** One request written byte for byte on its own socket; what came back before the server closed it. */
function rawExchange(text: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(Number(server.url.port), "127.0.0.1");
    let got = "";
    socket.on("data", (d) => (got += d.toString("latin1")));
    socket.on("error", reject);
    socket.on("close", () => resolve(got));
    socket.write(text, "latin1");
  });
}

function rawCall(extraHeaderLines: string, body = callOf("note_read", { name: "a" })): Promise<string> {
  return rawExchange(
    `POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:${server.url.port}\r\ncontent-type: application/json\r\naccept: application/json, text/event-stream\r\nmcp-protocol-version: ${REVISION}\r\nconnection: close\r\ncontent-length: ${Buffer.byteLength(body)}\r\n${extraHeaderLines}\r\n${body}`,
  );
}

describe("the _meta envelope", () => {
  it("a huge or deeply nested _meta within the body bound is read and the call answered; one over the bound is 413 naming the flag", async () => {
    await start({ maxRequestBytes: 1 << 20 });
    const huge = await post(
      callOf("note_read", { name: "a" }, { _meta: { ...ENVELOPE, "x/pad": "a".repeat(900_000) } }),
      headers("tools/call", "note_read"),
    );
    expect([huge.status, obsOf(json(huge).result).ok]).toEqual([200, true]);
    const depth = 50_000;
    const deep = `${'{"d":'.repeat(depth)}1${"}".repeat(depth)}`;
    const nested = (where: string) =>
      post(
        `{"jsonrpc":"2.0","id":${++seq},"method":"tools/call","params":{"name":"note_read","arguments":{"name":"a"},"_meta":{"io.modelcontextprotocol/protocolVersion":"${REVISION}","io.modelcontextprotocol/clientInfo":{"name":"h","version":"1"},"io.modelcontextprotocol/clientCapabilities":${where === "capabilities" ? deep.replace(/1(?=})/, "{}") : "{}"},"x/deep":${deep}}}}`,
        headers("tools/call", "note_read"),
      );
    for (const where of ["meta", "capabilities"]) {
      const answer = await nested(where);
      expect(answer.status).toBe(200);
      expect(obsOf(json(answer).result).ok).toBe(true);
    }
    const over = await post(
      callOf("note_read", { name: "a" }, { _meta: { ...ENVELOPE, "x/pad": "a".repeat(1 << 20) } }),
      headers("tools/call", "note_read"),
    );
    expect(over.status).toBe(413);
    expect(json(over).error?.message).toBe(
      `request body too large: the most one message may be is ${1 << 20} bytes; send a smaller message (toolgate serve or proxy --max-request-bytes raises the bound)`,
    );
    await stillServed();
  });

  it("wrong types in the envelope are -32602 naming the key, what was expected and what came", async () => {
    await start();
    const cases: Array<[Record<string, unknown>, string]> = [
      [
        { ...ENVELOPE, "io.modelcontextprotocol/clientCapabilities": "all" },
        "io.modelcontextprotocol/clientCapabilities: Invalid input: expected object, received string",
      ],
      [
        { ...ENVELOPE, "io.modelcontextprotocol/clientCapabilities": [1] },
        "io.modelcontextprotocol/clientCapabilities: Invalid input: expected object, received array",
      ],
      [
        { ...ENVELOPE, "io.modelcontextprotocol/protocolVersion": 20260728 },
        "io.modelcontextprotocol/protocolVersion: Invalid input: expected string, received number",
      ],
    ];
    for (const [meta, expected] of cases) {
      const answer = await post(
        callOf("note_read", { name: "a" }, { _meta: meta }),
        headers("tools/call", "note_read"),
      );
      expect(answer.status).toBe(400);
      expect(json(answer).error?.code).toBe(-32602);
      expect(json(answer).error?.message).toContain(expected);
    }
    const nullMeta = await post(
      callOf("note_read", { name: "a" }, { _meta: null }),
      headers("tools/call", "note_read"),
    );
    expect([nullMeta.status, json(nullMeta).error?.code]).toEqual([400, -32600]);
    await stillServed();
  });
});

describe("requestState and approvals", () => {
  it("a forged, oversized or mistyped requestState approves nothing, and the answer does not echo it whole", async () => {
    await start();
    const accept = { inputResponses: { [APPROVAL_INPUT_KEY]: { action: "accept" } } };
    for (const state of ["ap_forged", `ap_${"x".repeat(1_000_000)}`]) {
      const answer = await post(
        callOf("note_delete", { name: "x" }, { ...accept, requestState: state }),
        headers("tools/call", "note_delete"),
      );
      expect(answer.status).toBe(200);
      expect(obsOf(json(answer).result).error?.code).toBe("approval_required");
      expect(answer.body.length).toBeLessThan(20_000);
    }
    const mistyped = await post(
      callOf("note_delete", { name: "x" }, { requestState: { id: "ap_x" }, inputResponses: 5 }),
      headers("tools/call", "note_delete"),
    );
    expect(json(mistyped).error).toMatchObject({ code: -32602, message: "Invalid or expired requestState" });
    expect(executions(notes)).toEqual([]);
    await stillServed();
  });

  it.each([
    ["with keys, another grant", true],
    ["without keys, another local peer address", false],
  ])(
    "an approval's requestState replayed by another principal (%s) runs nothing and leaves it pending",
    async (_, withKeys) => {
      await start({}, withKeys);
      const [a, b] = withKeys ? [bearer(grant()), bearer(grant())] : [{}, {}];
      const first = await post(callOf("note_delete", { name: "x" }), headers("tools/call", "note_delete"), a);
      expect(first.body).toContain('"resultType":"input_required"');
      const state = json(first).result?.requestState as string;
      const replay = await request(server.url, {
        headers: { ...headers("tools/call", "note_delete"), ...b },
        body: callOf(
          "note_delete",
          { name: "x" },
          {
            requestState: state,
            inputResponses: { [APPROVAL_INPUT_KEY]: { action: "accept" } },
          },
        ),
        ...(withKeys ? {} : { localAddress: "127.0.0.2" }),
      });
      expect(obsOf(json(replay).result).error?.code).toBe("approval_required");
      expect(executions(notes)).toEqual([]);
      expect((await gateway.approvals.list()).find((x) => x.id === state)?.state).toBe("pending");
      await stillServed(a);
    },
  );
});

describe("Mcp-Method and Mcp-Name headers", () => {
  it("a mismatch, a duplicate, non-ASCII bytes: -32020 quoting both sides; CR, LF or NUL in a header never reaches a route (400)", async () => {
    await start();
    const other = await post(callOf("note_read", { name: "a" }), headers("tools/call", "note_delete"));
    expect([other.status, json(other).error?.code]).toEqual([400, -32020]);
    expect(json(other).error?.message).toContain(
      'the body carries params.name="note_read" but the Mcp-Name header names "note_delete"',
    );
    const method = await post(callOf("note_read", { name: "a" }), headers("tools/list", "note_read"));
    expect([method.status, json(method).error?.code]).toEqual([400, -32020]);
    const dupName = await rawCall("mcp-method: tools/call\r\nmcp-name: note_read\r\nmcp-name: note_delete\r\n");
    expect(dupName).toMatch(/^HTTP\/1\.1 400 /);
    expect(dupName).toContain('"code":-32020');
    expect(dupName).toContain('Mcp-Name header names \\"note_read, note_delete\\"');
    const dupMethod = await rawCall("mcp-method: tools/call\r\nmcp-method: tools/call\r\nmcp-name: note_read\r\n");
    expect(dupMethod).toMatch(/^HTTP\/1\.1 400 /);
    expect(dupMethod).toContain('"code":-32020');
    const latin1 = await rawCall("mcp-method: tools/call\r\nmcp-name: note_r\u00e9ad\r\n");
    expect(latin1).toMatch(/^HTTP\/1\.1 400 /);
    expect(latin1).toContain('"code":-32020');
    for (const smuggled of [
      "mcp-method: tools/call\r\nmcp-name: note_read\rx-evil: 1\r\n",
      "mcp-method: tools/call\r\nmcp-name: note_read\nmcp-name: note_delete\r\n",
      "mcp-method: tools/call\r\nmcp-name: note\u0000read\r\n",
    ])
      expect(await rawCall(smuggled)).toMatch(/^HTTP\/1\.1 400 Bad Request\r\n/);
    expect(executions(notes)).toEqual([]);
    await stillServed();
  });
});

describe("one era's request in the other's place", () => {
  it("a 2026-07-28 request naming a 2025-11-25 session is 400 -32600 saying which to send; the session goes on", async () => {
    await start();
    const sid = await openSession(server.url);
    for (const h of [{ ...inSession(sid), ...headers("tools/list"), "mcp-session-id": sid }, inSession(sid)]) {
      const answer = await post(
        JSON.stringify({ jsonrpc: "2.0", id: 7, method: "tools/list", params: { _meta: ENVELOPE } }),
        h,
      );
      expect(answer.status).toBe(400);
      expect(json(answer)).toMatchObject({ id: 7, error: { code: -32600 } });
      expect(json(answer).error?.message).toContain(
        "this request is of the 2026-07-28 revision (its _meta envelope or MCP-Protocol-Version header says so), but it names session",
      );
    }
    const listed = await post(JSON.stringify({ jsonrpc: "2.0", id: 8, method: "tools/list" }), inSession(sid));
    expect(listed.status).toBe(200);
    expect(listed.body).toContain("note_read");
  });

  it("a 2025-11-25 request without a session is 400 naming both ways in, and opens no session; initialize with a 2026 header is -32020", async () => {
    await start();
    const plain = { "content-type": "application/json", accept: "application/json, text/event-stream" };
    const list = await post(JSON.stringify({ jsonrpc: "2.0", id: 3, method: "tools/list" }), plain);
    expect(list.status).toBe(400);
    expect(json(list)).toMatchObject({ id: 3, error: { code: -32000 } });
    expect(json(list).error?.message).toBe(
      'Bad Request: "tools/list" without a session: a 2025-11-25 request needs the Mcp-Session-Id of a session its initialize opened, and a 2026-07-28 request needs the _meta envelope (io.modelcontextprotocol/protocolVersion, clientCapabilities, clientInfo) with MCP-Protocol-Version, Mcp-Method and Mcp-Name headers',
    );
    const response = await post(JSON.stringify({ jsonrpc: "2.0", id: 4, result: {} }), plain);
    expect([response.status, json(response).error?.message.slice(0, 40)]).toEqual([
      400,
      "Bad Request: a JSON-RPC response without",
    ]);
    expect(server.sessions).toBe(0);
    const init = await post(
      JSON.stringify({
        jsonrpc: "2.0",
        id: 5,
        method: "initialize",
        params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "x", version: "1" } },
      }),
      headers("initialize"),
    );
    expect([init.status, json(init).error?.code]).toEqual([400, -32020]);
    await stillServed();
  });
});

describe("floods and slow clients", () => {
  it("server/discover sent 300 times at once by one principal: each answered or refused 429, and another principal is served", async () => {
    await start({ maxRequestsPerClient: 8 }, true);
    const a = bearer(grant());
    const discover = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "server/discover", params: { _meta: ENVELOPE } });
    const flood = Array.from({ length: 300 }, () => post(discover, headers("server/discover"), a));
    await stillServed(bearer(grant()));
    const answers = await Promise.all(flood);
    const statuses = new Set(answers.map((x) => x.status));
    expect([...statuses].every((s) => s === 200 || s === 429)).toBe(true);
    for (const x of answers)
      if (x.status === 200) expect(json(x).result?.supportedVersions).toEqual([REVISION]);
      else expect(json(x).error?.message).toContain("--max-requests-per-client allows (8)");
    await stillServed(a);
  });

  it("a slowloris body is answered 408 when requestTimeoutMs passes, and others are served meanwhile", async () => {
    await start({ requestTimeoutMs: 500, headersTimeoutMs: 500 });
    const body = callOf("note_read", { name: "a" });
    const slow = rawExchange(
      `POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:${server.url.port}\r\ncontent-type: application/json\r\nmcp-protocol-version: ${REVISION}\r\nmcp-method: tools/call\r\nmcp-name: note_read\r\ncontent-length: ${body.length + 1000}\r\n\r\n${body.slice(0, 10)}`,
    );
    await stillServed();
    expect(await slow).toMatch(/^HTTP\/1\.1 408 Request Timeout\r\n/);
  });

  it("a header section over Node's bound is 431 before any route", async () => {
    await start();
    expect(await rawCall(`mcp-method: tools/call\r\nmcp-name: note_read\r\nx-pad: ${"a".repeat(20_000)}\r\n`)).toMatch(
      /^HTTP\/1\.1 431 /,
    );
    await stillServed();
  });
});

describe("batches and ids", () => {
  it("a JSON-RPC batch of 2026-07-28 requests, an empty batch: -32600", async () => {
    await start();
    for (const [batch, message] of [
      [
        [callOf("note_read", { name: "a" }), callOf("note_read", { name: "b" })],
        "JSON-RPC batches may not contain requests for protocol revision 2026-07-28 or later",
      ],
      [[], "empty JSON-RPC batch"],
    ] as const) {
      const answer = await post(`[${batch.join(",")}]`, headers("tools/call", "note_read"));
      expect(answer.status).toBe(400);
      expect(json(answer).error).toMatchObject({ code: -32600 });
      expect(json(answer).error?.message).toContain(message);
    }
    await stillServed();
  });

  it("ids of every JSON type: a string or a safe integer is answered under that id; null, booleans, objects, arrays, fractions and unsafe numbers are -32600", async () => {
    await start();
    for (const id of ["s".repeat(10_000), -1, 0, Number.MAX_SAFE_INTEGER]) {
      const answer = await post(callOf("note_read", { name: "a" }, {}, id), headers("tools/call", "note_read"));
      expect([answer.status, json(answer).id]).toEqual([200, id]);
    }
    for (const id of ["null", "true", '{"a":1}', "[1]", "1.5", "1e308", "12345678901234567890"]) {
      const answer = await post(
        callOf("note_read", { name: "a" }, {}, "ID").replace('"ID"', id),
        headers("tools/call", "note_read"),
      );
      expect(answer.status).toBe(400);
      expect(json(answer).error).toMatchObject({
        code: -32600,
        message: "Bad Request: the request body is not a valid JSON-RPC message",
      });
    }
    await stillServed();
  });
});
