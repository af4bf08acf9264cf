/**
 * A tool's own failure answer (ToolResult `failed`, what a proxied MCP `isError` result becomes)
 * is definite: a write is recorded COMPLETED with it and a repeat replays it, never IN_DOUBT; a
 * thrown error is still in doubt.
 */
import { describe, expect, it } from "vitest";
import { toolResult, type ToolSpec } from "../../src/core/tool.js";
import { gateways } from "./helpers.js";

const make = gateways();

function rejecting(calls: { n: number }, how: "answer" | "throw"): ToolSpec {
  return {
    name: "create_issue",
    description: "Creates an issue in the tracker and returns its number.",
    inputSchema: {
      $schema: "https://json-schema.org/draft/2020-12/schema",
      type: "object",
      properties: { title: { type: "string", maxLength: 100 } },
      required: ["title"],
      additionalProperties: false,
    },
    effect: "write",
    handler: () => {
      calls.n += 1;
      if (how === "throw") throw new Error("socket hang up");
      return toolResult("the tracker refused: title already exists", {
        text: "the tracker refused: title already exists",
        failed: true,
      });
    },
  };
}

describe("a tool's failure answer", () => {
  it("a write's failure answer is recorded COMPLETED and replayed to a repeat, which does not run", async () => {
    const calls = { n: 0 };
    const { gateway, propose, store, clock } = make({ tools: [rejecting(calls, "answer")] });
    const p = propose("create_issue", { title: "crash on start" }, { call_id: "c1" });
    const first = await gateway.call(p);
    expect(first.ok).toBe(false);
    expect(first.error?.code).toBe("tool_failed");
    expect(first.error?.detail).toEqual({ reason: "tool_answered_failure" });
    expect(first.text).toContain(
      "create_issue answered with a failure (its message is below); it did not crash, so this is its answer. The answer is recorded: the same call returns it again without running.",
    );
    expect(first.text).toContain("the tracker refused: title already exists");
    const [record] = await store.records.list({ now: clock.now });
    expect(record!.state).toBe("COMPLETED");
    const again = await gateway.call(p);
    expect(again.error?.code).toBe("tool_failed");
    expect(again.error?.detail).toEqual({ reason: "tool_answered_failure", replay: true });
    expect(again.text).toContain("This is the recorded answer of an earlier execution of the same call, replayed");
    expect(calls.n).toBe(1);
  });

  it("a thrown error of a write stays in doubt: the effect is unknown", async () => {
    const calls = { n: 0 };
    const { gateway, propose, store, clock } = make({ tools: [rejecting(calls, "throw")] });
    const p = propose("create_issue", { title: "crash on start" }, { call_id: "c1" });
    expect((await gateway.call(p)).error?.detail).toMatchObject({ record_state: "IN_DOUBT" });
    expect((await store.records.list({ now: clock.now }))[0]!.state).toBe("IN_DOUBT");
    expect((await gateway.call(p)).error?.code).toBe("in_doubt");
    expect(calls.n).toBe(1);
  });
});
