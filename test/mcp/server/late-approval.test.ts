/**
 * A destructive call over MCP when the person answers late (docs/authority.md, "Approvals for A3
 * calls"): a client gives up on its request (notifications/cancelled) while the person is being
 * asked, and a model told "Request timed out" proposes the same call again without toolgate ids.
 * The effect must happen once: the late approval is recorded but does not run the abandoned
 * request, a re-proposal is the same logical call (it joins the open prompt, runs under the
 * recorded approval, or replays), progress keeps a patient client waiting, and a second prompt
 * for an identical call says when it last ran.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { CallToolResultSchema, ElicitRequestSchema, type ElicitResult } from "@modelcontextprotocol/sdk/types.js";
import { createGateway } from "../../../src/runtime/gateway.js";
import { createMemoryAuditSink } from "../../../src/runtime/audit.js";
import { openStore } from "../../../src/idempotency/open.js";
import type { Gateway } from "../../../src/runtime/types.js";
import type { Store } from "../../../src/idempotency/store.js";
import { answersSent, createMcpServer, type McpServerOptions } from "../../../src/mcp/server/server.js";
import catalog from "../fixtures/notes-catalog.js";
import { executions, obsOf, tempDir, textOf, until } from "../support.js";

const T0 = Date.parse("2026-03-05T10:00:00.000Z");

interface Asked {
  message: string;
  answer(result: ElicitResult): void;
}

let gateway: Gateway;
let client: Client;
let notes: string;

/** A server over a memory store and audit, and a client whose elicitation requests wait in `asked` until the test
 * answers them. */
async function connect(serverOptions: McpServerOptions = {}, given?: Store) {
  const store = given ?? (await openStore("memory:"));
  const audit = createMemoryAuditSink();
  const clock = { now: T0 };
  gateway = createGateway({ tools: catalog, store, audit, clock: () => clock.now });
  const server = createMcpServer(gateway, serverOptions);
  const [serverSide, clientSide] = InMemoryTransport.createLinkedPair();
  await server.connect(serverSide);
  // Every message the server receives, and every progress notification it sends, as the wire carries them.
  const received: string[] = [];
  const onmessage = serverSide.onmessage!;
  serverSide.onmessage = (message, extra) => {
    if ("method" in message) received.push(message.method);
    onmessage(message, extra);
  };
  const progressSent: Array<string | number> = [];
  const send = serverSide.send.bind(serverSide);
  serverSide.send = (message, options) => {
    if ("method" in message && message.method === "notifications/progress")
      progressSent.push((message.params as { progressToken: string | number }).progressToken);
    return send(message, options);
  };
  client = new Client({ name: "test-client", version: "1.0.0" }, { capabilities: { elicitation: { form: {} } } });
  const asked: Asked[] = [];
  client.setRequestHandler(
    ElicitRequestSchema,
    (req) => new Promise<ElicitResult>((answer) => asked.push({ message: req.params.message, answer })),
  );
  await client.connect(clientSide);
  return { asked, audit, clock, progressSent, received, server };
}

const DELETE = { name: "note_delete", arguments: { name: "draft" } };

beforeEach(() => {
  notes = tempDir("late");
  process.env.NOTES_DIR = notes;
});
afterEach(async () => {
  await client?.close();
  await gateway?.close();
});

