import { describe, expect, it } from "vitest";
import { z } from "zod";
import type { ToolContext } from "../../src/core/tool.js";
import { createMemoryStore } from "../../src/idempotency/stores/memory.js";
import { CallContext } from "../../src/runtime/call-context.js";
import { CallAbort, ExecutionAborted } from "../../src/runtime/execute.js";
import { createGateway } from "../../src/runtime/gateway.js";
import { defineTool } from "../../src/schema/define.js";

const ids = { trajectory_id: "t1", turn: 2, call_id: "c1" };

function context(abort: CallAbort, notes: Record<string, unknown> = {}) {
  return new CallContext(
    abort,
    ids,
    () => 42,
    300,
    () => Promise.resolve(null),
    (name, value) => void (notes[name] = value),
  );
}

describe("CallContext, the ToolContext a tool is handed", () => {
  it("carries the call's ids, clock and budget, and its functions work when taken off the context", async () => {
    const notes: Record<string, unknown> = {};
    const ctx = context(new CallAbort(null), notes);
    expect([ctx.trajectory_id, ctx.turn, ctx.call_id, ctx.now(), ctx.budget_tokens]).toEqual(["t1", 2, "c1", 42, 300]);
    const { note, caller } = ctx;
    note("rows", 3);
    expect(notes).toEqual({ rows: 3 });
    await expect(caller()).resolves.toBeNull();
  });

  it("reads its signal from the call's abort, the same signal each time, aborted with the call's reason", () => {
    const abort = new CallAbort(null);
    const ctx = context(abort);
    const { signal } = ctx;
    expect(signal).toBe(abort.signal);
    expect(ctx.signal).toBe(signal);
    expect(signal.aborted).toBe(false);
    const shutdown = new ExecutionAborted("shutdown", null);
    abort.cancel(shutdown);
    expect(signal.aborted).toBe(true);
    expect(signal.reason).toBe(shutdown);
  });

  it("has no optional member as its own until the gateway sets it (a tool tests them with `in` or ?.)", () => {
    const ctx: ToolContext = context(new CallAbort(null));
    for (const name of ["trace", "progress", "log", "ask", "authorizeAlso", "idempotency_key"])
      expect(Object.prototype.hasOwnProperty.call(ctx, name), name).toBe(false);
    ctx.idempotency_key = "k1";
    expect(ctx.idempotency_key).toBe("k1");
  });

  it("refuses an assignment to its signal, as the object it replaced did", () => {
    const ctx = context(new CallAbort(null)) as { signal: unknown };
    expect(() => {
      ctx.signal = new AbortController().signal;
    }).toThrow(TypeError);
  });
});

describe("the gateway's context for a call", () => {
  it("is a CallContext with the proposal's ids, its trace only when the caller sent one", async () => {
    const seen: ToolContext[] = [];
    const probe = defineTool({
      name: "probe",
      description: "Records the context it was handed.",
      input: z.object({}).strict(),
      effect: "read",
      handler: (_args, ctx) => {
        seen.push(ctx);
        return { aborted: ctx.signal.aborted };
      },
    });
    const gateway = createGateway({ tools: [probe], store: createMemoryStore(), audit: false });
    const plain = await gateway.call({ trajectory_id: "t", turn: 1, call_id: "a", tool: "probe", arguments: {} });
    const traced = await gateway.call(
      { trajectory_id: "t", turn: 2, call_id: "b", tool: "probe", arguments: {} },
      { trace: { traceparent: "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01" } },
    );
    expect([plain.ok, traced.ok]).toEqual([true, true]);
    expect(seen[0]).toBeInstanceOf(CallContext);
    expect([seen[0]!.trajectory_id, seen[0]!.turn, seen[0]!.call_id]).toEqual(["t", 1, "a"]);
    expect("trace" in seen[0]!).toBe(false);
    expect(seen[1]!.trace?.traceparent).toBe("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01");
    await gateway.close();
  });
});
