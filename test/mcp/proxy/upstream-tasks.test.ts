/**
 * `toolgate proxy` in front of a 2026-07-28 upstream that answers calls with tasks (the tasks
 * extension; `fixtures/tasks-upstream.mjs`, behind the logging wrapper that records what the
 * upstream receives), spawned from source, with real SDK v2 clients of both revisions: the proxy
 * declares the extension upstream, follows the upstream's task to its end and answers with its
 * result — inline to a client without tasks, as a task of its own to one that declares them — and a
 * downstream cancel (notifications/cancelled, tasks/cancel) cancels the upstream task. A hostile
 * upstream (a bad task id, a status outside the extension's, a task id switched, a poll interval of
 * 0 or 10^12 ms, a task that never ends) gets a clear error and the proxy goes on serving. An
 * upstream task that asks for input asks a 2025-11-25 client that declared elicitation, and its
 * answer goes back with tasks/update; a question out of bounds or of a kind no client is asked, or
 * a client that cannot be asked, ends the call with an error saying so.
 */
import { afterAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { TASKS_EXTENSION } from "../../../src/mcp/proxy/upstream-tasks.js";
import { rawRequest } from "../raw-transport.js";
import { closeAll, ENVELOPE, polledTask, proxyCommand, text, until, upstreamCancelled } from "./tasks-proxy.js";

afterAll(closeAll);

describe("toolgate proxy bridges a 2026-07-28 upstream's tasks", { timeout: 120_000 }, () => {
  const proxy = proxyCommand(["--task-after-ms", "0"]);

  it.each(["2026", "2025"] as const)(
    "a %s client without tasks gets the upstream task's result inline",
    async (era) => {
      const c = await proxy.connect(era);
      const lines = proxy.audited().length;
      const r = await c.callTool({ name: "report", arguments: { topic: `tides-${era}` } });
      expect(r.isError, text(r)).toBeFalsy();
      expect(text(r)).toContain(`report done after 2 polls: tides-${era}`);
      // The tool the upstream runs only as a task is called as one (the proxy declares the extension).
      const must = await c.callTool({ name: "must_task", arguments: { topic: `reefs-${era}` } });
      expect(text(must)).toContain(`must_task done after 1 polls: reefs-${era}`);
      const calls = proxy.received().filter((m) => m.method === "tools/call" && m.params?.name === "report");
      expect(JSON.stringify(calls.at(-1)!.params!._meta)).toContain(TASKS_EXTENSION);
      expect(proxy.received().some((m) => m.method === "tasks/get")).toBe(true);
      // Each bridged call leaves its audit line as any proxied call does.
      await until(() => proxy.audited().length >= lines + 2);
      expect(proxy.audited().slice(lines)).toEqual([
        expect.objectContaining({ tool: "report", outcome: "ok" }),
        expect.objectContaining({ tool: "must_task", outcome: "ok" }),
      ]);
    },
  );

  it("a 2026 client with tasks gets a task of toolgate's own, completed with the upstream's result", async () => {
    const c = await proxy.connect("2026+tasks");
    const created = await rawRequest(c, "tools/call", { name: "report", arguments: { topic: "storms" } }, ENVELOPE);
    const task = created.result as { resultType: string; taskId: string };
    expect(task).toMatchObject({ resultType: "task" });
    const Task = z.looseObject({ status: z.string(), result: z.unknown().optional() });
    let t = await c.request({ method: "tasks/get", params: { taskId: task.taskId } } as never, Task);
    while (t.status === "working")
      t = await c.request({ method: "tasks/get", params: { taskId: task.taskId } } as never, Task);
    expect(t.status).toBe("completed");
    expect(JSON.stringify(t.result)).toContain("report done after 2 polls: storms");
  });

  it("tasks/cancel on toolgate's task cancels the upstream task", async () => {
    const c = await proxy.connect("2026+tasks");
    const before = proxy.received().length;
    const created = await rawRequest(c, "tools/call", { name: "never_ends", arguments: { topic: "a" } }, ENVELOPE);
    const task = created.result as { taskId: string };
    const upstreamId = await polledTask(proxy.received, before);
    expect((await rawRequest(c, "tasks/cancel", { taskId: task.taskId }, ENVELOPE)).error).toBeUndefined();
    await until(() => proxy.received().some((m) => m.method === "tasks/cancel" && m.params?.taskId === upstreamId));
  });

  it("notifications/cancelled of a bridged call cancels the upstream task", async () => {
    const c = await proxy.connect("2026");
    const before = proxy.received().length;
    const stop = new AbortController();
    const call = c.callTool({ name: "never_ends", arguments: { topic: "b" } }, { signal: stop.signal });
    const upstreamId = await polledTask(proxy.received, before);
    stop.abort();
    await expect(call).rejects.toThrow();
    await until(() => proxy.received().some((m) => m.method === "tasks/cancel" && m.params?.taskId === upstreamId));
  });

  it.each([
    ["bad_id", 'taskId must be a string of 1 to 256 printable ASCII characters without spaces; received "bad id\\n"'],
    ["bad_status", 'status must be one of working, input_required, completed, failed, cancelled; received "exploded"'],
    ["wrong_id", `tasks/get's answer.taskId must be the task asked about`],
    ["fails", "failed: disk full (code -32603)"],
  ])("a hostile upstream's %s is a clear error, and the proxy goes on serving", async (tool, message) => {
    const c = await proxy.connect("2026");
    const r = await c.callTool({ name: tool, arguments: { topic: "x" } });
    expect(r.isError).toBe(true);
    expect(text(r)).toContain(JSON.stringify(message).slice(1, -1));
    expect(text(await c.callTool({ name: "plain", arguments: { topic: "still" } }))).toContain(
      "plain answered inline: still",
    );
  });

  it("an upstream task that asks a 2026 client that declared no elicitation ends the call at once, saying so, and is cancelled upstream", async () => {
    const c = await proxy.connect("2026");
    const before = proxy.received().length;
    const r = await c.callTool({ name: "asks", arguments: { topic: "q" } });
    expect(r.isError).toBe(true);
    expect(text(r)).toContain(
      JSON.stringify(
        'asks for input (elicitation/create), and this client cannot be asked elicitation/create: it declared no "elicitation" capability; the upstream task was cancelled',
      ).slice(1, -1),
    );
    await upstreamCancelled(proxy.received, before);
  });

  it("a client that asks for progress hears the upstream task's status while it runs", async () => {
    const c = await proxy.connect("2026");
    const stop = new AbortController();
    const heard: string[] = [];
    const call = c.callTool(
      { name: "never_ends", arguments: { topic: "p" } },
      { signal: stop.signal, onprogress: (p) => heard.push(String(p.message)) },
    );
    await until(() => heard.some((m) => /its task is working: poll \d+/.test(m)));
    stop.abort();
    await expect(call).rejects.toThrow();
  });

  it("a poll interval of 0 or 10^12 ms is clamped: both tasks are followed to their end", async () => {
    const c = await proxy.connect("2026");
    expect(text(await c.callTool({ name: "zero_poll", arguments: { topic: "z" } }))).toContain(
      "zero_poll done after 3 polls: z",
    );
    expect(text(await c.callTool({ name: "huge_poll", arguments: { topic: "h" } }))).toContain(
      "huge_poll done after 1 polls: h",
    );
  });

  it("--task-timeout-ms bounds a task that never ends: a timeout naming the flag, the upstream task cancelled", async () => {
    const bounded = proxyCommand(["--timeout-ms", "200", "--task-timeout-ms", "1000"]);
    const c = await bounded.connect("2026");
    const r = await c.callTool({ name: "never_ends", arguments: { topic: "n" } });
    expect(r.isError).toBe(true);
    expect(text(r)).toContain(
      "That is the time limit toolgate proxy sets for never_ends while the upstream runs it as a task (1000 ms)",
    );
    expect(text(r)).toContain("--task-timeout-ms MS");
    await until(() => bounded.received().some((m) => m.method === "tasks/cancel"));
    expect(text(await c.callTool({ name: "plain", arguments: { topic: "after" } }))).toContain("after");
  });

  describe("an upstream task's input request", () => {
    const updates = (before: number) =>
      proxy
        .received()
        .slice(before)
        .filter((m) => m.method === "tasks/update");

    it.each([
      ["accept", { action: "accept", content: { branch: "main" } }, "asks done: branch main: q"],
      ["decline", { action: "decline" }, "asks done: decline: q"],
    ])(
      "asks a 2025 client that declared elicitation, and its answer (%s) reaches the upstream task",
      async (_, answer, expected) => {
        const c = await proxy.connect("2025+elicit");
        const asked: unknown[] = [];
        c.setRequestHandler("elicitation/create", (request) => {
          asked.push(request.params);
          return answer as never;
        });
        const before = proxy.received().length;
        const r = await c.callTool({ name: "asks", arguments: { topic: "q" } });
        expect(r.isError).toBeFalsy();
        expect(text(r)).toContain(expected);
        expect(asked).toEqual([
          expect.objectContaining({ mode: "form", message: `The MCP server "tasks-upstream" asks: Which branch?` }),
        ]);
        // One question, one tasks/update carrying the answer under the upstream's key, for the upstream's task.
        const sent = updates(before);
        expect(sent).toHaveLength(1);
        expect(sent[0]!.params).toMatchObject({
          taskId: await polledTask(proxy.received, before),
          inputResponses: { branch: answer },
        });
      },
    );

    it("a 2025 client without elicitation gets an error naming the capability; the upstream task is cancelled", async () => {
      const c = await proxy.connect("2025");
      const before = proxy.received().length;
      const r = await c.callTool({ name: "asks", arguments: { topic: "q" } });
      expect(r.isError).toBe(true);
      expect(text(r)).toContain(
        'asks for input (elicitation/create), and this client cannot be asked elicitation/create: it declared no \\"elicitation\\" capability',
      );
      expect(updates(before)).toHaveLength(0);
      await upstreamCancelled(proxy.received, before);
    });

    it.each([
      ["asks_huge", "message must be a string of at most 4000 characters; received 5000 characters"],
      ["asks_odd", 'method must be one of elicitation/create, sampling/createMessage; received \\"roots/list\\"'],
    ])(
      "%s: a question out of bounds is refused, naming the field, before the client hears it",
      async (name, expected) => {
        const c = await proxy.connect("2025+elicit");
        let asked = 0;
        c.setRequestHandler("elicitation/create", () => {
          asked++;
          return { action: "accept", content: { branch: "main" } };
        });
        const before = proxy.received().length;
        const r = await c.callTool({ name, arguments: { topic: "q" } });
        expect(r.isError).toBe(true);
        expect(text(r)).toContain(expected);
        expect(asked).toBe(0);
        expect(updates(before)).toHaveLength(0);
        await upstreamCancelled(proxy.received, before);
        expect(text(await c.callTool({ name: "plain", arguments: { topic: "still" } }))).toContain("still");
      },
    );
  });
});
