/**
 * Both protocol revisions, first-class: the SDK v2 client in the 2025-11-25 revision (initialize,
 * a session, elicitation as a server-to-client request) and pinned to 2026-07-28 (stateless
 * requests with the `_meta` envelope, A3 approval by an input-required result and a retry), over
 * stdio (the CLI spawned from source) and over Streamable HTTP (`serveHttp` in this process).
 */
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { Client, ProtocolError, StreamableHTTPClientTransport, type Transport } from "@modelcontextprotocol/client";
import { getDefaultEnvironment, StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { createGateway } from "../../../src/runtime/gateway.js";
import { openStore } from "../../../src/idempotency/open.js";
import type { Gateway } from "../../../src/runtime/types.js";
import { serveHttp, type HttpHandle } from "../../../src/mcp/transports/http.js";
import catalog from "../fixtures/notes-catalog.js";
import { executions, notesServeCommand, obsOf, tempDir, textOf } from "../support.js";

type Era = "2025-11-25" | "2026-07-28";
type Answer = "accept" | "decline" | "none";

const cleanup: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const done of cleanup.splice(0).reverse()) await done().catch(() => {});
});

/** A v2 client in `era`; with `answer` it declares elicitation and answers every approval so. */
async function client(transport: Transport, era: Era, answer: Answer): Promise<Client> {
  const c = new Client(
    { name: `eras-${era}`, version: "1.0.0" },
    {
      capabilities: answer === "none" ? {} : { elicitation: { form: {} } },
      ...(era === "2026-07-28" ? { versionNegotiation: { mode: { pin: "2026-07-28" } } } : {}),
    },
  );
  if (answer !== "none") c.setRequestHandler("elicitation/create", () => ({ action: answer }));
  await c.connect(transport);
  cleanup.push(() => c.close());
  expect(c.getProtocolEra()).toBe(era === "2026-07-28" ? "modern" : "legacy");
  return c;
}

interface Served {
  notes: string;
  connect(era: Era, answer: Answer): Promise<Client>;
}

async function overStdio(): Promise<Served> {
  const notes = tempDir("eras-stdio");
  // One store for every process, as serve's default SQLite file is: what one connection recorded, the next reads.
  const command = notesServeCommand(notes, { store: `sqlite:${join(tempDir("eras-stdio-store"), "state.db")}` });
  return {
    notes,
    connect: (era, answer) =>
      client(
        new StdioClientTransport({
          ...command,
          env: { ...getDefaultEnvironment(), ...command.env },
          stderr: "pipe",
        }),
        era,
        answer,
      ),
  };
}

let gateway: Gateway | undefined;
let http: HttpHandle | undefined;

async function overHttp(): Promise<Served> {
  const notes = tempDir("eras-http");
  process.env.NOTES_DIR = notes;
  gateway = createGateway({ tools: catalog, store: await openStore("memory:"), audit: false });
  http = await serveHttp(gateway, { port: 0, approveVia: "both", warn: () => {} });
  const handle = http;
  const gw = gateway;
  cleanup.push(async () => {
    await handle.close();
    await gw.close();
  });
  return { notes, connect: (era, answer) => client(new StreamableHTTPClientTransport(handle.url), era, answer) };
}

const transports = { stdio: overStdio, http: overHttp } as const;

describe.each(["stdio", "http"] as const)("over %s", (name) => {
  describe.each(["2025-11-25", "2026-07-28"] as const)("a %s client", { timeout: 60_000 }, (era) => {
    it("lists, calls, gets a bad call as a tool result and an unknown tool as -32602 with the names", async () => {
      const served = await transports[name]();
      const c = await served.connect(era, "none");
      const { tools } = await c.listTools();
      expect(tools.map((t) => t.name)).toContain("note_read");
      const read = await c.callTool({ name: "note_read", arguments: { name: "a" } });
      expect(read.isError).toBeFalsy();
      const bad = await c.callTool({ name: "note_read", arguments: { name: 42 } });
      expect(bad.isError).toBe(true);
      expect(obsOf(bad).error?.code).toBe("invalid_arguments");
      const unknown = await c.callTool({ name: "note_raed", arguments: {} }).catch((e: unknown) => e);
      expect(unknown).toBeInstanceOf(ProtocolError);
      expect((unknown as ProtocolError).code).toBe(-32602);
      expect((unknown as ProtocolError).message).toContain('There is no tool named "note_raed"');
      expect((unknown as ProtocolError).message).toContain("note_read");
    });

    it("runs an A3 call the person approves, and not one they decline", async () => {
      const served = await transports[name]();
      const yes = await served.connect(era, "accept");
      const approved = await yes.callTool({ name: "note_delete", arguments: { name: "kept" } });
      expect(approved.isError).toBeFalsy();
      expect(executions(served.notes)).toEqual(["note_delete kept"]);
      const no = await served.connect(era, "decline");
      const denied = await no.callTool({ name: "note_delete", arguments: { name: "other" } });
      expect(denied.isError).toBe(true);
      expect(obsOf(denied).error?.code).toBe("approval_denied");
      expect(executions(served.notes)).toEqual(["note_delete kept"]);
    });

    it("runs a write sent twice without toolgate ids twice, from one client and from the next", async () => {
      // README, "Ids and capabilities": without ids every request is a new logical call. A
      // 2026-07-28 request has a server of its own, so its call id must not restart at mcp-call-1.
      const served = await transports[name]();
      const first = await served.connect(era, "none");
      const args = { name: "twice", line: "same" };
      const a = await first.callTool({ name: "note_append", arguments: args });
      const b = await first.callTool({ name: "note_append", arguments: args });
      const next = await served.connect(era, "none");
      const c = await next.callTool({ name: "note_append", arguments: args });
      for (const r of [a, b, c]) expect(obsOf(r).replay).toBeFalsy();
      expect(executions(served.notes)).toEqual(Array(3).fill("note_append twice same"));
    });

    it("runs a write sent again in a new connection under the client's own trajectory_id, without a call id", async () => {
      // README, "Ids and capabilities": without a call id every request is a new logical call, also
      // under a trajectory the client names. A connection's call ids (mcp-call-1, 2, …) start again
      // in the next one: under the client's trajectory they must not name its earlier calls.
      const served = await transports[name]();
      const args = { name: "again", line: "same" };
      const _meta = { "toolgate/trajectory_id": "run-42" };
      const results = [];
      for (let i = 0; i < 2; i++) {
        const c = await served.connect(era, "none");
        results.push(await c.callTool({ name: "note_append", arguments: args, _meta }));
      }
      for (const r of results) expect(obsOf(r).replay).toBeFalsy();
      expect(executions(served.notes)).toEqual(Array(2).fill("note_append again same"));
    });

    it("leaves an A3 call pending for the CLI when the client cannot be asked", async () => {
      const served = await transports[name]();
      const c = await served.connect(era, "none");
      const pending = await c.callTool({ name: "note_delete", arguments: { name: "p" } });
      expect(obsOf(pending).error?.code).toBe("approval_required");
      expect(textOf(pending)).toContain("toolgate approvals approve");
      expect(executions(served.notes)).toEqual([]);
    });
  });
});
