/**
 * `legacyAsk` for a 2025-11-25 task: one bound for a question, its wait for a route (the client
 * naming the task, a tasks/result arriving) included, so the request sent gets only what is left
 * of it (it had the whole bound again, up to twice in all). The server is a stand-in for what
 * `legacyAsk` reads of `GatewayServer` (capabilities, its real `TaskRoutes`, the send, whose
 * options are recorded); time is the fake clock's.
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import { legacyAsk } from "../../../src/mcp/server/call-ask.js";
import type { GatewayServer } from "../../../src/mcp/server/gateway-server.js";
import { TaskRoutes } from "../../../src/mcp/server/task-routes.js";

afterEach(() => void vi.useRealTimers());

const QUESTION = { which: { method: "elicitation/create", params: { mode: "form", message: "Which branch?" } } };

/** An HTTP session's server (no GET stream) whose client declared form elicitation; `sent` records each request's options. */
function session() {
  const routes = new TaskRoutes();
  routes.needsGetStream();
  const sent: { params: Record<string, unknown>; timeout: number; relatedRequestId?: unknown }[] = [];
  const server = {
    taskRoutes: routes,
    getClientCapabilities: () => ({ elicitation: { form: {} } }),
    elicitInput: async (params: Record<string, unknown>, options: { timeout: number; relatedRequestId?: unknown }) => {
      sent.push({ params, timeout: options.timeout, relatedRequestId: options.relatedRequestId });
      return { action: "accept", content: { branch: "main" } };
    },
  } as unknown as GatewayServer;
  return { routes, server, sent };
}

describe("legacyAsk of a task", () => {
  it("gives the request it sends what is left of the question's bound after its wait for a route", async () => {
    vi.useFakeTimers({ toFake: ["Date", "setTimeout", "clearTimeout"] });
    const { routes, server, sent } = session();
    routes.created("t1");
    const ask = legacyAsk({ server, for: { taskId: "t1" }, timeoutMs: 10_000 })(
      QUESTION as never,
      new AbortController().signal,
    );
    // 3 s until the client names the task, 4 s more until its tasks/result arrives.
    await vi.advanceTimersByTimeAsync(3000);
    routes.polled("t1", "input_required", 1000);
    await vi.advanceTimersByTimeAsync(4000);
    routes.resultWaits("t1", 42);
    expect(await ask).toEqual({ which: { action: "accept", content: { branch: "main" } } });
    expect(sent).toEqual([
      {
        params: expect.objectContaining({ _meta: { "io.modelcontextprotocol/related-task": { taskId: "t1" } } }),
        timeout: 3000,
        relatedRequestId: 42,
      },
    ]);
  });

  it("a route found at once leaves the request the whole bound; none found within it fails the question, naming what to do", async () => {
    vi.useFakeTimers({ toFake: ["Date", "setTimeout", "clearTimeout"] });
    const { routes, server, sent } = session();
    routes.resultWaits("t1", 7);
    await legacyAsk({ server, for: { taskId: "t1" }, timeoutMs: 10_000 })(
      QUESTION as never,
      new AbortController().signal,
    );
    expect(sent.map((s) => s.timeout)).toEqual([10_000]);
    const late = legacyAsk({ server, for: { taskId: "t2" }, timeoutMs: 10_000 })(
      QUESTION as never,
      new AbortController().signal,
    );
    const failed = expect(late).rejects.toThrow(
      "this client cannot be asked elicitation/create: in 10000 ms it sent no tasks/result of task t2 (where a 2025-11-25 task's requests are sent) and opened no GET stream",
    );
    await vi.advanceTimersByTimeAsync(10_000);
    await failed;
    expect(sent).toHaveLength(1);
  });
});
