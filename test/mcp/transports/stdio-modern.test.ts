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
import { executions, obsOf, readLines, tempDir, until } from "../support.js";

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
  readLines(stdout, (line) => answers.push(line as Line));
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

/**
 * A 2025-11-25 opening connects its server to the line transport directly (stdio.ts): lines the
 * client writes in one chunk with its initialize are served in order, none lost to the handover,
 * and a tools/call among them is answered before close() returns.
 */
describe("a 2025-11-25 connection over stdio, raw lines", () => {
  const initialize = {
    protocolVersion: "2025-11-25",
    capabilities: {},
    clientInfo: { name: "raw-legacy", version: "1.0.0" },
  };
  const line = (message: Record<string, unknown>) => JSON.stringify({ jsonrpc: "2.0", ...message }) + "\n";

  it("serves initialize, a bad line, tools/list and tools/call written in one chunk, in order", async () => {
    stdin.write(
      line({ id: 1, method: "initialize", params: initialize }) +
        line({ method: "notifications/initialized" }) +
        "{not json\n" +
        line({ id: 2, method: "tools/list", params: {} }) +
        line({ id: 3, method: "tools/call", params: { name: "note_read", arguments: { name: "a" } } }),
    );
    await until(() => answers.some((a) => a.id === 3));
    // The bad line is answered as it is read; the requests in the order they came.
    expect(answers.filter((a) => a.id === null).map((a) => a.error?.code)).toEqual([-32700]);
    const served = answers.filter((a) => a.id !== null);
    expect(served.map((a) => a.id)).toEqual([1, 2, 3]);
    expect(served[0]!.result?.protocolVersion).toBe("2025-11-25");
    expect((served[1]!.result?.tools as { name: string }[]).map((t) => t.name)).toContain("note_read");
    expect(obsOf(served[2]!.result).ok).toBe(true);
  });

  it("answers a tools/call sent with the opening before close() returns", async () => {
    stdin.write(
      line({ id: 1, method: "initialize", params: initialize }) +
        line({ method: "notifications/initialized" }) +
        line({ id: 2, method: "tools/call", params: { name: "note_slow", arguments: { name: "s", delay_ms: 300 } } }),
    );
    await until(() => answers.some((a) => a.id === 1));
    await handle.close();
    expect(answers.find((a) => a.id === 2)?.result).toBeDefined();
  });

  it("leaves an initialize that claims a revision in _meta to the SDK's entry, which serves an unknown claim as 2025-11-25", async () => {
    const answer = await ask(1, "initialize", {
      ...initialize,
      _meta: { "io.modelcontextprotocol/protocolVersion": "2099-01-01" },
    });
    expect(answer.result?.protocolVersion).toBe("2025-11-25");
    const listed = await ask(2, "tools/list", {});
    expect((listed.result?.tools as { name: string }[]).map((t) => t.name)).toContain("note_read");
  });
});
