/**
 * A call's log (`CallOptions.log` → `ctx.log`): a tool passes entries to its caller while it runs,
 * at the caller's level; nothing after the call has answered; a failing receiver fails nothing.
 * And the change signal the MCP server subscribes to.
 */
import { describe, expect, it } from "vitest";
import { z } from "zod";
import type { CallLog, LogEntry } from "../../src/core/tool.js";
import { ChangeSignal } from "../../src/core/changes.js";
import { openStore } from "../../src/idempotency/open.js";
import { createGateway } from "../../src/runtime/gateway.js";
import { defineTool } from "../../src/schema/define.js";

describe("a call's log", () => {
  it("reaches the caller while the call runs, with the caller's level, and not after it answered", async () => {
    let kept: CallLog | undefined;
    let seenLevel: string | undefined;
    const tool = defineTool({
      name: "log_twice",
      description: "Logs a line, then answers.",
      input: z.object({}),
      effect: "read",
      handler: async (_a, ctx) => {
        seenLevel = ctx.log?.level;
        ctx.log?.send({ level: "warning", logger: "t", data: "during" });
        kept = ctx.log;
        return "ok";
      },
    });
    const gateway = createGateway({ tools: [tool], store: await openStore("memory:"), audit: false });
    const got: LogEntry[] = [];
    const o = await gateway.call(
      { trajectory_id: "t", turn: 1, call_id: "c", tool: "log_twice", arguments: {} },
      { log: { level: "notice", send: (e) => void got.push(e) } },
    );
    expect(o.ok).toBe(true);
    expect(seenLevel).toBe("notice");
    kept!.send({ level: "error", logger: "t", data: "after" });
    expect(got.map((e) => e.data)).toEqual(["during"]);
  });

  it("is absent when the caller asked for none, and a receiver that throws fails nothing", async () => {
    let present: boolean | undefined;
    const tool = defineTool({
      name: "log_probe",
      description: "Logs if it can.",
      input: z.object({}),
      effect: "read",
      handler: async (_a, ctx) => {
        present = ctx.log !== undefined;
        ctx.log?.send({ level: "info", logger: "t", data: "x" });
        return "ok";
      },
    });
    const gateway = createGateway({ tools: [tool], store: await openStore("memory:"), audit: false });
    const call = { trajectory_id: "t", turn: 1, tool: "log_probe", arguments: {} };
    await gateway.call({ ...call, call_id: "a" });
    expect(present).toBe(false);
    const o = await gateway.call(
      { ...call, call_id: "b" },
      {
        log: {
          level: "debug",
          send: () => {
            throw new Error("receiver broke");
          },
        },
      },
    );
    expect(present).toBe(true);
    expect(o.ok).toBe(true);
  });

  it("reads the receiver's level at each use, and its send works taken off the log", async () => {
    const levels: string[] = [];
    const receiver: CallLog = { level: "info", send: (e) => void got.push(e) };
    const got: LogEntry[] = [];
    const tool = defineTool({
      name: "log_detached",
      description: "Logs through a detached send, reading the level before and after the receiver changes it.",
      input: z.object({}),
      effect: "read",
      handler: async (_a, ctx) => {
        const { send } = ctx.log!;
        levels.push(ctx.log!.level);
        receiver.level = "error";
        levels.push(ctx.log!.level);
        send({ level: "error", logger: "t", data: "detached" });
        return "ok";
      },
    });
    const gateway = createGateway({ tools: [tool], store: await openStore("memory:"), audit: false });
    const o = await gateway.call(
      { trajectory_id: "t", turn: 1, call_id: "c", tool: "log_detached", arguments: {} },
      { log: receiver },
    );
    expect(o.ok).toBe(true);
    expect(levels).toEqual(["info", "error"]);
    expect(got.map((e) => e.data)).toEqual(["detached"]);
  });
});

describe("ChangeSignal", () => {
  it("tells every listener, past one that throws, and not one that unsubscribed", () => {
    const signal = new ChangeSignal();
    const heard: string[] = [];
    signal.subscribe(() => {
      throw new Error("broken listener");
    });
    const stop = signal.subscribe(() => void heard.push("a"));
    signal.subscribe(() => void heard.push("b"));
    signal.emit();
    stop();
    signal.emit();
    expect(heard).toEqual(["a", "b", "b"]);
    expect(signal.size).toBe(2);
  });
});