describe("a call whose request is gone is not run on a late approval", () => {
  it("records the late accept, runs nothing, and the id-less re-proposal runs it once without a second prompt; a third replays", async () => {
    const { asked, audit } = await connect();
    const gaveUp = new AbortController();
    const first = client.callTool(DELETE, CallToolResultSchema, { signal: gaveUp.signal });
    await until(() => asked.length === 1);
    // The client gives up (its timeout, or the user): the SDK sends notifications/cancelled.
    gaveUp.abort("Request timed out");
    await expect(first).rejects.toThrow();
    asked[0]!.answer({ action: "accept" });
    // One audit line asked for the approval, the next is the call after the answer.
    await until(() => audit.records.length === 2);

    expect(executions(notes)).toEqual([]);
    const abandoned = audit.records.at(-1)!;
    expect(abandoned).toMatchObject({
      outcome: "abandoned",
      stages: { approve: { outcome: "abandoned: request cancelled before approval" } },
    });
    const [approval] = await gateway.approvals.list({});
    expect(approval).toMatchObject({
      state: "approved",
      approver: 'elicitation:stdio client [unverified name "test-client"]',
    });

    // The model, told the request timed out, proposes the same call again without toolgate ids.
    const again = await client.callTool(DELETE);
    expect([again.isError, again.structuredContent]).toEqual([undefined, { name: "draft", deleted: false }]);
    expect(asked).toHaveLength(1);
    expect(executions(notes)).toEqual(["note_delete draft"]);
    expect(await gateway.approvals.list({})).toMatchObject([{ id: approval!.id, state: "consumed" }]);
    // It ran under the record keyed as the abandoned request's logical call.
    expect(audit.records.at(-1)!.key).toBe(abandoned.key);

    const third = await client.callTool(DELETE);
    expect([third.isError, obsOf(third).replay]).toEqual([undefined, true]);
    expect(asked).toHaveLength(1);
    expect(executions(notes)).toEqual(["note_delete draft"]);
  });

  it("a request cancelled before its approval was asked for prompts nobody", async () => {
    const store = await openStore("memory:");
    let release: () => void = () => {};
    const held = new Promise<void>((r) => (release = r));
    const createOrReuse = store.approvals.createOrReuse.bind(store.approvals);
    store.approvals.createOrReuse = async (record, now) => (await held, createOrReuse(record, now));
    const { asked, audit, received, server } = await connect({}, store);
    const gaveUp = new AbortController();
    const first = client.callTool(DELETE, CallToolResultSchema, { signal: gaveUp.signal });
    await until(() => received.includes("tools/call"));
    gaveUp.abort("Request timed out");
    await expect(first).rejects.toThrow();
    await until(() => received.includes("notifications/cancelled"));
    release();
    await until(() => audit.records.length === 1);
    await answersSent(server);
    expect(asked).toEqual([]);
    expect(await gateway.approvals.list({})).toMatchObject([{ state: "pending" }]);
    expect(executions(notes)).toEqual([]);
  });

  it("a re-proposal while the person is still being asked joins that prompt: one prompt, one effect", async () => {
    const { asked } = await connect();
    const gaveUp = new AbortController();
    const first = client.callTool(DELETE, CallToolResultSchema, { signal: gaveUp.signal });
    await until(() => asked.length === 1);
    gaveUp.abort("Request timed out");
    await expect(first).rejects.toThrow();

    const again = client.callTool(DELETE);
    // Answer every prompt: a second one (a new approval asked again) would run the effect twice.
    const answering = setInterval(() => asked.forEach((a) => a.answer({ action: "accept" })), 5);
    try {
      const result = await again;
      expect([result.isError, result.structuredContent]).toEqual([undefined, { name: "draft", deleted: false }]);
    } finally {
      clearInterval(answering);
    }
    expect(asked).toHaveLength(1);
    await gateway.close();
    expect(executions(notes)).toEqual(["note_delete draft"]);
  });

  it("two identical id-less calls at once share one prompt and one effect, and both get the result", async () => {
    const { asked } = await connect();
    const both = Promise.all([client.callTool(DELETE), client.callTool(DELETE)]);
    await until(() => asked.length >= 1);
    const answering = setInterval(() => asked.forEach((a) => a.answer({ action: "accept" })), 5);
    try {
      const results = await both;
      expect(results.map((r) => [r.isError, r.structuredContent])).toEqual([
        [undefined, { name: "draft", deleted: false }],
        [undefined, { name: "draft", deleted: false }],
      ]);
    } finally {
      clearInterval(answering);
    }
    expect(asked).toHaveLength(1);
    expect(executions(notes)).toEqual(["note_delete draft"]);
  });
});

