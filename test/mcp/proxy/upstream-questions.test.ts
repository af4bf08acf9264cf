/**
 * An upstream task's questions reach a 2026-07-28 client that speaks tasks: `toolgate proxy`
 * (spawned from source, over stdio and Streamable HTTP) in front of `fixtures/tasks-upstream.mjs`
 * gives the call a task of its own, which goes `input_required` carrying the upstream's checked
 * questions (each elicitation's message naming the upstream), takes its owner's answers with
 * tasks/update, sends them upstream with tasks/update and is `working` again, then completed with
 * the upstream's result. Clients: raw requests on an SDK v2 client (exact wire shapes) and
 * `@modelcontextprotocol/ext-tasks` over one (a third-party tasks client that answers through its
 * input handler); sampling end to end also to a 2025-11-25 SDK client that declared sampling.
 * Bad input, each refused or ignored as the extension says, nothing reaching the upstream: an
 * answer of the wrong shape, an answer to another task's question, another owner's answer, more
 * rounds than the bound, a client that declared no elicitation. While the upstream task works,
 * toolgate's task shows its status message, escaped and bounded. A 2026-07-28 client without tasks
 * is asked by multi-round-trip retries, a destructive tool's approval first and its upstream's
 * questions after, in one held call.
 */
import { afterAll, describe, expect, it } from "vitest";
import { z } from "zod";
import type { Client } from "@modelcontextprotocol/client";
import { createApplicationInputHandler, createTaskSessionFromClient } from "@modelcontextprotocol/ext-tasks/client";
import { TASKS_EXTENSION } from "../../../src/mcp/proxy/upstream-tasks.js";
import { rawDispatch, rawRequest } from "../raw-transport.js";
import { closeAll, envelope, polledTask, proxyCommand, text, updatesSince, upstreamCancelled } from "./tasks-proxy.js";

afterAll(closeAll);

const ASKS = envelope({ elicitation: { form: {} }, sampling: {} });
const Task = z.looseObject({
  taskId: z.string(),
  status: z.string(),
  statusMessage: z.string().optional(),
  inputRequests: z.record(z.string(), z.unknown()).optional(),
  result: z.unknown().optional(),
});
type TaskView = z.infer<typeof Task>;

const get = async (c: Client, taskId: string, env = ASKS) => {
  const answer = await rawRequest(c, "tasks/get", { taskId }, env);
  if (answer.error) throw new Error(answer.error.message);
  return Task.parse(answer.result);
};
/** Polls toolgate's task until `done` holds of it. */
async function pollUntil(c: Client, taskId: string, done: (t: TaskView) => boolean): Promise<TaskView> {
  for (;;) {
    const t = await get(c, taskId);
    if (done(t)) return t;
    await new Promise((r) => setTimeout(r, 50));
  }
}
const start = async (c: Client, name: string, topic: string, env = ASKS) => {
  const created = await rawRequest(c, "tools/call", { name, arguments: { topic } }, env);
  expect(created.result, JSON.stringify(created)).toMatchObject({ resultType: "task" });
  return (created.result as { taskId: string }).taskId;
};
const waiting = (t: TaskView) => t.status === "input_required";
const final = (t: TaskView) => ["completed", "failed", "cancelled"].includes(t.status);

