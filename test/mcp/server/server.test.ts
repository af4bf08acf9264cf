import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import {
  CallToolResultSchema,
  ElicitRequestSchema,
  ErrorCode,
  McpError,
  type ElicitResult,
} from "@modelcontextprotocol/sdk/types.js";
import { createGateway } from "../../../src/runtime/gateway.js";
import { openStore } from "../../../src/idempotency/open.js";
import { keyRingFromMap } from "../../../src/capability/keys.js";
import { createCapabilityAuthority } from "../../../src/capability/authority.js";
import type { Gateway } from "../../../src/runtime/types.js";
import type { Store } from "../../../src/idempotency/store.js";
import { createMcpServer } from "../../../src/mcp/server/server.js";
import catalog from "../fixtures/notes-catalog.js";
import { executions, ids, obsOf, tempDir, textOf, until } from "../support.js";
import { createMemoryAuditSink } from "../../../src/runtime/audit.js";

const KEY = Buffer.alloc(32, 7).toString("base64");

let notes: string;
let store: Store;
let gateway: Gateway;
let client: Client;

async function connect(
  options: { elicit?: (message: string) => ElicitResult; keys?: boolean; warn?: (line: string) => void } = {},
) {
  store = await openStore("memory:");
  const keys = options.keys ? keyRingFromMap({ k1: KEY }, "test") : undefined;
  gateway = createGateway({ tools: catalog, store, audit: false, ...(keys ? { keys } : {}) });
  const server = createMcpServer(gateway, options.warn ? { capabilitiesIgnored: !keys, warn: options.warn } : {});
  const [serverSide, clientSide] = InMemoryTransport.createLinkedPair();
  await server.connect(serverSide);
  client = new Client(
    { name: "test-client", version: "1.0.0" },
    { capabilities: options.elicit ? { elicitation: { form: {} } } : {} },
  );
  if (options.elicit) {
    const answer = options.elicit;
    client.setRequestHandler(ElicitRequestSchema, (req) => answer(req.params.message));
  }
  await client.connect(clientSide);
  return keys;
}

beforeEach(() => {
  notes = tempDir("server");
  process.env.NOTES_DIR = notes;
});
afterEach(async () => {
  await client?.close();
  await gateway?.close();
});

describe("tools/list", () => {
  it("publishes schemas, title and annotations derived from each tool's effect", async () => {
    await connect();
    const { tools } = await client.listTools();
    expect(
      tools.map((t) => [
        t.name,
        t.annotations?.readOnlyHint,
        t.annotations?.idempotentHint,
        t.annotations?.destructiveHint,
      ]),
    ).toEqual([
      ["noop_read", true, true, false],
      ["noop_write", false, false, false],
      ["note_read", true, true, false],
      ["note_append", false, false, false],
      ["note_delete", false, false, true],
      ["note_fail", false, false, false],
      ["note_slow", false, false, false],
    ]);
    const read = tools.find((t) => t.name === "note_read")!;
    expect(read.title).toBe("Read a note");
    expect(read.inputSchema).toMatchObject({
      $schema: "https://json-schema.org/draft/2020-12/schema",
      type: "object",
      additionalProperties: false,
      required: ["name"],
    });
    expect(read.outputSchema).toMatchObject({ type: "object", required: ["name", "text"] });
  });
});

