/**
 * toolgate inside OpenAI Agents JS's own Runner: a scripted model implementing the SDK's public
 * `Model` interface drives the real coding catalog (bash_execute in bubblewrap) through
 * `openAiAgentsTools`, with the model's call ids as call ids.
 */
import { join } from "node:path";
import {
  Agent,
  Runner,
  Usage,
  setTracingDisabled,
  type Model,
  type ModelRequest,
  type ModelResponse,
} from "@openai/agents";
import { describe, expect, it } from "vitest";
import { openAiAgentsTools } from "../../src/adapters/openai-agents.js";
import {
  abortOnceRunning,
  expectOneApprovedOneDenied,
  expectKilled,
  longCommand,
  RUN_TEST,
  sandboxed,
  worlds,
} from "./support.js";
import { markedTree } from "../support/procs.js";

setTracingDisabled(true);

type Step = { call: [id: string, tool: string, args: unknown][] } | { text: string };

/** A model that answers each request with the next step of its script; it keeps what it was sent. */
class ScriptedModel implements Model {
  readonly requests: ModelRequest[] = [];
  constructor(private readonly steps: Step[]) {}
  async getResponse(request: ModelRequest): Promise<ModelResponse> {
    this.requests.push(request);
    const step = this.steps.shift();
    if (!step) throw new Error("the script has no step left");
    const usage = new Usage({ requests: 1, inputTokens: 1, outputTokens: 1, totalTokens: 2 });
    if ("text" in step)
      return {
        usage,
        output: [
          {
            type: "message",
            role: "assistant",
            status: "completed",
            content: [{ type: "output_text", text: step.text }],
          },
        ],
      };
    return {
      usage,
      output: step.call.map(([callId, name, args]) => ({
        type: "function_call" as const,
        callId,
        name,
        arguments: JSON.stringify(args),
        status: "completed" as const,
      })),
    };
  }
  // eslint-disable-next-line require-yield
  async *getStreamedResponse(): AsyncIterable<never> {
    throw new Error("this scripted model answers getResponse only");
  }
  /** The output the tool with `callId` gave, as the model was sent it last. */
  shown(callId: string): string {
    const input = this.requests.at(-1)!.input;
    const items = typeof input === "string" ? [] : input;
    const item = items.find(
      (i) => (i as { type?: string }).type === "function_call_result" && (i as { callId?: string }).callId === callId,
    ) as { output?: unknown } | undefined;
    return JSON.stringify(item?.output ?? null);
  }
}

const world = worlds("openai");
const runner = () => new Runner({ tracingDisabled: true });

