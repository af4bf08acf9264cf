/**
 * The order assistant inside the AI SDK's own agent loop: generateText with the SDK's mock
 * language model calls the catalog through `toolgate/ai-sdk`, with the model's tool-call ids as
 * call ids: a search, the ISO-date refusal corrected, another tenant's order not found, and a
 * refund paused for the SDK's approval, approved, run once and replayed on a retried step.
 */
import { generateText, stepCountIs, type ModelMessage } from "ai";
import type { MockLanguageModelV4 } from "ai/test";
import { afterEach, describe, expect, it } from "vitest";
import { aiSdkTools } from "../../../src/adapters/ai-sdk.js";
import { scripted } from "../../support/ai-sdk-model.js";
import { HOUR, ordersGateway } from "./support.js";

const open: Array<ReturnType<typeof ordersGateway>> = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((g) => g.gateway.close()));
});

/** The tool results the model was shown in its last request, by tool-call id. */
function shownToModel(model: MockLanguageModelV4): Map<string, { type: string; value: unknown }> {
  const prompt = model.doGenerateCalls.at(-1)!.prompt;
  const shown = new Map<string, { type: string; value: unknown }>();
  for (const m of prompt)
    if (m.role === "tool")
      for (const p of m.content) if (p.type === "tool-result") shown.set(p.toolCallId, p.output as never);
  return shown;
}

describe("the order assistant through toolgate/ai-sdk in generateText", () => {
  it("corrects its date from toolgate's refusal, refunds once after the SDK's approval, and cannot see globex's order", async () => {
    const g = ordersGateway();
    open.push(g);
    const capability = g.authority.issue({ rights: ["read", "write"], objects: ["tenant:acme"], ttl_ms: HOUR });
    const refund = { order_id: "o_1", amount_cents: 1250, reason: "lamp flickers again" };
    const model = scripted([
      { call: [["s1", "search_customer_orders", { customer_id: "c_7", since: "2026-2-3" }]] },
      { call: [["s2", "search_customer_orders", { customer_id: "c_7", since: "2026-02-03" }]] },
      { call: [["d1", "get_order_details", { order_id: "o_1" }]] },
      { call: [["r1", "refund_order", refund]] },
      { text: "refunded 12.50 on o_1" },
    ]);
    const { tools } = await aiSdkTools(g.gateway, { trajectory_id: "chat-orders", capability, approver: "alice" });
    const prompt: ModelMessage[] = [{ role: "user", content: "refund the lamp on c_7's newest order" }];
    const first = await generateText({ model, tools, messages: prompt, stopWhen: stepCountIs(6) });
    const shown = shownToModel(model);
    expect(shown.get("s1")!.type).toBe("error-text");
    expect(String(shown.get("s1")!.value)).toContain("since must be YYYY-MM-DD; received 2026-2-3; example 2026-03-05");
    expect(String(shown.get("s2")!.value)).toContain("orders of c_7, newest first");
    expect(String(shown.get("d1")!.value)).toContain("refundable 12.50");
    // The refund waits for the application's person: one request, nothing refunded yet.
    const requests = first.content.filter((p) => p.type === "tool-approval-request");
    expect(requests.map((r) => r.toolCall.toolCallId)).toEqual(["r1"]);
    expect(await g.gateway.approvals.list({ state: "pending" })).toHaveLength(1);
    const refunds = () =>
      (g.db().prepare("SELECT count(*) AS n FROM refunds WHERE order_id = 'o_1'").get() as { n: number }).n;
    expect(refunds()).toBe(2);

    const resumed: ModelMessage[] = [
      ...prompt,
      ...first.response.messages,
      {
        role: "tool",
        content: [{ type: "tool-approval-response", approvalId: requests[0]!.approvalId, approved: true }],
      },
    ];
    const second = await generateText({ model, tools, messages: resumed, stopWhen: stepCountIs(3) });
    expect(second.text).toBe("refunded 12.50 on o_1");
    expect(String(shownToModel(model).get("r1")!.value)).toMatch(
      /refund r_[0-9a-f]{10} of 12\.50 issued on order o_1; refundable balance now 0\.00; order version 7/,
    );
    expect(refunds()).toBe(3);
    expect((await g.gateway.approvals.list()).map((a) => [a.state, a.approver])).toEqual([["consumed", "cli:alice"]]);

    // Another tenant's run: the same order is not found, as a tool result the model reads.
    const globex = g.authority.issue({ rights: ["read"], objects: ["tenant:globex"], ttl_ms: HOUR });
    const other = scripted([{ call: [["x1", "get_order_details", { order_id: "o_1" }]] }, { text: "not mine" }]);
    const { tools: theirs } = await aiSdkTools(g.gateway, { trajectory_id: "chat-globex", capability: globex });
    await generateText({ model: other, tools: theirs, prompt: "show o_1", stopWhen: stepCountIs(3) });
    expect(String(shownToModel(other).get("x1")!.value)).toContain("order_id not found");
  });
});
