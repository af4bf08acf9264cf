/**
 * Held calls (`call-held.ts`) and tasks (`max_live_per_owner`) attacked over Streamable HTTP, raw 2026-07-28 requests
 * from one peer without capability keys: the per-caller bounds count the caller as the transport's bounds do (its
 * peer, or the grant its bearer verifies as), so a client that sends a new bearer string with each call is still one
 * caller: it cannot take the places of the process-wide bound of held calls from every other client, nor run tasks
 * without end. A state retried under another bearer or with other
 * arguments resumes nothing, and the right retry still does; of right retries racing, one resumes the call.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createGateway } from "../../../src/runtime/gateway.js";
import { openStore } from "../../../src/idempotency/open.js";
import type { Gateway } from "../../../src/runtime/types.js";
import { MAX_HELD_PER_CALLER } from "../../../src/mcp/server/call-held.js";
import { TASKS_EXTENSION } from "../../../src/mcp/server/tasks-ext.js";
import { createTaskRunner, type TaskRunner } from "../../../src/runtime/tasks.js";
import { serveHttp, type HttpHandle } from "../../../src/mcp/transports/http.js";
import catalog from "../fixtures/tasks-catalog.js";
import { request, type Answer } from "../transports/raw-http.js";
import { tempDir } from "../support.js";

const ENVELOPE = {
  "io.modelcontextprotocol/protocolVersion": "2026-07-28",
  "io.modelcontextprotocol/clientCapabilities": { elicitation: { form: {} } },
  "io.modelcontextprotocol/clientInfo": { name: "held-attack", version: "1" },
};
const HEADERS = {
  "content-type": "application/json",
  accept: "application/json, text/event-stream",
  "mcp-protocol-version": "2026-07-28",
  "mcp-method": "tools/call",
  "mcp-name": "job_asks",
};

let gateway: Gateway;
let server: HttpHandle;
let tasks: TaskRunner;
/** Tasks one owner may have running here (every call of a client with the tasks extension is a task at once). */
const MAX_TASKS = 2;
beforeEach(async () => {
  process.env.NOTES_DIR = tempDir("held-attack");
  const store = await openStore("memory:");
  gateway = createGateway({ tools: catalog, store, audit: false });
  tasks = createTaskRunner(gateway, { store, poll_ms: 50, max_live_per_owner: MAX_TASKS, task_after_ms: 0 });
  server = await serveHttp(gateway, { port: 0, warn: () => {}, tasks });
});
afterEach(async () => {
  await server.close();
  tasks.close();
  await gateway.close({ grace_ms: 0 });
});

let seq = 0;
type Reply = { result?: Record<string, unknown>; error?: { code: number; message: string } };
const asks = (name: string, from: { bearer?: string; localAddress?: string }, params: Record<string, unknown> = {}) =>
  request(server.url, {
    headers: { ...HEADERS, ...(from.bearer ? { authorization: `Bearer ${from.bearer}` } : {}) },
    ...(from.localAddress ? { localAddress: from.localAddress } : {}),
    body: JSON.stringify({
      jsonrpc: "2.0",
      id: ++seq,
      method: "tools/call",
      params: { name: "job_asks", arguments: { name }, _meta: ENVELOPE, ...params },
    }),
  });
const reply = (a: Answer) => JSON.parse(a.body) as Reply;
const heldState = (a: Answer) => {
  const r = reply(a).result;
  expect(r?.resultType, a.body).toBe("input_required");
  return r!.requestState as string;
};
const text = (a: Answer) => JSON.stringify(reply(a).result?.content ?? reply(a).error);

describe("held calls from one hostile peer", { timeout: 120_000 }, () => {
  it(`a new bearer string per call is still one caller: ${MAX_HELD_PER_CALLER} held, one more refused until one is answered`, async () => {
    const held = await Promise.all(
      Array.from({ length: MAX_HELD_PER_CALLER }, (_, i) => asks(`f${i}`, { bearer: `forged-${i}` })),
    );
    for (const a of held) heldState(a);
    const over = await asks("over", { bearer: "forged-over" });
    expect(reply(over).result?.resultType, over.body).not.toBe("input_required");
    expect(text(over)).toContain(`already has ${MAX_HELD_PER_CALLER} calls waiting`);
    // Its places are its own: one of its calls answered, the next call of any of its bearers is held.
    const first = reply(held[0]!).result!.requestState as string;
    const done = await asks(
      "f0",
      { bearer: "forged-0" },
      {
        requestState: first,
        inputResponses: { branch: { action: "accept", content: { branch: "main" } } },
      },
    );
    expect(JSON.stringify(reply(done).result), done.body).toContain("main");
    heldState(await asks("again", { bearer: "forged-again" }));
  });

  it("a state retried by another bearer of the same peer, or with other arguments, resumes nothing; the right retry does", async () => {
    const state = heldState(await asks("victim", { bearer: "alice" }));
    const answers = {
      inputResponses: { branch: { action: "accept", content: { branch: "evil" } } },
      requestState: state,
    };
    const forged = await asks("victim", { bearer: "mallory" }, answers);
    expect(reply(forged).error?.message, forged.body).toContain("this retry's caller differs");
    const changed = await asks("other-args", { bearer: "alice" }, answers);
    expect(reply(changed).error?.message, changed.body).toContain("this retry's arguments differs");
    const right = await asks(
      "victim",
      { bearer: "alice" },
      {
        ...answers,
        inputResponses: { branch: { action: "accept", content: { branch: "main" } } },
      },
    );
    expect(JSON.stringify(reply(right).result), right.body).toContain("main");
  });

  it("eight right retries of one round sent at once on their own connections: one resumes the call, seven are spent", async () => {
    const state = heldState(await asks("race", { bearer: "alice" }));
    const retry = {
      requestState: state,
      inputResponses: { branch: { action: "accept", content: { branch: "main" } } },
    };
    const raced = await Promise.all(Array.from({ length: 8 }, () => asks("race", { bearer: "alice" }, retry)));
    const resumed = raced.filter((a) => JSON.stringify(reply(a).result ?? {}).includes("main"));
    const spent = raced.filter((a) => reply(a).error?.message.includes("names no call this server holds"));
    expect([resumed.length, spent.length], raced.map((a) => a.body).join("\n")).toEqual([1, 7]);
  });
});

describe("tasks from one hostile peer", { timeout: 60_000 }, () => {
  it(`a new bearer string per call is still one owner's share: ${MAX_TASKS} tasks run, one more is refused`, async () => {
    const start = (i: number) =>
      request(server.url, {
        headers: { ...HEADERS, "mcp-name": "job_wait", authorization: `Bearer forged-task-${i}` },
        body: JSON.stringify({
          jsonrpc: "2.0",
          id: ++seq,
          method: "tools/call",
          params: {
            name: "job_wait",
            arguments: { name: `t${i}` },
            _meta: {
              ...ENVELOPE,
              "io.modelcontextprotocol/clientCapabilities": { extensions: { [TASKS_EXTENSION]: {} } },
            },
          },
        }),
      });
    for (let i = 0; i < MAX_TASKS; i++) {
      const started = reply(await start(i));
      expect(started.result?.resultType, JSON.stringify(started)).toBe("task");
    }
    const over = await start(MAX_TASKS);
    expect(reply(over).result?.resultType, over.body).not.toBe("task");
    expect(over.body).toContain(`already has ${MAX_TASKS} tasks running, the most one caller may`);
  });
});