describe.skipIf(!sandboxed)("toolgate/openai-agents in the Runner", () => {
  it("views, edits after correcting an invalid call from toolgate's message, runs the test; a retried step replays", async () => {
    const w = world();
    const model = new ScriptedModel([
      { call: [["v1", "file_view", { path: join(w.root, "add.sh"), offset: 1, limit: 20 }]] },
      { call: [["e1", "file_edit", { path: join(w.root, "add.sh"), replace: "+" }]] },
      { call: [["e2", "file_edit", { path: join(w.root, "add.sh"), old_str: "$1 - $2", new_str: "$1 + $2" }]] },
      { call: [["b1", "bash_execute", { command: RUN_TEST }]] },
      { text: "fixed" },
    ]);
    const { tools } = await openAiAgentsTools(w.gateway, { trajectory_id: "run-1", capability: w.capability });
    const agent = new Agent({ name: "coder", instructions: "fix add.sh", model, tools });
    const result = await runner().run(agent, "fix add.sh", { maxTurns: 8 });
    expect(result.finalOutput).toBe("fixed");
    expect(w.read("add.sh")).toBe("echo $(($1 + $2))\n");
    expect(model.shown("e1")).toContain("invalid_arguments");
    expect(model.shown("e1")).toContain("old_str");
    expect(model.shown("b1")).toContain("PASS");
    expect(w.effects()).toBe(1);
    expect(w.audit.records.map((r) => [r.call_id, r.turn, r.trajectory_id, r.outcome])).toEqual([
      ["v1", 0, "run-1", "ok"],
      ["e1", 0, "run-1", "invalid_arguments"],
      ["e2", 0, "run-1", "ok"],
      ["b1", 0, "run-1", "ok"],
    ]);

    // The step retried: a new run from the same history, the model repeating call b1.
    const retryModel = new ScriptedModel([
      { call: [["b1", "bash_execute", { command: RUN_TEST }]] },
      { text: "again" },
    ]);
    const history = result.history.slice(0, 7);
    const again = await runner().run(new Agent({ name: "coder", model: retryModel, tools }), history, { maxTurns: 3 });
    expect(again.finalOutput).toBe("again");
    expect(retryModel.shown("b1")).toContain("PASS");
    expect(w.effects()).toBe(1);
    expect(w.audit.records.at(-1)).toMatchObject({ call_id: "b1", replay: true });
  });

  it("an A3 call interrupts the run, is asked once, runs once approved and never when rejected", async () => {
    const w = world();
    const model = new ScriptedModel([
      {
        call: [
          ["d1", "file_delete", { name: "old-a.txt" }],
          ["d2", "file_delete", { name: "old-b.txt" }],
        ],
      },
      { text: "one deleted, one kept" },
    ]);
    const { tools, reject } = await openAiAgentsTools(w.gateway, {
      trajectory_id: "run-a3",
      capability: w.capability,
      approver: "bob",
    });
    const agent = new Agent({ name: "cleaner", model, tools });
    const first = await runner().run(agent, "clean up");
    expect(first.interruptions.map((i) => (i.rawItem as { callId: string }).callId)).toEqual(["d1", "d2"]);
    expect(await w.gateway.approvals.list({ state: "pending" })).toHaveLength(2);
    expect(w.deletes).toEqual([]);

    const [yes, no] = first.interruptions;
    first.state.approve(yes!);
    await reject(first.state, no!, "keep b");
    const second = await runner().run(agent, first.state);
    expect(second.finalOutput).toBe("one deleted, one kept");
    await expectOneApprovedOneDenied(w, "bob");
  });

  it("a sub-agent with an attenuated capability is refused outside its scope, as the tool's output", async () => {
    const w = world();
    const parent = await openAiAgentsTools(w.gateway, { trajectory_id: "run-p", capability: w.capability });
    const { tools } = await openAiAgentsTools(
      parent.run.subAgent({ rights: ["read"], objects: [`path:${join(w.root, "docs")}`] }),
    );
    const model = new ScriptedModel([
      {
        call: [
          ["in", "file_view", { path: join(w.root, "docs", "notes.txt"), offset: 1, limit: 5 }],
          ["out", "file_view", { path: join(w.root, "add.sh"), offset: 1, limit: 5 }],
        ],
      },
      { text: "done" },
    ]);
    const result = await runner().run(new Agent({ name: "reader", model, tools }), "read");
    expect(result.finalOutput).toBe("done");
    expect(model.shown("in")).toContain("notes for the sub-agent");
    expect(model.shown("out")).toContain("denied");
  });

  it("an aborted run kills the shell command its step started", async () => {
    const w = world();
    const tree = markedTree();
    const model = new ScriptedModel([
      { call: [["long", "bash_execute", { command: longCommand(tree) }]] },
      { text: "unreachable" },
    ]);
    const { tools } = await openAiAgentsTools(w.gateway, { trajectory_id: "run-x", capability: w.capability });
    const controller = new AbortController();
    const { ns } = await abortOnceRunning(
      tree,
      controller,
      runner().run(new Agent({ name: "waiter", model, tools }), "wait", { signal: controller.signal }),
    );
    await expectKilled(w, tree, ns, "long");
  });
});
