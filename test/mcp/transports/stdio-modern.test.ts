/**
 * 2026-07-28 over stdio, raw lines as a hand-written client sends them: a connection opened with
 * `server/discover` is served per request with the `_meta` envelope; an A3 call's approval is an
 * input-required result and its retry; malformed lines, a request without its envelope and an
 * unknown method each get a JSON-RPC error, and the connection keeps serving.
 */
import { PassThrough } from "node:stream";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createGateway } from "../../../src/runtime/gateway.js";
import { openStore } from "../../../src/idempotency/open.js";
import type { Gateway } from "../../../src/runtime/types.js";
import { serveStdio, type StdioHandle } from "../../../src/mcp/transports/stdio.js";
import { APPROVAL_INPUT_KEY } from "../../../src/mcp/server/input-required.js";
import catalog from "../fixtures/notes-catalog.js";
import { executions, obsOf, tempDir, until } from "../support.js";

const ENVELOPE = {
  "io.modelcontextprotocol/protocolVersion": "2026-07-28",
  "io.modelcontextprotocol/clientCapabilities": { elicitation: { form: {} } },
  "io.modelcontextprotocol/clientInfo": { name: "raw-stdio", version: "1.0.0" },
};

interface Line {
  id: number | null;
  result?: Record<string, unknown>;
  error?: { code: number; message: string };
}

let notes: string;
let gateway: Gateway;
let handle: StdioHandle;
let stdin: PassThrough;
let answers: Line[];

beforeEach(async () => {
  notes = tempDir("stdio-modern");
  process.env.NOTES_DIR = notes;
  gateway = createGateway({ tools: catalog, store: await openStore("memory:"), audit: false });
  stdin = new PassThrough();
  const stdout = new PassThrough();
  answers = [];
  let buffered = "";
  stdout.on("data", (chunk: Buffer) => {
    buffered += chunk.toString("utf8");
    for (let nl = buffered.indexOf("\n"); nl !== -1; nl = buffered.indexOf("\n")) {
      answers.push(JSON.parse(buffered.slice(0, nl)) as Line);
      buffered = buffered.slice(nl + 1);
    }
  });
  handle = await serveStdio(gateway, { stdin, stdout, warn: () => {} });
});
afterEach(async () => {
  stdin.end();
  await handle.close();
  await gateway.close();
});

async function ask(id: number, method: string, params: Record<string, unknown>): Promise<Line> {
  stdin.write(JSON.stringify({ jsonrpc: "2.0", id, method, params }) + "\n");
  await until(() => answers.some((a) => a.id === id));
  return answers.find((a) => a.id === id)!;
}

describe("a 2026-07-28 connection over stdio", () => {
  it("discovers, lists, and approves an A3 call through input-required and its retry", async () => {
    const discovered = await ask(1, "server/discover", { _meta: ENVELOPE });
    expect(discovered.result?.supportedVersions).toEqual(["2026-07-28"]);
    const listed = await ask(2, "tools/list", { _meta: ENVELOPE });
    expect((listed.result?.tools as { name: string }[]).map((t) => t.name)).toContain("note_delete");
    const call = { name: "note_delete", arguments: { name: "s" }, _meta: ENVELOPE };
    const first = await ask(3, "tools/call", call);
    expect(first.result?.resultType).toBe("input_required");
    const state = first.result?.requestState as string;
    const retry = await ask(4, "tools/call", {
      ...call,
      inputResponses: { [APPROVAL_INPUT_KEY]: { action: "accept" } },
      requestState: state,
    });
    expect(obsOf(retry.result).ok).toBe(true);
    expect(executions(notes)).toEqual(["note_delete s"]);
  });

  it("answers bad lines, a request without its envelope and an unknown method, and keeps serving", async () => {
    await ask(1, "server/discover", { _meta: ENVELOPE });
    stdin.write("{not json\n");
    await until(() => answers.some((a) => a.error?.code === -32700));
    const bare = await ask(2, "tools/list", {});
    expect(bare.error?.code).toBe(-32602);
    expect(bare.error?.message).toContain('params._meta["io.modelcontextprotocol/protocolVersion"]');
    const unknown = await ask(3, "tools/destroy", { _meta: ENVELOPE });
    expect(unknown.error?.code).toBe(-32601);
    const read = await ask(4, "tools/call", { name: "note_read", arguments: { name: "a" }, _meta: ENVELOPE });
    expect(obsOf(read.result).ok).toBe(true);
  });
});
