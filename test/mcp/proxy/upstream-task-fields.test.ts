/** `readTask`: every field of an upstream's task checked, each refusal naming the field, what was expected and what arrived. */
import { describe, expect, it } from "vitest";
import { MAX_POLL_MS, MIN_POLL_MS, readTask } from "../../../src/mcp/proxy/upstream-tasks.js";

const task = (extra: Record<string, unknown> = {}) => ({ taskId: "t-1", status: "working", ...extra });

describe("an upstream task's fields", () => {
  it("clamps the poll interval to the proxy's bounds, and defaults a missing one", () => {
    expect(readTask(task({ pollIntervalMs: 0 }), "a").pollMs).toBe(MIN_POLL_MS);
    expect(readTask(task({ pollIntervalMs: -7 }), "a").pollMs).toBe(MIN_POLL_MS);
    expect(readTask(task({ pollIntervalMs: 1e12 }), "a").pollMs).toBe(MAX_POLL_MS);
    expect(readTask(task(), "a").pollMs).toBe(1_000);
  });

  it.each([
    ["a string", 'the answer must be an object; received "a string"'],
    [
      task({ taskId: "x".repeat(257) }),
      "the answer.taskId must be a string of 1 to 256 printable ASCII characters without spaces; received",
    ],
    [
      task({ taskId: "" }),
      'the answer.taskId must be a string of 1 to 256 printable ASCII characters without spaces; received ""',
    ],
    [
      task({ taskId: 7 }),
      "the answer.taskId must be a string of 1 to 256 printable ASCII characters without spaces; received 7",
    ],
    [task({ taskId: "t\u202e1" }), "the answer.taskId must be a string of 1 to 256 printable ASCII characters"],
    [
      task({ status: "done" }),
      'the answer.status must be one of working, input_required, completed, failed, cancelled; received "done"',
    ],
    [
      task({ status: undefined }),
      "the answer.status must be one of working, input_required, completed, failed, cancelled; received",
    ],
    [task({ pollIntervalMs: "fast" }), 'the answer.pollIntervalMs must be a number of milliseconds; received "fast"'],
    [task({ pollIntervalMs: null }), "the answer.pollIntervalMs must be a number of milliseconds; received null"],
    [task({ statusMessage: 5 }), "the answer.statusMessage must be a string; received 5"],
  ])("refuses %j naming the field", (raw, message) => {
    expect(() => readTask(raw, "the answer")).toThrow(message);
  });

  it("refuses an answer about another task than the one asked about", () => {
    expect(() => readTask(task({ taskId: "t-2" }), "tasks/get's answer", "t-1")).toThrow(
      `tasks/get's answer.taskId must be the task asked about, "t-1"; received "t-2"`,
    );
  });
});