describe("an upstream task's questions, to a 2026-07-28 client with tasks", { timeout: 180_000 }, () => {
  const proxy = proxyCommand(["--task-after-ms", "0"]);
  const updates = (before: number) => updatesSince(proxy.received, before);

  it.each(["stdio", "http"] as const)(
    "over %s: toolgate's task is input_required with the question, answered with tasks/update, working again, then completed",
    async (over) => {
      const c = await proxy.connect("2026+tasks", over, "alice");
      const before = proxy.received().length;
      const taskId = await start(c, "asks", `q-${over}`);
      const asking = await pollUntil(c, taskId, waiting);
      expect(asking.inputRequests).toEqual({
        branch: {
          method: "elicitation/create",
          params: {
            mode: "form",
            message: 'The MCP server "tasks-upstream" asks: Which branch?',
            requestedSchema: { type: "object", properties: { branch: { type: "string" } } },
          },
        },
      });
      expect(asking.statusMessage).toContain("waits for its caller to answer 1 question (elicitation/create)");
      const ack = await rawRequest(
        c,
        "tasks/update",
        { taskId, inputResponses: { branch: { action: "accept", content: { branch: "main" } } } },
        ASKS,
      );
      expect(ack.error).toBeUndefined();
      // The extension's acknowledgement: an empty result (2026-07-28 marks it complete).
      expect(ack.result).toMatchObject({ resultType: "complete" });
      expect(Object.keys(ack.result!).filter((k) => k !== "_meta" && k !== "resultType")).toEqual([]);
      const done = await pollUntil(c, taskId, final);
      expect(done.status).toBe("completed");
      expect(JSON.stringify(done.result)).toContain(`asks done: branch main: q-${over}`);
      // The answer went upstream once, for the upstream's task, under the upstream's key.
      const sent = updates(before);
      expect(sent).toHaveLength(1);
      expect(sent[0]!.params).toMatchObject({
        taskId: await polledTask(proxy.received, before),
        inputResponses: { branch: { action: "accept", content: { branch: "main" } } },
      });
    },
  );

  it.each(["stdio", "http"] as const)(
    "over %s: ext-tasks answers an elicitation and a sampling request through its input handler",
    async (over) => {
      const c = await proxy.connect("2026+tasks", over, "carol");
      const capabilities = { elicitation: { form: {} }, sampling: {}, extensions: { [TASKS_EXTENSION]: {} } };
      const info = { name: "ext-tasks-questions", version: "1.0.0" };
      const asked: unknown[] = [];
      const s = createTaskSessionFromClient(c, {
        endpointId: `toolgate-questions-${over}`,
        rawDispatch: rawDispatch(c),
        v2RequestFraming: { protocolVersion: "2026-07-28", clientInfo: info, clientCapabilities: capabilities },
        onInputRequest: createApplicationInputHandler({
          elicitation: (request) => (asked.push(request.params), { action: "accept", content: { branch: "dev" } }),
          sampling: (request) => (
            asked.push(request.params),
            { role: "assistant", content: { type: "text", text: "Tidal Notes" }, model: "test-model" }
          ),
          roots: () => ({ roots: [] }),
        }),
      });
      try {
        const elicited = await s.callTool("asks", { topic: "e" });
        expect(elicited.kind).toBe("task");
        const e = await elicited.settle();
        expect(e.outcome.status).toBe("completed");
        expect(JSON.stringify(e.outcome)).toContain("asks done: branch dev: e");
        const sampled = await s.callTool("asks_sampling", { topic: "tides" });
        const r = await sampled.settle();
        expect(r.outcome.status).toBe("completed");
        expect(JSON.stringify(r.outcome)).toContain("asks_sampling done: Tidal Notes (by test-model): tides");
        expect(asked).toEqual([
          expect.objectContaining({ message: 'The MCP server "tasks-upstream" asks: Which branch?' }),
          // A sampling request is a model's prompt: passed on as the upstream wrote it.
          expect.objectContaining({
            messages: [{ role: "user", content: { type: "text", text: "A title for tides?" } }],
            maxTokens: 50,
          }),
        ]);
      } finally {
        await s.close().catch(() => {});
      }
    },
  );

  it("sampling end to end to a 2025-11-25 client that declared sampling: its answer reaches the upstream task", async () => {
    const c = await proxy.connect("2025+sampling");
    const asked: unknown[] = [];
    c.setRequestHandler("sampling/createMessage", (request) => {
      asked.push(request.params);
      return { role: "assistant", content: { type: "text", text: "Reef Log" }, model: "legacy-model" };
    });
    const before = proxy.received().length;
    const r = await c.callTool({ name: "asks_sampling", arguments: { topic: "reefs" } });
    expect(r.isError, text(r)).toBeFalsy();
    expect(text(r)).toContain("asks_sampling done: Reef Log (by legacy-model): reefs");
    expect(asked).toEqual([
      expect.objectContaining({ messages: [{ role: "user", content: { type: "text", text: "A title for reefs?" } }] }),
    ]);
    expect(updates(before)).toEqual([
      expect.objectContaining({
        params: expect.objectContaining({
          inputResponses: {
            draft: { role: "assistant", content: { type: "text", text: "Reef Log" }, model: "legacy-model" },
          },
        }),
      }),
    ]);
  });

  it.each([
    [{ branch: { action: "yes" } }, 'inputResponses[\\"branch\\"].action must be one of accept, decline, cancel'],
    [{ branch: "main" }, 'inputResponses[\\"branch\\"] must be the bare result of elicitation/create'],
    [
      { branch: { method: "elicitation/create", result: { action: "accept" } } },
      'inputResponses[\\"branch\\"] must be the bare result of elicitation/create',
    ],
    [
      { branch: { action: "accept", content: { branch: { nested: true } } } },
      'inputResponses[\\"branch\\"].content[\\"branch\\"] must be a string, number, boolean or array of strings',
    ],
    [
      { branch: { action: "decline", content: { branch: "x" } } },
      'inputResponses[\\"branch\\"].content goes only with action \\"accept\\"',
    ],
  ])("an answer of the wrong shape (%j) is -32602 naming the field; nothing goes upstream", async (answer, message) => {
    const c = await proxy.connect("2026+tasks");
    const before = proxy.received().length;
    const taskId = await start(c, "asks", "bad");
    await pollUntil(c, taskId, waiting);
    const refused = await rawRequest(c, "tasks/update", { taskId, inputResponses: answer }, ASKS);
    expect(refused.error?.code).toBe(-32602);
    expect(JSON.stringify(refused.error?.message)).toContain(message);
    expect((await get(c, taskId)).status).toBe("input_required");
    expect(updates(before)).toHaveLength(0);
    await rawRequest(c, "tasks/cancel", { taskId }, ASKS);
    await upstreamCancelled(proxy.received, before);
  });

  it("an answer to another task's question is ignored: both tasks still wait, nothing goes upstream", async () => {
    const c = await proxy.connect("2026+tasks");
    const before = proxy.received().length;
    const sampling = await start(c, "asks_sampling", "one");
    const elicit = await start(c, "asks", "two");
    await pollUntil(c, sampling, waiting);
    await pollUntil(c, elicit, waiting);
    // The elicitation task's key, sent to the sampling task.
    const ack = await rawRequest(
      c,
      "tasks/update",
      { taskId: sampling, inputResponses: { branch: { action: "accept", content: { branch: "main" } } } },
      ASKS,
    );
    expect(ack.error).toBeUndefined();
    expect((await get(c, sampling)).status).toBe("input_required");
    expect((await get(c, elicit)).status).toBe("input_required");
    expect(updates(before)).toHaveLength(0);
    for (const taskId of [sampling, elicit]) await rawRequest(c, "tasks/cancel", { taskId }, ASKS);
  });

  it("another owner can neither read nor answer the question (over HTTP, another bearer)", async () => {
    const alice = await proxy.connect("2026+tasks", "http", "alice-owner");
    const mallory = await proxy.connect("2026+tasks", "http", "mallory");
    const before = proxy.received().length;
    const taskId = await start(alice, "asks", "mine");
    await pollUntil(alice, taskId, waiting);
    const read = await rawRequest(mallory, "tasks/get", { taskId }, ASKS);
    expect(read.error?.message).toContain("no task");
    const forged = await rawRequest(
      mallory,
      "tasks/update",
      { taskId, inputResponses: { branch: { action: "accept", content: { branch: "evil" } } } },
      ASKS,
    );
    expect(forged.error?.code).toBe(-32602);
    expect(forged.error?.message).toContain("no task");
    expect((await get(alice, taskId)).status).toBe("input_required");
    expect(updates(before)).toHaveLength(0);
    // Its owner's answer still goes through.
    await rawRequest(
      alice,
      "tasks/update",
      { taskId, inputResponses: { branch: { action: "accept", content: { branch: "main" } } } },
      ASKS,
    );
    expect(JSON.stringify((await pollUntil(alice, taskId, final)).result)).toContain("asks done: branch main: mine");
  });

  it("an upstream that asks past 16 rounds ends the call, saying so; the upstream task is cancelled", async () => {
    const c = await proxy.connect("2026+tasks");
    const before = proxy.received().length;
    const taskId = await start(c, "asks_forever", "loop");
    const answered = new Set<string>();
    let t = await get(c, taskId);
    while (!final(t)) {
      for (const key of Object.keys(t.inputRequests ?? {}).filter((k) => !answered.has(k))) {
        answered.add(key);
        await rawRequest(
          c,
          "tasks/update",
          { taskId, inputResponses: { [key]: { action: "accept", content: { branch: "x" } } } },
          ASKS,
        );
      }
      await new Promise((r) => setTimeout(r, 30));
      t = await get(c, taskId);
    }
    expect(t.status).toBe("completed");
    expect(JSON.stringify(t.result)).toContain("asked for input more than 16 times; the upstream task was cancelled");
    expect(updates(before)).toHaveLength(16);
    await upstreamCancelled(proxy.received, before);
  });

  it("a client that declared no elicitation gets an error naming the capability; the upstream task is cancelled", async () => {
    const c = await proxy.connect("2026+tasks");
    const before = proxy.received().length;
    const taskId = await start(c, "asks", "none", envelope());
    const done = await pollUntil(c, taskId, final);
    expect(JSON.stringify(done.result)).toContain("this client cannot be asked elicitation/create: it declared no");
    expect(JSON.stringify(done.result)).toContain("capability; the upstream task was cancelled");
    expect(updates(before)).toHaveLength(0);
    await upstreamCancelled(proxy.received, before);
  });

  it("while the upstream task works, toolgate's task shows its status message, escaped and bounded", async () => {
    const c = await proxy.connect("2026+tasks");
    const taskId = await start(c, "odd_status", "s");
    const shown = await pollUntil(c, taskId, (t) => /its task is working: poll \d+/.test(t.statusMessage ?? ""));
    const message = shown.statusMessage!;
    expect(message).toContain("\\u{202E}desrever\\u{001B}[2J");
    expect(message.includes("\u202E") || message.includes("\u001b")).toBe(false);
    expect(message.length).toBeLessThan(1_000);
    await rawRequest(c, "tasks/cancel", { taskId }, ASKS);
  });
});