describe("tools/call", () => {
  it("returns structuredContent matching the output schema plus the text", async () => {
    await connect();
    const result = await client.callTool({ name: "note_append", arguments: { name: "a", line: "hello" } });
    expect(result.isError).toBeUndefined();
    expect(result.structuredContent).toEqual({ name: "a", lines: 1 });
    expect(textOf(result)).toContain('"lines": 1');
    expect(obsOf(result)).toMatchObject({ ok: true, tool: "note_append", authority: "A2" });
  });

  it("refuses invalid arguments with a tool result the model can read, and runs nothing", async () => {
    await connect();
    const result = await client.callTool({ name: "note_append", arguments: { name: "a", line: "x", force: true } });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toMatchInlineSnapshot(`
      "error invalid_arguments: note_append (call mcp-call-1)
      note_append was not run: 1 problem with the arguments.
      - unknown field: force; allowed: name, line
      Fix it and call note_append again; nothing was changed."
    `);
    expect(executions(notes)).toEqual([]);
  });

  it("answers arguments that are not an object with a tool result, not a JSON-RPC error", async () => {
    await connect();
    const result = await client.callTool({
      name: "note_read",
      arguments: "notes/a" as unknown as Record<string, unknown>,
    });
    expect(result.isError).toBe(true);
    expect(obsOf(result).error?.code).toBe("invalid_arguments");
  });

  it("treats a missing arguments as {}: the validator names the missing required field in a tool result", async () => {
    await connect();
    const result = await client.request({ method: "tools/call", params: { name: "note_read" } }, CallToolResultSchema);
    expect(result.isError).toBe(true);
    expect(obsOf(result).error?.code).toBe("invalid_arguments");
    // The issue line's detail after "is required" belongs to the validator's own tests.
    expect(textOf(result)).toMatch(
      /^error invalid_arguments: note_read \(call mcp-call-1\)\nnote_read was not run: 1 problem with the arguments\.\n- name is required\b.*\nFix it and call note_read again; nothing was changed\.$/,
    );
    expect(executions(notes)).toEqual([]);
  });

  it("answers a tools/call without a name (or without params) with -32602 invalid params, not a zod dump", async () => {
    await connect();
    for (const params of [{ arguments: {} }, undefined]) {
      const err = await client
        .request({ method: "tools/call", ...(params ? { params } : {}) } as never, CallToolResultSchema)
        .catch((e: unknown) => e);
      expect(err).toBeInstanceOf(McpError);
      expect((err as McpError).code).toBe(ErrorCode.InvalidParams);
      expect((err as McpError).message).toMatchInlineSnapshot(
        `"MCP error -32602: tools/call params.name must be the name of a tool (a non-empty string); received nothing; call tools/list for the names"`,
      );
    }
    expect((await client.callTool({ name: "note_read", arguments: { name: "a" } })).isError).toBeUndefined();
  });

  it("answers an unknown tool with a -32602 protocol error whose message names the tools", async () => {
    await connect();
    const err = await client.callTool({ name: "note_wipe", arguments: {} }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(McpError);
    expect((err as McpError).code).toBe(ErrorCode.InvalidParams);
    expect((err as McpError).message).toMatchInlineSnapshot(`
      "MCP error -32602: error unknown_tool: note_wipe (call mcp-call-1)
      There is no tool named "note_wipe". Available tools: noop_read, noop_write, note_read, note_append, note_delete, note_fail, note_slow. Call one of them by its exact name; nothing was executed."
    `);
    expect((err as McpError).data).toEqual({ tool: "note_wipe", code: "unknown_tool" });
  });

  it("refuses a call without a capability when the gateway holds keys, and accepts one in _meta", async () => {
    const keys = await connect({ keys: true });
    const denied = await client.callTool({ name: "note_read", arguments: { name: "a" } });
    expect(denied.isError).toBe(true);
    expect(obsOf(denied).error?.code).toBe("denied");
    expect(textOf(denied)).toMatchInlineSnapshot(`
      "error denied: note_read (call mcp-call-1)
      This call needs a capability token (tg1.…) granting read on tool:note_read; none was sent with the call. Nothing was executed; ask the operator for a capability that covers it and send it with the call.
      Over MCP, send the token in _meta["toolgate/capability"] of tools/call."
    `);
    const token = createCapabilityAuthority({ keys: keys!, store }).issue({
      rights: ["read"],
      objects: ["tool:note_read"],
      ttl_ms: 60_000,
    });
    const allowed = await client.callTool({
      name: "note_read",
      arguments: { name: "a" },
      _meta: { "toolgate/capability": token },
    });
    expect(allowed.isError).toBeUndefined();
    expect(allowed.structuredContent).toEqual({ name: "a", text: null });
  });

  it("without keys, warns once per session that a capability sent in _meta is ignored", async () => {
    const warnings: string[] = [];
    await connect({ warn: (line) => warnings.push(line) });
    expect((await client.callTool({ name: "note_read", arguments: { name: "a" } })).isError).toBeUndefined();
    expect(warnings).toEqual([]);
    for (const id of ["w1", "w2"]) {
      const r = await client.callTool({
        name: "note_read",
        arguments: { name: "a" },
        _meta: ids(id, { "toolgate/capability": "tg1.whatever" }),
      });
      expect(r.isError).toBeUndefined();
    }
    expect(warnings.map((w) => w.replace(/mcp-[A-Za-z0-9_-]{22}/, "mcp-<session>"))).toMatchInlineSnapshot(`
      [
        "toolgate: a call in session mcp-<session> carries a capability, but this server has no capability keys (--keys or TOOLGATE_KEYS), so capabilities are ignored and every call is allowed; this warning is printed once per session",
      ]
    `);
  });

  it("reports a write whose effect is unknown as in doubt, and refuses its retry", async () => {
    await connect();
    const first = await client.callTool({ name: "note_fail", arguments: { name: "a" }, _meta: ids("f1") });
    expect(first.isError).toBe(true);
    const retry = await client.callTool({ name: "note_fail", arguments: { name: "a" }, _meta: ids("f1") });
    expect(retry.isError).toBe(true);
    expect(obsOf(retry).error?.code).toBe("in_doubt");
    expect(textOf(retry)).toMatchInlineSnapshot(`
      "error in_doubt: note_fail (call f1)
      Whether this call took effect is unknown (key 4b2ca73eb6cdbf28f951e5b80f10a309edba5557bb2ef28d93805262a5e30a33): an earlier attempt failed before confirming its effect and has not been settled. It will not be run again until an operator settles it. Do not retry it under a new call_id; check the current state with a read-only tool or tell the user."
    `);
    expect(executions(notes)).toEqual(["note_fail a"]);
  });

  it("replays a retry that carries the same _meta ids instead of running it again", async () => {
    await connect();
    const first = await client.callTool({
      name: "note_append",
      arguments: { name: "r", line: "once" },
      _meta: ids("c1"),
    });
    const retry = await client.callTool({
      name: "note_append",
      arguments: { name: "r", line: "once" },
      _meta: ids("c1"),
    });
    expect(retry.structuredContent).toEqual(first.structuredContent);
    expect(obsOf(retry).replay).toBe(true);
    expect(executions(notes)).toEqual(["note_append r once"]);
  });

  it("dedups on a client idempotency key from _meta, and refuses the key with other arguments", async () => {
    await connect();
    const key = { "toolgate/idempotency_key": "order-7f3a-append" };
    await client.callTool({ name: "note_append", arguments: { name: "k", line: "one" }, _meta: key });
    const again = await client.callTool({ name: "note_append", arguments: { name: "k", line: "one" }, _meta: key });
    expect(obsOf(again).replay).toBe(true);
    const reused = await client.callTool({ name: "note_append", arguments: { name: "k", line: "two" }, _meta: key });
    expect([reused.isError, obsOf(reused).error?.code]).toEqual([true, "key_reused"]);
    expect(executions(notes)).toEqual(["note_append k one"]);
  });

  it("runs a retry without ids again: each request is its own call", async () => {
    await connect();
    await client.callTool({ name: "note_append", arguments: { name: "r", line: "twice" } });
    await client.callTool({ name: "note_append", arguments: { name: "r", line: "twice" } });
    expect(executions(notes)).toHaveLength(2);
  });

  it("refuses malformed _meta ids with a tool result naming the field, worded for the client's author", async () => {
    await connect();
    const result = await client.callTool({
      name: "note_read",
      arguments: { name: "a" },
      _meta: { "toolgate/turn": -1 },
    });
    expect(result.isError).toBe(true);
    expect(obsOf(result).error?.code).toBe("invalid_meta");
    expect(textOf(result)).toMatchInlineSnapshot(
      `"note_read was not run: the MCP client sent request metadata toolgate cannot use. _meta["toolgate/turn"] must be an integer ≥ 0, as a JSON number or a string of its digits; received number -1; example 3 or "3". The request's _meta is set by the client, not by the tool's arguments, so calling again will not help: this is for the client's author (or whoever configures it) to fix."`,
    );
  });

  it("takes the turn as a string of its canonical digits (clients that send all _meta as strings): the same logical call as the number", async () => {
    await connect();
    const ids = (turn: unknown) => ({
      "toolgate/trajectory_id": "t-str",
      "toolgate/call_id": "c-str",
      "toolgate/turn": turn,
    });
    const first = await client.callTool({
      name: "note_append",
      arguments: { name: "s", line: "one" },
      _meta: ids("2"),
    });
    expect(first.isError).toBeUndefined();
    const again = await client.callTool({ name: "note_append", arguments: { name: "s", line: "one" }, _meta: ids(2) });
    expect(obsOf(again).replay).toBe(true);
    expect(executions(notes)).toEqual(["note_append s one"]);
    const refused: string[] = [];
    for (const turn of ["02", "2.0", " 2", "+2", "-1", "two", ""]) {
      const r = await client.callTool({ name: "note_append", arguments: { name: "s", line: "one" }, _meta: ids(turn) });
      expect(obsOf(r).error?.code).toBe("invalid_meta");
      refused.push(String(obsOf(r).error?.message));
    }
    expect(refused[0]).toMatchInlineSnapshot(
      `"_meta["toolgate/turn"] must be an integer ≥ 0, as a JSON number or a string of its digits (as a string, only the integer's canonical digits: no sign, leading zero, fraction or space); received "02"; example 3 or "3""`,
    );
    expect(refused[5]).toMatchInlineSnapshot(
      `"_meta["toolgate/turn"] must be an integer ≥ 0, as a JSON number or a string of its digits; received "two"; example 3 or "3""`,
    );
    expect(executions(notes)).toHaveLength(1);
  });
});

describe("A3 approval", () => {
  it("returns approval_required with the id when the client cannot be asked", async () => {
    await connect();
    const result = await client.callTool({ name: "note_delete", arguments: { name: "a" } });
    expect(result.isError).toBe(true);
    const obs = obsOf(result);
    expect(obs.error?.code).toBe("approval_required");
    expect(obs.error?.detail?.approval_id).toMatch(/^ap_/);
    expect(
      textOf(result)
        .replaceAll(String(obs.error?.detail?.approval_id), "ap_…")
        .replace(/expires at \S+/, "expires at …"),
    ).toMatchInlineSnapshot(`
      "error approval_required: note_delete (call mcp-call-1)
      note_delete is destructive (A3) and needs a person's approval before it runs; nothing was executed. Approval ap_… was requested for exactly these arguments and expires at … Once it is approved, propose the same call again with approval_id "ap_…" and the same arguments.
      A person can decide it from a shell: toolgate approvals approve ap_… (or toolgate approvals deny ap_… --reason "…")."
    `);
    expect(executions(notes)).toEqual([]);
  });

  it("asks the person through elicitation with the exact arguments, and runs once on accept", async () => {
    const asked: string[] = [];
    await connect({ elicit: (m) => (asked.push(m), { action: "accept", content: { note: "fine" } }) });
    const result = await client.callTool({ name: "note_delete", arguments: { name: "gone" } });
    expect(result.isError).toBeUndefined();
    expect(result.structuredContent).toEqual({ name: "gone", deleted: false });
    expect(asked).toHaveLength(1);
    expect(asked[0]!.replace(/ap_\S+/, "ap_…")).toMatchInlineSnapshot(`
      "Approve a destructive call (A3)?
      tool: note_delete
      arguments (exactly what will run):
      {
        "name": "gone"
      }
      approval id: ap_…
      Accept to approve and run it once; decline to deny it."
    `);
    expect(executions(notes)).toEqual(["note_delete gone"]);
    const [approval] = await gateway.approvals.list({ limit: 1 });
    // The channel and the principal the transport knows (over stdio: the process that started
    // toolgate); the client's own name is only a label.
    expect(approval).toMatchObject({
      state: "consumed",
      approver: 'elicitation:stdio client [unverified name "test-client"]',
      note: "fine",
    });
  });

  it("two identical calls with call ids of their own, at once: one prompt, one runs, the other gets a tool result, not a protocol error", async () => {
    let asked = 0;
    let answer: (r: ElicitResult) => void = () => {};
    store = await openStore("memory:");
    const audit = createMemoryAuditSink();
    gateway = createGateway({ tools: catalog, store, audit });
    const server = createMcpServer(gateway);
    const [serverSide, clientSide] = InMemoryTransport.createLinkedPair();
    await server.connect(serverSide);
    client = new Client({ name: "test-client", version: "1.0.0" }, { capabilities: { elicitation: { form: {} } } });
    client.setRequestHandler(ElicitRequestSchema, () => (asked++, new Promise<ElicitResult>((r) => (answer = r))));
    await client.connect(clientSide);
    const both = Promise.all([
      client.callTool({ name: "note_delete", arguments: { name: "twice" }, _meta: ids("d1") }),
      client.callTool({ name: "note_delete", arguments: { name: "twice" }, _meta: ids("d2") }),
    ]);
    // Both share the pending approval; the second waits for the first's prompt instead of asking again.
    await until(() => asked === 1 && audit.records.length === 2);
    answer({ action: "accept" });
    const results = await both;
    expect(asked).toBe(1);
    expect(results.filter((r) => r.isError !== true)).toHaveLength(1);
    const refused = results.find((r) => r.isError === true)!;
    expect([obsOf(refused).ok, obsOf(refused).error?.code]).toEqual([false, "approval_invalid"]);
    expect(executions(notes)).toEqual(["note_delete twice"]);
    expect(await gateway.approvals.list({ state: "pending" })).toHaveLength(0);
  });

  it("denies on decline and runs nothing", async () => {
    await connect({ elicit: () => ({ action: "decline" }) });
    const result = await client.callTool({ name: "note_delete", arguments: { name: "kept" } });
    expect(result.isError).toBe(true);
    expect(obsOf(result).error?.code).toBe("approval_denied");
    expect(textOf(result).replace(/ap_[\w-]+/, "ap_…")).toMatchInlineSnapshot(`
      "error approval_denied: note_delete (call mcp-call-1)
      Approval ap_… was denied by elicitation:stdio client [unverified name "test-client"]: declined by the person asked through MCP elicitation. Nothing was executed. Do not retry this call; tell the user and choose another way."
    `);
    expect(executions(notes)).toEqual([]);
  });

  it("leaves the approval pending on cancel, for the CLI to decide", async () => {
    await connect({ elicit: () => ({ action: "cancel" }) });
    const result = await client.callTool({ name: "note_delete", arguments: { name: "kept" } });
    expect(obsOf(result).error?.code).toBe("approval_required");
    expect(await gateway.approvals.list({ state: "pending" })).toHaveLength(1);
    expect(executions(notes)).toEqual([]);
  });
});
