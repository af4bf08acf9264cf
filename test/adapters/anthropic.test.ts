/**
 * toolgate inside the Anthropic SDK's own tool runner (`client.beta.messages.toolRunner`), pointed
 * by `baseURL` at a local HTTP server the test starts that speaks the Messages API with a script
 * of replies; the real coding catalog (bash_execute in bubblewrap) runs through `anthropicTools`
 * with each `tool_use.id` as the call id.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import Anthropic from "@anthropic-ai/sdk";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { anthropicTools } from "../../src/adapters/anthropic.js";
import { abortOnceRunning, expectKilled, longCommand, RUN_TEST, sandboxed, worlds } from "./support.js";
import { markedTree } from "../support/procs.js";

type Block = { type: "text"; text: string } | { type: "tool_use"; id: string; name: string; input: unknown };
interface Sent {
  messages: {
    role: string;
    content: string | { type: string; tool_use_id?: string; content?: unknown; is_error?: boolean }[];
  }[];
}

/** The Messages API, as far as the tool runner uses it: each POST answered by the script's next reply. */
const script: Block[][] = [];
const received: Sent[] = [];
let server: Server;
let baseURL = "";
beforeAll(async () => {
  server = createServer((req, res) => {
    let body = "";
    req.on("data", (c: Buffer) => (body += c.toString()));
    req.on("end", () => {
      received.push(JSON.parse(body) as Sent);
      const content = script.shift();
      if (!content) {
        res.writeHead(500, { "content-type": "application/json" });
        res.end(
          JSON.stringify({ type: "error", error: { type: "api_error", message: "the script has no reply left" } }),
        );
        return;
      }
      res.writeHead(200, { "content-type": "application/json" });
      res.end(
        JSON.stringify({
          id: `msg_${received.length}`,
          type: "message",
          role: "assistant",
          model: "claude-test",
          content,
          stop_reason: content.some((b) => b.type === "tool_use") ? "tool_use" : "end_turn",
          stop_sequence: null,
          usage: { input_tokens: 1, output_tokens: 1 },
        }),
      );
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  baseURL = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((r) => server.close(() => r())));

afterEach(() => {
  script.length = 0;
  received.length = 0;
});
const world = worlds("anthropic");
const client = () => new Anthropic({ baseURL, apiKey: "test-key-not-secret", maxRetries: 0 });
const use = (id: string, name: string, input: unknown): Block => ({ type: "tool_use", id, name, input });

/**
 * The tool_result for `id` the model was last sent. (The runner continues a server-side thread,
 * so a request carries only the messages new to it: every request is searched, latest first.)
 */
function shown(id: string): { text: string; is_error: boolean } {
  for (const m of received.flatMap((r) => r.messages).reverse()) {
    if (typeof m.content === "string") continue;
    const r = m.content.find((b) => b.type === "tool_result" && b.tool_use_id === id);
    if (r)
      return {
        text: typeof r.content === "string" ? r.content : JSON.stringify(r.content),
        is_error: r.is_error === true,
      };
  }
  return { text: "(not shown)", is_error: false };
}

describe.skipIf(!sandboxed)("toolgate/anthropic in the SDK's tool runner", () => {
  it("views, edits after correcting an invalid call from toolgate's message, runs the test; a retried step replays", async () => {
    const w = world();
    script.push(
      [use("toolu_v1", "file_view", { path: join(w.root, "add.sh"), offset: 1, limit: 20 })],
      [use("toolu_e1", "file_edit", { path: join(w.root, "add.sh"), replace: "+" })],
      [use("toolu_e2", "file_edit", { path: join(w.root, "add.sh"), old_str: "$1 - $2", new_str: "$1 + $2" })],
      [use("toolu_b1", "bash_execute", { command: RUN_TEST })],
      [{ type: "text", text: "fixed" }],
    );
    const { runnable } = await anthropicTools(w.gateway, { trajectory_id: "conv-1", capability: w.capability });
    const runner = client().beta.messages.toolRunner({
      model: "claude-test",
      max_tokens: 256,
      messages: [{ role: "user", content: "fix add.sh" }],
      tools: runnable as never,
    });
    const final = await runner.runUntilDone();
    expect(final.content).toEqual([{ type: "text", text: "fixed" }]);
    // The invalid edit was answered as an error result with toolgate's text, and the loop went on.
    const e1 = shown("toolu_e1");
    expect(e1.is_error).toBe(true);
    expect(e1.text).toContain("invalid_arguments");
    expect(e1.text).toContain("old_str");
    expect(shown("toolu_b1")).toMatchObject({ is_error: false });
    expect(shown("toolu_b1").text).toContain("PASS");
    expect(w.read("add.sh")).toBe("echo $(($1 + $2))\n");
    expect(w.effects()).toBe(1);
    expect(w.audit.records.map((r) => [r.call_id, r.outcome])).toEqual([
      ["toolu_v1", "ok"],
      ["toolu_e1", "invalid_arguments"],
      ["toolu_e2", "ok"],
      ["toolu_b1", "ok"],
    ]);

    // The request retried from the history before the step: the model repeats tool_use toolu_b1.
    const history = runner.params.messages.slice(0, 7);
    script.push([use("toolu_b1", "bash_execute", { command: RUN_TEST })], [{ type: "text", text: "again" }]);
    await client()
      .beta.messages.toolRunner({
        model: "claude-test",
        max_tokens: 256,
        messages: history as never,
        tools: runnable as never,
      })
      .runUntilDone();
    expect(shown("toolu_b1").text).toContain("PASS");
    expect(w.effects()).toBe(1);
    expect(w.audit.records.at(-1)).toMatchObject({ call_id: "toolu_b1", replay: true });
  });

  it("plain tool_use blocks: definitions out, tool_result blocks back under the same ids", async () => {
    const w = world();
    const { definitions, toolResults } = await anthropicTools(w.gateway, {
      trajectory_id: "conv-plain",
      capability: w.capability,
    });
    expect(definitions.map((d) => d.name)).toEqual([
      "bash_execute",
      "file_view",
      "file_edit",
      "grep_search",
      "file_delete",
    ]);
    script.push([
      use("toolu_p1", "bash_execute", { command: RUN_TEST }),
      use("toolu_p2", "file_view", { path: "relative" }),
    ]);
    const reply = await client().messages.create({
      model: "claude-test",
      max_tokens: 256,
      messages: [{ role: "user", content: "run it" }],
      tools: definitions as never,
    });
    const results = await toolResults(reply.content);
    expect(results.map((r) => [r.tool_use_id, r.is_error ?? false])).toEqual([
      ["toolu_p1", false],
      ["toolu_p2", true],
    ]);
    expect(results[1]!.content).toContain("invalid_arguments");
    expect(w.effects()).toBe(1);
  });

  it("an A3 call waits for a person's decision in gateway.approvals: approved runs once, denied never runs", async () => {
    const w = world();
    script.push(
      [use("toolu_d1", "file_delete", { name: "old-a.txt" }), use("toolu_d2", "file_delete", { name: "old-b.txt" })],
      [{ type: "text", text: "waiting for approval" }],
    );
    const { runnable } = await anthropicTools(w.gateway, { trajectory_id: "conv-a3", capability: w.capability });
    const params = { model: "claude-test", max_tokens: 256, tools: runnable as never };
    const first = client().beta.messages.toolRunner({ ...params, messages: [{ role: "user", content: "clean up" }] });
    await first.runUntilDone();
    expect(shown("toolu_d1")).toMatchObject({ is_error: true });
    expect(shown("toolu_d1").text).toContain("approval_required");
    expect(w.deletes).toEqual([]);

    const pending = await w.gateway.approvals.list({ state: "pending" });
    expect(pending).toHaveLength(2);
    const idOf = (name: string) => pending.find((p) => (p.arguments as { name: string }).name === name)!.id;
    await w.gateway.approvals.approve(idOf("old-a.txt"), { approver: "dana" });
    await w.gateway.approvals.deny(idOf("old-b.txt"), { approver: "dana", reason: "keep b" });

    // The model proposes both calls again, under new ids.
    const history = first.params.messages;
    script.push(
      [use("toolu_d3", "file_delete", { name: "old-a.txt" }), use("toolu_d4", "file_delete", { name: "old-b.txt" })],
      [{ type: "text", text: "done" }],
    );
    await client()
      .beta.messages.toolRunner({
        ...params,
        messages: [...(history as never[]), { role: "user", content: "decided" }],
      })
      .runUntilDone();
    expect(shown("toolu_d3")).toMatchObject({ is_error: false });
    expect(shown("toolu_d4")).toMatchObject({ is_error: true });
    expect(shown("toolu_d4").text).toContain("approval_denied");
    expect(shown("toolu_d4").text).toContain("keep b");
    expect(w.deletes).toEqual(["old-a.txt"]);
    expect([w.exists("old-a.txt"), w.exists("old-b.txt")]).toEqual([false, true]);
    expect(await w.gateway.approvals.list({ state: "pending" })).toHaveLength(0);
  });

  it("a sub-agent with an attenuated capability is refused outside its scope, as an error result", async () => {
    const w = world();
    const parent = await anthropicTools(w.gateway, { trajectory_id: "conv-p", capability: w.capability });
    const { runnable } = await anthropicTools(
      parent.run.subAgent({ rights: ["read"], objects: [`path:${join(w.root, "docs")}`] }),
    );
    script.push(
      [
        use("toolu_in", "file_view", { path: join(w.root, "docs", "notes.txt"), offset: 1, limit: 5 }),
        use("toolu_out", "file_view", { path: join(w.root, "add.sh"), offset: 1, limit: 5 }),
      ],
      [{ type: "text", text: "done" }],
    );
    await client()
      .beta.messages.toolRunner({
        model: "claude-test",
        max_tokens: 256,
        messages: [{ role: "user", content: "read" }],
        tools: runnable as never,
      })
      .runUntilDone();
    expect(shown("toolu_in").text).toContain("notes for the sub-agent");
    expect(shown("toolu_out")).toMatchObject({ is_error: true });
    expect(shown("toolu_out").text).toContain("denied");
  });

  it("an aborted runner kills the shell command its step started", async () => {
    const w = world();
    const tree = markedTree();
    script.push([use("toolu_long", "bash_execute", { command: longCommand(tree) })]);
    const { runnable } = await anthropicTools(w.gateway, { trajectory_id: "conv-x", capability: w.capability });
    const controller = new AbortController();
    const { ns } = await abortOnceRunning(
      tree,
      controller,
      client()
        .beta.messages.toolRunner(
          {
            model: "claude-test",
            max_tokens: 256,
            messages: [{ role: "user", content: "wait" }],
            tools: runnable as never,
          },
          { signal: controller.signal },
        )
        .runUntilDone(),
    );
    await expectKilled(w, tree, ns, "toolu_long");
  });
});