describe(
  "an upstream task's questions, to a 2026-07-28 client without tasks (multi-round-trip)",
  { timeout: 180_000 },
  () => {
    const proxy = proxyCommand([]);
    /** A 2026-07-28 envelope without the tasks extension, declaring `capabilities`. */
    const plain = (capabilities: Record<string, unknown> = { elicitation: { form: {} } }) => ({
      "io.modelcontextprotocol/protocolVersion": "2026-07-28",
      "io.modelcontextprotocol/clientCapabilities": capabilities,
      "io.modelcontextprotocol/clientInfo": { name: "raw", version: "1" },
    });
    const updates = (before: number) => updatesSince(proxy.received, before);
    const accept = { branch: { action: "accept", content: { branch: "main" } } };
    /** The first request of a call that asks: its input-required result. */
    async function asked(c: Client, topic: string) {
      const first = await rawRequest(c, "tools/call", { name: "asks", arguments: { topic } }, plain());
      expect(first.result, JSON.stringify(first)).toMatchObject({ resultType: "input_required" });
      return first.result as { inputRequests: Record<string, unknown>; requestState: string };
    }
    const retry = (c: Client, topic: string, requestState: string, inputResponses: unknown = accept) =>
      rawRequest(c, "tools/call", { name: "asks", arguments: { topic }, requestState, inputResponses }, plain());

    it.each(["stdio", "http"] as const)(
      "over %s: an SDK v2 client's handlers answer, its retry reaches the still-running upstream task",
      async (over) => {
        const c = await proxy.connect("2026+elicit", over, "dana");
        const seen: unknown[] = [];
        c.setRequestHandler("elicitation/create", (request) => {
          seen.push(request.params);
          return { action: "accept", content: { branch: "trunk" } };
        });
        const before = proxy.received().length;
        const r = await c.callTool({ name: "asks", arguments: { topic: `m-${over}` } });
        expect(r.isError, text(r)).toBeFalsy();
        expect(text(r)).toContain(`asks done: branch trunk: m-${over}`);
        expect(seen).toEqual([
          expect.objectContaining({ message: 'The MCP server "tasks-upstream" asks: Which branch?' }),
        ]);
        // One upstream task, asked once and answered once: the retry did not start another call.
        expect(
          proxy
            .received()
            .slice(before)
            .filter((m) => m.method === "tools/call"),
        ).toHaveLength(1);
        expect(updates(before)).toHaveLength(1);
      },
    );

    it("sampling over a multi-round-trip retry: the SDK client's sampling handler answers", async () => {
      const c = await proxy.connect("2026+sampling");
      c.setRequestHandler("sampling/createMessage", () => ({
        role: "assistant",
        content: { type: "text", text: "Shoal Diary" },
        model: "mrtr-model",
      }));
      const r = await c.callTool({ name: "asks_sampling", arguments: { topic: "fish" } });
      expect(text(r)).toContain("asks_sampling done: Shoal Diary (by mrtr-model): fish");
    });

    it("the input-required result carries the checked question; a forged state, other arguments and a replay are refused", async () => {
      const c = await proxy.connect("2026");
      const before = proxy.received().length;
      const first = await asked(c, "f");
      expect(first.inputRequests).toEqual({
        branch: expect.objectContaining({
          method: "elicitation/create",
          params: expect.objectContaining({ message: 'The MCP server "tasks-upstream" asks: Which branch?' }),
        }),
      });
      const forged = await retry(c, "f", `${first.requestState.slice(0, -2)}AA`);
      expect(forged.error?.code).toBe(-32602);
      expect(forged.error?.message).toContain("params.requestState names no call this server holds");
      const other = await retry(c, "g", first.requestState);
      expect(other.error?.message).toContain("this retry's arguments differs from the one of the call that asked");
      expect(updates(before)).toHaveLength(0);
      const answered = await retry(c, "f", first.requestState);
      expect(JSON.stringify(answered.result)).toContain("asks done: branch main: f");
      const replayed = await retry(c, "f", first.requestState);
      expect(replayed.error?.message).toContain("was already answered");
      expect(updates(before)).toHaveLength(1);
    });

    it("another caller's retry with the state is refused (over HTTP, another bearer); the owner's goes through", async () => {
      const alice = await proxy.connect("2026", "http", "alice-mrtr");
      const mallory = await proxy.connect("2026", "http", "mallory-mrtr");
      const first = await asked(alice, "h");
      const stolen = await retry(mallory, "h", first.requestState);
      expect(stolen.error?.code).toBe(-32602);
      expect(stolen.error?.message).toContain("this retry's caller differs");
      expect(JSON.stringify((await retry(alice, "h", first.requestState)).result)).toContain(
        "asks done: branch main: h",
      );
    });
  },
);

