/**
 * toolgate inside the AI SDK's own agent loop: generateText with the SDK's mock language model
 * drives the real coding catalog (bash_execute in bubblewrap) through `aiSdkTools`, with the
 * model's tool-call ids as call ids.
 */
import { join } from "node:path";
import { generateText, stepCountIs, streamText, type ModelMessage } from "ai";
import { MockLanguageModelV4 } from "ai/test";
import { describe, expect, it } from "vitest";
import { aiSdkTools } from "../../src/adapters/ai-sdk.js";
import { scripted, usage, type Step } from "../support/ai-sdk-model.js";
import { abortOnceRunning, expectKilled, longCommand, RUN_TEST, sandboxed, worlds } from "./support.js";
import { markedTree } from "../support/procs.js";

/** The tool results the model was shown in its last request. */
function shownToModel(model: MockLanguageModelV4): { id: string; output: { type: string; value: unknown } }[] {
  const prompt = model.doGenerateCalls.at(-1)!.prompt;
  return prompt.flatMap((m) =>
    m.role === "tool"
      ? m.content.flatMap((p) => (p.type === "tool-result" ? [{ id: p.toolCallId, output: p.output as never }] : []))
      : [],
  );
}

const world = worlds("ai-sdk");

describe.skipIf(!sandboxed)("toolgate/ai-sdk in generateText", () => {
  it("views, edits after correcting an invalid call from toolgate's message, runs the test; a retried step replays", async () => {
    const w = world();
    const script: Step[] = [
      { call: [["v1", "file_view", { path: join(w.root, "add.sh"), offset: 1, limit: 20 }]] },
      // Invalid: file_edit has no `replace` field; toolgate names the field and the fix.
      { call: [["e1", "file_edit", { path: join(w.root, "add.sh"), replace: "+" }]] },
      { call: [["e2", "file_edit", { path: join(w.root, "add.sh"), old_str: "$1 - $2", new_str: "$1 + $2" }]] },
      { call: [["b1", "bash_execute", { command: RUN_TEST }]] },
      { text: "fixed: the test passes" },
    ];
    const model = scripted(script);
    const { tools } = await aiSdkTools(w.gateway, { trajectory_id: "chat-1", capability: w.capability });
    const result = await generateText({ model, tools, prompt: "fix add.sh", stopWhen: stepCountIs(8) });
    expect(result.text).toBe("fixed: the test passes");

    const calls = model.doGenerateCalls;
    // The invalid edit reached the model as toolgate's refusal, as a tool result, and the loop went on.
    const afterInvalid = shownToModel({ doGenerateCalls: calls.slice(0, 3) } as never).find((r) => r.id === "e1")!;
    expect(afterInvalid.output.type).toBe("error-text");
    expect(afterInvalid.output.value).toContain("invalid_arguments");
    expect(afterInvalid.output.value).toContain("old_str");
    expect(w.read("add.sh")).toBe("echo $(($1 + $2))\n");
    const ran = shownToModel(model).find((r) => r.id === "b1")!;
    expect(ran.output).toMatchObject({ type: "text" });
    expect(String(ran.output.value)).toContain("PASS");
    expect(w.effects()).toBe(1);
    // The structured output is kept beside the text.
    const bashStep = result.steps[3]!.toolResults[0]!;
    expect(bashStep.output).toMatchObject({ ok: true, call_id: "b1", output: { exit_code: 0 } });
    // Each call is proposed under the model's id, in its trajectory, at its step.
    expect(w.audit.records.map((r) => [r.call_id, r.turn, r.trajectory_id, r.outcome])).toEqual([
      ["v1", 0, "chat-1", "ok"],
      ["e1", 1, "chat-1", "invalid_arguments"],
      ["e2", 2, "chat-1", "ok"],
      ["b1", 3, "chat-1", "ok"],
    ]);

    // The same step retried (the request sent again after its answer was lost): the model
    // repeats its tool call with the same id, and the stored result answers; the test ran once.
    const retry = scripted([{ call: [["b1", "bash_execute", { command: RUN_TEST }]] }, { text: "again" }]);
    const history: ModelMessage[] = [
      { role: "user", content: "fix add.sh" },
      ...result.steps.slice(0, 3).flatMap((s) => s.response.messages),
    ];
    const again = await generateText({ model: retry, tools, messages: history, stopWhen: stepCountIs(3) });
    expect(again.steps[0]!.toolResults[0]!.output).toMatchObject({ ok: true, replay: true, call_id: "b1" });
    expect(w.effects()).toBe(1);
  });

  it("streamText runs the same tools, with the same ids", async () => {
    const w = world();
    const model = new MockLanguageModelV4({
      doStream: async () => ({
        stream: new ReadableStream({
          start(c) {
            c.enqueue({ type: "stream-start", warnings: [] });
            c.enqueue({
              type: "tool-call",
              toolCallId: "s1",
              toolName: "bash_execute",
              input: JSON.stringify({ command: RUN_TEST }),
            });
            c.enqueue({ type: "finish", finishReason: { unified: "tool-calls", raw: undefined }, usage });
            c.close();
          },
        }),
      }),
    });
    const { tools } = await aiSdkTools(w.gateway, { trajectory_id: "chat-s", capability: w.capability });
    const result = streamText({ model, tools, prompt: "run the test", stopWhen: stepCountIs(1) });
    const results = await result.toolResults;
    expect(results[0]!.output).toMatchObject({ call_id: "s1", output: { exit_code: 1 } });
    expect(w.effects()).toBe(1);
    expect(w.audit.records.map((r) => [r.call_id, r.turn])).toEqual([["s1", 0]]);
  });

  it("an A3 call pauses for the SDK's approval, is asked once, runs once approved and never when denied", async () => {
    const w = world();
    const model = scripted([
      {
        call: [
          ["d1", "file_delete", { name: "old-a.txt" }],
          ["d2", "file_delete", { name: "old-b.txt" }],
        ],
      },
      { text: "one deleted, one kept" },
    ]);
    const { tools, recordDenials } = await aiSdkTools(w.gateway, {
      trajectory_id: "chat-a3",
      capability: w.capability,
      approver: "alice",
    });
    const prompt: ModelMessage[] = [{ role: "user", content: "clean up" }];
    const first = await generateText({ model, tools, messages: prompt, stopWhen: stepCountIs(4) });
    const requests = first.content.filter((p) => p.type === "tool-approval-request");
    expect(requests.map((r) => r.toolCall.toolCallId)).toEqual(["d1", "d2"]);
    // The gateway recorded one request per call; nobody ran anything yet.
    const pending = await w.gateway.approvals.list({ state: "pending" });
    const byName = (a: { arguments: unknown }, b: { arguments: unknown }) =>
      JSON.stringify(a.arguments).localeCompare(JSON.stringify(b.arguments));
    expect(pending.sort(byName).map((p) => p.arguments)).toEqual([{ name: "old-a.txt" }, { name: "old-b.txt" }]);
    expect(w.deletes).toEqual([]);

    const [approve, deny] = requests;
    const resumed: ModelMessage[] = [
      ...prompt,
      ...first.response.messages,
      {
        role: "tool",
        content: [
          { type: "tool-approval-response", approvalId: approve!.approvalId, approved: true },
          { type: "tool-approval-response", approvalId: deny!.approvalId, approved: false, reason: "keep b" },
        ],
      },
    ];
    expect(await recordDenials(resumed)).toBe(1);
    const second = await generateText({ model, tools, messages: resumed, stopWhen: stepCountIs(4) });
    expect(second.text).toBe("one deleted, one kept");
    expect(w.deletes).toEqual(["old-a.txt"]);
    expect([w.exists("old-a.txt"), w.exists("old-b.txt")]).toEqual([false, true]);
    const decided = (await w.gateway.approvals.list()).sort(byName);
    expect(decided.map((a) => [a.arguments, a.state, a.approver])).toEqual([
      [{ name: "old-a.txt" }, "consumed", "cli:alice"],
      [{ name: "old-b.txt" }, "denied", "cli:alice"],
    ]);
    // No second request was made for either call: one approval, asked once.
    expect(decided).toHaveLength(2);
  });

  it("a sub-agent with an attenuated capability is refused outside its scope, as a tool result", async () => {
    const w = world();
    const parent = await aiSdkTools(w.gateway, { trajectory_id: "chat-p", capability: w.capability });
    const sub = parent.run.subAgent({ rights: ["read"], objects: [`path:${join(w.root, "docs")}`] });
    const { tools } = await aiSdkTools(sub);
    const model = scripted([
      {
        call: [
          ["in", "file_view", { path: join(w.root, "docs", "notes.txt"), offset: 1, limit: 5 }],
          ["out", "file_view", { path: join(w.root, "add.sh"), offset: 1, limit: 5 }],
          ["w", "bash_execute", { command: RUN_TEST }],
        ],
      },
      { text: "done" },
    ]);
    await generateText({ model, tools, prompt: "read", stopWhen: stepCountIs(3) });
    const shown = Object.fromEntries(shownToModel(model).map((r) => [r.id, r.output]));
    expect(shown.in).toMatchObject({ type: "text" });
    expect(String(shown.in!.value)).toContain("notes for the sub-agent");
    expect(shown.out).toMatchObject({ type: "error-text" });
    expect(String(shown.out!.value)).toContain("denied");
    expect(String(shown.w!.value)).toContain("denied");
    expect(w.effects()).toBe(0);
    expect(sub.trajectory_id).toBe("chat-p/sub-1");
  });

  it("an aborted step kills the shell command it started; the call answers cancelled", async () => {
    const w = world();
    const tree = markedTree();
    const model = scripted([{ call: [["long", "bash_execute", { command: longCommand(tree) }]] }]);
    const { tools } = await aiSdkTools(w.gateway, { trajectory_id: "chat-x", capability: w.capability });
    const controller = new AbortController();
    const { ended, ns } = await abortOnceRunning(
      tree,
      controller,
      generateText({ model, tools, prompt: "wait", abortSignal: controller.signal }),
    );
    // The loop goes on: the aborted call answers as a tool result (the SDK's stop condition ends the run).
    expect(ended).toBe("finished");
    await expectKilled(w, tree, ns, "long");
    expect(w.audit.records.find((r) => r.call_id === "long")!.outcome).toBe("cancelled");
  });
});
