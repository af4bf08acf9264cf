/**
 * A 2026-07-28 held call that ends while its round waits for the retry (`job_gives_up`: its tool
 * asked under a signal of its own and did not wait for the answer), raw rounds from an SDK v2
 * client's transport over stdio (`serve --catalog`, spawned from source) and Streamable HTTP (in
 * process): the retry is answered with the call's observation, not left waiting; its state is
 * spent by it.
 */
import { describe, expect, it } from "vitest";
import { obsOf, tempDir } from "../support.js";
import { rawRequest } from "../raw-transport.js";
import { heldClient, heldServer } from "./held-serve.js";

const ENVELOPE = {
  "io.modelcontextprotocol/protocolVersion": "2026-07-28",
  "io.modelcontextprotocol/clientCapabilities": { elicitation: { form: {} } },
  "io.modelcontextprotocol/clientInfo": { name: "held-ends", version: "1" },
};

describe("a held call that ends while its round waits", { timeout: 60_000 }, () => {
  it.each(["stdio", "http"] as const)("over %s: its retry gets the call's observation", async (over) => {
    const c = await heldClient(await heldServer(over, tempDir("held-ends")));
    const call = { name: "job_gives_up", arguments: { name: over } };
    const first = await rawRequest(c, "tools/call", call, ENVELOPE);
    expect(first.result, JSON.stringify(first)).toMatchObject({
      resultType: "input_required",
      inputRequests: { branch: { method: "elicitation/create" } },
    });
    const retry = {
      ...call,
      requestState: first.result!.requestState,
      inputResponses: { branch: { action: "accept", content: { branch: "main" } } },
    };
    const answered = await rawRequest(c, "tools/call", retry, ENVELOPE);
    expect(obsOf(answered.result).ok, JSON.stringify(answered)).toBe(true);
    expect(answered.result?.structuredContent).toEqual({ name: over, answer: "none: it did not wait" });
    const again = await rawRequest(c, "tools/call", retry, ENVELOPE);
    expect(again.error?.code).toBe(-32602);
    expect(again.error?.message).toContain("params.requestState names no call this server holds");
  });
});
