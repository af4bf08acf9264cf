/**
 * A 2026-07-28 client without tasks calling an A3 tool that runs long and asks questions once it
 * runs (`job_purge`): the approval round and the question rounds after it are one held call. The
 * SDK v2 client's own multi-round-trip driver answers both (over stdio, `serve --catalog` spawned
 * from source, and Streamable HTTP in process); raw rounds show each bound as before — the
 * approval to its approval id, a question's retry to the caller, tool, canonical arguments and
 * capability — and that the call runs once.
 */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { APPROVAL_INPUT_KEY } from "../../../src/mcp/server/input-required.js";
import { rawRequest } from "../raw-transport.js";
import { tempDir } from "../support.js";
import { heldClient, heldServer } from "./held-serve.js";

const ENVELOPE = {
  "io.modelcontextprotocol/protocolVersion": "2026-07-28",
  "io.modelcontextprotocol/clientCapabilities": { elicitation: { form: {} } },
  "io.modelcontextprotocol/clientInfo": { name: "held-approval", version: "1" },
};

const purged = (notes: string) => {
  const file = join(notes, "purged.log");
  return existsSync(file) ? readFileSync(file, "utf8").split("\n").filter(Boolean) : [];
};

describe("an A3 call that asks once approved, to a 2026-07-28 client without tasks", { timeout: 90_000 }, () => {
  it.each(["stdio", "http"] as const)(
    "over %s: the SDK client's handler approves, then answers the call's question; it runs once",
    async (over) => {
      const notes = tempDir("held-approval");
      // Without keys serveHttp leaves approvals to the CLI; this client's person may approve here.
      const c = await heldClient(await heldServer(over, notes, { approveVia: "both" }));
      const asked: string[] = [];
      c.setRequestHandler("elicitation/create", (request) => {
        const message = String((request.params as { message?: unknown }).message);
        asked.push(message);
        const content: Record<string, string> = message.startsWith("Approve") ? {} : { branch: `old-${over}` };
        return { action: "accept", content };
      });
      const r = await c.callTool({ name: "job_purge", arguments: { name: over } });
      expect(r.isError, JSON.stringify(r)).toBeFalsy();
      expect(JSON.stringify(r.structuredContent)).toContain(`old-${over}`);
      expect(asked).toEqual([expect.stringContaining("Approve a destructive call (A3)?"), "Which branch to purge?"]);
      expect(purged(notes)).toEqual([`${over} {"action":"accept","content":{"branch":"old-${over}"}}`]);
    },
  );

  it("raw rounds: the approval bound to its id, the question to the call; a replayed approval runs nothing again", async () => {
    const notes = tempDir("held-approval-raw");
    const c = await heldClient(await heldServer("stdio", notes));
    const call = { name: "job_purge", arguments: { name: "raw" } };
    const first = await rawRequest(c, "tools/call", call, ENVELOPE);
    expect(first.result, JSON.stringify(first)).toMatchObject({
      resultType: "input_required",
      inputRequests: { [APPROVAL_INPUT_KEY]: expect.anything() },
    });
    const approvalId = first.result!.requestState as string;
    expect(approvalId).toMatch(/^ap_/);
    const approve = { requestState: approvalId, inputResponses: { [APPROVAL_INPUT_KEY]: { action: "accept" } } };
    const approved = await rawRequest(c, "tools/call", { ...call, ...approve }, ENVELOPE);
    // Approved and running: its question, under a held call's state.
    expect(approved.result, JSON.stringify(approved)).toMatchObject({
      resultType: "input_required",
      inputRequests: { branch: { method: "elicitation/create" } },
    });
    const state = approved.result!.requestState as string;
    expect(state).toMatch(/^tg-held\./);
    const answer = { branch: { action: "accept", content: { branch: "gone" } } };
    const other = await rawRequest(
      c,
      "tools/call",
      { name: "job_purge", arguments: { name: "other" }, requestState: state, inputResponses: answer },
      ENVELOPE,
    );
    expect(other.error?.code).toBe(-32602);
    expect(other.error?.message).toContain("this retry's arguments differs from the one of the call that asked");
    const done = await rawRequest(c, "tools/call", { ...call, requestState: state, inputResponses: answer }, ENVELOPE);
    expect(JSON.stringify(done.result)).toContain("gone");
    // The approval round replayed: the call already ran on that approval; its stored result, nothing run again.
    const replayed = await rawRequest(c, "tools/call", { ...call, ...approve }, ENVELOPE);
    expect(replayed.result?._meta).toMatchObject({ "toolgate/observation": { ok: true, replay: true } });
    expect(purged(notes)).toEqual(['raw {"action":"accept","content":{"branch":"gone"}}']);
  });
});