describe(
  "a destructive upstream task that asks, to a 2026-07-28 client without tasks (approval, then its questions)",
  { timeout: 180_000 },
  () => {
    // Over HTTP without keys approvals default to the CLI; this client's person may approve here.
    const proxy = proxyCommand(["--approve-via", "both"]);

    it.each(["stdio", "http"] as const)(
      "over %s: the SDK v2 client's handler approves the call, then answers the upstream's question; one upstream task",
      async (over) => {
        const c = await proxy.connect("2026+elicit", over, "erin-a3");
        const asked: string[] = [];
        c.setRequestHandler("elicitation/create", (request) => {
          const message = String((request.params as { message?: unknown }).message);
          asked.push(message);
          const content: Record<string, string> = message.startsWith("Approve") ? {} : { branch: "prod" };
          return { action: "accept", content };
        });
        const before = proxy.received().length;
        const r = await c.callTool({ name: "asks_destroy", arguments: { topic: `d-${over}` } });
        expect(r.isError, text(r)).toBeFalsy();
        expect(text(r)).toContain(`asks_destroy done: branch prod: d-${over}`);
        expect(asked).toEqual([
          expect.stringContaining("Approve a destructive call (A3)?"),
          'The MCP server "tasks-upstream" asks: Which branch?',
        ]);
        const sent = proxy.received().slice(before);
        expect(sent.filter((m) => m.method === "tools/call")).toHaveLength(1);
        expect(updatesSince(proxy.received, before)).toHaveLength(1);
      },
    );
  },
);
