/**
 * An upstream task's questions reach a 2025-11-25 client whose call runs as a toolgate task (a
 * task-augmented tools/call): `toolgate proxy` (spawned from source, over stdio and Streamable
 * HTTP) in front of `fixtures/tasks-upstream.mjs` sends the upstream's checked question to the
 * client as an elicitation naming the task in its `_meta` (`io.modelcontextprotocol/related-task`)
 * while the task is `input_required`, the SDK v2 client's handler answers, the answer goes upstream
 * with tasks/update, and tasks/result gives the upstream's result; the session hears the task go
 * input_required, working again, completed. A client that declared no elicitation gets the task's
 * clear failure naming the capability, and the upstream task is cancelled.
 */
import { afterAll, describe, expect, it } from "vitest";
import { z } from "zod";
import type { Client } from "@modelcontextprotocol/client";
import { closeAll, polledTask, proxyCommand, text, updatesSince, until, upstreamCancelled } from "./tasks-proxy.js";

afterAll(closeAll);

const Created = z.looseObject({ task: z.looseObject({ taskId: z.string(), status: z.string() }) });
const CallResult = z.looseObject({ content: z.array(z.unknown()), isError: z.boolean().optional() });

/** The task statuses `c`'s session hears, as they arrive on the wire. */
function statusesOf(c: Client): string[] {
  const heard: string[] = [];
  const transport = c.transport!;
  const onmessage = transport.onmessage;
  transport.onmessage = (m, extra) => {
    const n = m as { method?: string; params?: { status?: string } };
    if (n.method === "notifications/tasks/status") heard.push(String(n.params?.status));
    onmessage?.(m, extra);
  };
  return heard;
}

const startTask = (c: Client, topic: string) =>
  c.request(
    { method: "tools/call", params: { name: "asks", arguments: { topic }, task: { ttl: 600_000 } } } as never,
    Created,
  );
const resultOf = (c: Client, taskId: string) =>
  c.request({ method: "tasks/result", params: { taskId } } as never, CallResult, { timeout: 60_000 });

describe("an upstream task's questions, to a 2025-11-25 client's task", { timeout: 180_000 }, () => {
  const proxy = proxyCommand([]);
  const updates = (before: number) => updatesSince(proxy.received, before);

  it.each(["stdio", "http"] as const)(
    "over %s: the client is asked naming the task while it is input_required; its answer reaches the upstream task",
    async (over) => {
      const c = await proxy.connect("2025+elicit", over, "erin");
      const asked: Record<string, unknown>[] = [];
      c.setRequestHandler("elicitation/create", (request) => {
        asked.push(request.params as Record<string, unknown>);
        return { action: "accept", content: { branch: "legacy" } };
      });
      const statuses = statusesOf(c);
      const before = proxy.received().length;
      const { task } = await startTask(c, `l-${over}`);
      const result = await resultOf(c, task.taskId);
      expect(result.isError, text(result)).toBeFalsy();
      expect(text(result)).toContain(`asks done: branch legacy: l-${over}`);
      expect(asked).toEqual([
        expect.objectContaining({
          message: 'The MCP server "tasks-upstream" asks: Which branch?',
          _meta: { "io.modelcontextprotocol/related-task": { taskId: task.taskId } },
        }),
      ]);
      await until(() => statuses.includes("completed"));
      expect(statuses).toEqual(["input_required", "working", "completed"]);
      // The answer went upstream once, for the upstream's task.
      expect(updates(before)).toEqual([
        expect.objectContaining({
          params: expect.objectContaining({
            taskId: await polledTask(proxy.received, before),
            inputResponses: { branch: { action: "accept", content: { branch: "legacy" } } },
          }),
        }),
      ]);
    },
  );

  it("a client that declared no elicitation: the task fails the call naming the capability; the upstream task is cancelled", async () => {
    const c = await proxy.connect("2025");
    const before = proxy.received().length;
    const { task } = await startTask(c, "none");
    const result = await resultOf(c, task.taskId);
    expect(result.isError).toBe(true);
    expect(text(result)).toContain('this client cannot be asked elicitation/create: it declared no \\"elicitation\\"');
    expect(updates(before)).toHaveLength(0);
    await upstreamCancelled(proxy.received, before);
  });
});
