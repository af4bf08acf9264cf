/**
 * toolgate inside LangChain's own agent loop: `createAgent` (a LangGraph graph) with the framework's
 * fake chat model (`fakeModel` from @langchain/core/testing) drives the real coding catalog
 * (bash_execute in bubblewrap) through `langChainTools`, with the tool calls' ids as call ids.
 */
import { join } from "node:path";
import { AIMessage, HumanMessage, ToolMessage, type BaseMessage } from "@langchain/core/messages";
import { BaseCallbackHandler } from "@langchain/core/callbacks/base";
import { fakeModel } from "@langchain/core/testing";
import { Command, MemorySaver } from "@langchain/langgraph";
import { createAgent } from "langchain";
import { describe, expect, it } from "vitest";
import { langChainTools } from "../../src/adapters/langchain.js";
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

const world = worlds("langchain");

/** The content of the tool message answering `id` that the model was last shown. */
function shown(model: ReturnType<typeof fakeModel>, id: string): string {
  const messages: BaseMessage[] = model.calls.at(-1)!.messages;
  const m = messages.find((x) => ToolMessage.isInstance(x) && x.tool_call_id === id);
  return m ? String(m.content) : "(not shown)";
}

describe.skipIf(!sandboxed)("toolgate/langchain in createAgent", () => {
  it("views, edits after correcting an invalid call from toolgate's message, runs the test; a retried step replays", async () => {
    const w = world();
    const model = fakeModel()
      .respondWithTools([{ id: "v1", name: "file_view", args: { path: join(w.root, "add.sh"), offset: 1, limit: 20 } }])
      .respondWithTools([{ id: "e1", name: "file_edit", args: { path: join(w.root, "add.sh"), replace: "+" } }])
      .respondWithTools([
        { id: "e2", name: "file_edit", args: { path: join(w.root, "add.sh"), old_str: "$1 - $2", new_str: "$1 + $2" } },
      ])
      .respondWithTools([{ id: "b1", name: "bash_execute", args: { command: RUN_TEST } }])
      .respond(new AIMessage("fixed"));
    const { tools } = await langChainTools(w.gateway, { trajectory_id: "thread-1", capability: w.capability });
    const agent = createAgent({ model, tools });
    const result = await agent.invoke({ messages: [new HumanMessage("fix add.sh")] });
    expect(String(result.messages.at(-1)!.content)).toBe("fixed");
    expect(shown(model, "e1")).toContain("invalid_arguments");
    expect(shown(model, "e1")).toContain("old_str");
    expect(shown(model, "b1")).toContain("PASS");
    expect(w.read("add.sh")).toBe("echo $(($1 + $2))\n");
    expect(w.effects()).toBe(1);
    const refused = result.messages.find((m) => ToolMessage.isInstance(m) && m.tool_call_id === "e1") as ToolMessage;
    expect(refused.status).toBe("error");
    expect(refused.artifact).toMatchObject({ ok: false, error: { code: "invalid_arguments" } });
    expect(w.audit.records.map((r) => [r.call_id, r.trajectory_id, r.outcome])).toEqual([
      ["v1", "thread-1", "ok"],
      ["e1", "thread-1", "invalid_arguments"],
      ["e2", "thread-1", "ok"],
      ["b1", "thread-1", "ok"],
    ]);

    // The step retried from the history before it: the model repeats tool call b1. (Its
    // messages get ids of their own: the fake model numbers them from 0, as it did the first time.)
    const retryModel = fakeModel()
      .respond(
        new AIMessage({
          id: "retry-1",
          content: "",
          tool_calls: [{ id: "b1", name: "bash_execute", args: { command: RUN_TEST }, type: "tool_call" }],
        }),
      )
      .respond(new AIMessage({ id: "retry-2", content: "again" }));
    const history = result.messages.slice(0, 7);
    await createAgent({ model: retryModel, tools }).invoke({ messages: history });
    expect(shown(retryModel, "b1")).toContain("PASS");
    expect(w.effects()).toBe(1);
    expect(w.audit.records.at(-1)).toMatchObject({ call_id: "b1", replay: true });
  });

  it("callbacks see the tool start and end under the tool call's id, as for any LangChain tool", async () => {
    const w = world();
    const seen: string[] = [];
    class Recorder extends BaseCallbackHandler {
      name = "recorder";
      override handleToolStart(
        _t: unknown,
        input: string,
        _r: string,
        _p?: string,
        _tags?: string[],
        _m?: unknown,
        _n?: string,
        id?: string,
      ) {
        seen.push(`start ${id} ${input}`);
      }
      override handleToolEnd(output: unknown) {
        seen.push(`end ${(output as ToolMessage).tool_call_id}`);
      }
    }
    const { tools } = await langChainTools(w.gateway, { trajectory_id: "thread-cb", capability: w.capability });
    const view = tools.find((t) => t.name === "file_view");
    const args = { path: join(w.root, "docs", "notes.txt"), offset: 1, limit: 5 };
    const out = (await view.invoke(
      { id: "cb1", name: "file_view", args, type: "tool_call" },
      { callbacks: [new Recorder()] },
    )) as ToolMessage;
    expect(String(out.content)).toContain("notes for the sub-agent");
    expect(seen).toEqual([`start cb1 ${JSON.stringify(args)}`, "end cb1"]);
  });

  it("an A3 call pauses the graph with interrupt(), is asked once, runs once approved and never when rejected", async () => {
    const w = world();
    const model = fakeModel()
      .respondWithTools([
        { id: "d1", name: "file_delete", args: { name: "old-a.txt" } },
        { id: "d2", name: "file_delete", args: { name: "old-b.txt" } },
      ])
      .respond(new AIMessage("one deleted, one kept"));
    const { tools } = await langChainTools(w.gateway, {
      trajectory_id: "thread-a3",
      capability: w.capability,
      approver: "carol",
    });
    const agent = createAgent({ model, tools, checkpointer: new MemorySaver() });
    const config = { configurable: { thread_id: "t-a3" } };
    const first = await agent.invoke({ messages: [new HumanMessage("clean up")] }, config);
    const interrupts = (first as { __interrupt__?: { id: string; value: { tool: string; arguments: unknown } }[] })
      .__interrupt__!;
    expect(interrupts.map((i) => i.value.arguments)).toEqual([{ name: "old-a.txt" }, { name: "old-b.txt" }]);
    expect(await w.gateway.approvals.list({ state: "pending" })).toHaveLength(2);
    expect(w.deletes).toEqual([]);

    const [yes, no] = interrupts;
    const resumed = await agent.invoke(
      new Command({ resume: { [yes!.id]: { approved: true }, [no!.id]: { type: "reject", message: "keep b" } } }),
      config,
    );
    expect(String(resumed.messages.at(-1)!.content)).toBe("one deleted, one kept");
    await expectOneApprovedOneDenied(w, "carol");
  });

  it("a sub-agent with an attenuated capability is refused outside its scope, as a tool message", async () => {
    const w = world();
    const parent = await langChainTools(w.gateway, { trajectory_id: "thread-p", capability: w.capability });
    const { tools } = await langChainTools(
      parent.run.subAgent({ rights: ["read"], objects: [`path:${join(w.root, "docs")}`] }),
    );
    const model = fakeModel()
      .respondWithTools([
        { id: "in", name: "file_view", args: { path: join(w.root, "docs", "notes.txt"), offset: 1, limit: 5 } },
        { id: "out", name: "file_view", args: { path: join(w.root, "add.sh"), offset: 1, limit: 5 } },
      ])
      .respond(new AIMessage("done"));
    await createAgent({ model, tools }).invoke({ messages: [new HumanMessage("read")] });
    expect(shown(model, "in")).toContain("notes for the sub-agent");
    expect(shown(model, "out")).toContain("denied");
  });

  it("an aborted invocation kills the shell command its step started", async () => {
    const w = world();
    const tree = markedTree();
    const model = fakeModel()
      .respondWithTools([{ id: "long", name: "bash_execute", args: { command: longCommand(tree) } }])
      .respond(new AIMessage("unreachable"));
    const { tools } = await langChainTools(w.gateway, { trajectory_id: "thread-x", capability: w.capability });
    const controller = new AbortController();
    const { ns } = await abortOnceRunning(
      tree,
      controller,
      createAgent({ model, tools }).invoke({ messages: [new HumanMessage("wait")] }, { signal: controller.signal }),
    );
    await expectKilled(w, tree, ns, "long");
  });
});