describe("one prompt per approval across sessions of one gateway", () => {
  it("a call of another session in the same trajectory joins the open prompt; if its connection closes first, it is not run for it", async () => {
    const { asked, audit } = await connect();
    const second = new Client({ name: "second-client", version: "1.0.0" });
    const serverB = createMcpServer(gateway);
    const [serverSide, clientSide] = InMemoryTransport.createLinkedPair();
    await serverB.connect(serverSide);
    await second.connect(clientSide);
    const shared = { _meta: { "toolgate/trajectory_id": "run-7" } };
    const first = client.callTool({ ...DELETE, ...shared });
    await until(() => asked.length === 1);
    const joined = second.callTool({ ...DELETE, ...shared }).catch((err: unknown) => err);
    await until(() => audit.records.length === 2);
    await second.close();
    expect(await joined).toBeInstanceOf(Error);
    asked[0]!.answer({ action: "accept" });
    expect((await first).isError).toBeUndefined();
    await until(() => audit.records.length === 4);
    await answersSent(serverB);
    expect(asked).toHaveLength(1);
    expect(executions(notes)).toEqual(["note_delete draft"]);
    expect(audit.records.map((r) => r.stages.approve?.outcome)).toEqual(
      expect.arrayContaining(["abandoned: connection closed before approval", "ok"]),
    );
  });
});

describe("progress while a person is asked", () => {
  it("keeps a client that resets its timeout on progress waiting past its timeout, and the call succeeds", async () => {
    const { asked } = await connect({ approvalProgressMs: 10 });
    let progress = 0;
    let settled = false;
    const call = client
      .callTool(DELETE, CallToolResultSchema, {
        timeout: 100,
        resetTimeoutOnProgress: true,
        onprogress: () => void progress++,
      })
      .finally(() => (settled = true));
    await until(() => asked.length === 1);
    // Twenty progress notifications 10 ms apart span more than the 100 ms timeout; the person
    // answers only then (or the call has already failed, without progress).
    await until(() => progress >= 20 || settled);
    asked[0]!.answer({ action: "accept" });
    const result = await call;
    expect([result.isError, result.structuredContent]).toEqual([undefined, { name: "draft", deleted: false }]);
    expect(executions(notes)).toEqual(["note_delete draft"]);
  });

  it("sends it only to the request that carries a progressToken", async () => {
    const { asked, progressSent } = await connect({ approvalProgressMs: 1 });
    let progress = 0;
    const plain = client.callTool({ name: "note_delete", arguments: { name: "plain" } });
    const tracked = client.callTool({ name: "note_delete", arguments: { name: "tracked" } }, CallToolResultSchema, {
      onprogress: () => void progress++,
    });
    await until(() => asked.length === 2 && progress >= 5);
    asked.forEach((a) => a.answer({ action: "accept" }));
    expect((await Promise.all([plain, tracked])).map((r) => r.isError)).toEqual([undefined, undefined]);
    expect(new Set(progressSent).size).toBe(1);
    expect(progressSent.length).toBeGreaterThanOrEqual(5);
  });

  it("refuses an interval that is not a positive number of milliseconds", async () => {
    await connect();
    for (const bad of [0, -5, Number.NaN, "10s"]) {
      expect(() => createMcpServer(gateway, { approvalProgressMs: bad as number })).toThrow(
        /^approvalProgressMs must be a positive number of milliseconds, e\.g\. 10000; received /,
      );
    }
    expect(() => createMcpServer(gateway, { approvalProgressMs: "10s" as never })).toThrow('received "10s"');
  });
});

describe("a second prompt for an identical call", () => {
  it("says that an identical call ran, and how long ago", async () => {
    const { asked, clock } = await connect();
    const first = client.callTool(DELETE);
    await until(() => asked.length === 1);
    asked[0]!.answer({ action: "accept" });
    expect((await first).isError).toBeUndefined();
    expect(asked[0]!.message).not.toContain("identical call");

    // Past the approval's lifetime (15 minutes) the same call is a new one and needs a new approval.
    clock.now += 16 * 60_000;
    const second = client.callTool(DELETE);
    await until(() => asked.length === 2);
    expect(asked[1]!.message.replace(/ap_\S+/, "ap_…")).toMatchInlineSnapshot(`
      "Approve a destructive call (A3)?
      tool: note_delete
      arguments (exactly what will run):
      {
        "name": "draft"
      }
      An identical call (same tool and arguments) ran 16 minutes ago; approving runs it again.
      approval id: ap_…
      Accept to approve and run it once; decline to deny it."
    `);
    asked[1]!.answer({ action: "decline" });
    expect(textOf(await second)).toContain("approval_denied");
    expect(executions(notes)).toEqual(["note_delete draft"]);
  });
});
