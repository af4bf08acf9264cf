/**
 * One gateway in front of several real MCP servers, from a config in Claude Desktop's format:
 * server-filesystem, server-memory (behind a logging wrapper that can kill it mid-call) and
 * server-everything over stdio, plus a Streamable HTTP upstream started here.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openGuardStore } from "../../../src/idempotency/open-guard.js";
import type { GuardStore } from "../../../src/idempotency/guard-store.js";
import { createGateway } from "../../../src/runtime/gateway.js";
import { openStore } from "../../../src/idempotency/open.js";
import { serveHttp } from "../../../src/mcp/transports/http.js";
import notesCatalog from "../fixtures/notes-catalog.js";
import { ids, obsOf, tempDir, textOf } from "../support.js";
import {
  everythingServer,
  filesystemServer,
  memoryServer,
  startAggregate,
  wrapper,
  type Aggregate,
} from "./aggregate-support.js";

const node = process.execPath;
const dir = tempDir("aggregate");
const files = join(dir, "files");
mkdirSync(files);
writeFileSync(join(files, "hello.txt"), "hello from the filesystem server\n");
const notes = join(dir, "notes");
mkdirSync(notes);
const upstreamLog = join(dir, "memory-upstream.jsonl");

let guard: GuardStore;
let http: Awaited<ReturnType<typeof serveHttp>>;
let agg: Aggregate;

/** tools/call requests server-memory received, by tool name. */
const memoryCalls = () =>
  (existsSync(upstreamLog) ? readFileSync(upstreamLog, "utf8").split("\n").filter(Boolean) : [])
    .map((l) => JSON.parse(l) as { method?: string; params?: { name: string } })
    .filter((m) => m.method === "tools/call")
    .map((m) => m.params!.name);

beforeAll(async () => {
  process.env.TG_TEST_HOST_SECRET = "host-only-value";
  process.env.NOTES_DIR = notes;
  guard = await openGuardStore("memory:");
  http = await serveHttp(createGateway({ tools: notesCatalog, store: await openStore("memory:"), audit: false }), {
    port: 0,
  });
  agg = await startAggregate(
    dir,
    {
      mcpServers: {
        filesystem: {
          command: node,
          args: [filesystemServer, files],
          toolgate: { include: ["read_text_file", "list_directory"] },
        },
        memory: {
          command: node,
          args: [wrapper, node, memoryServer],
          env: {
            MEMORY_FILE_PATH: join(dir, "memory.jsonl"),
            WRAPPER_LOG: upstreamLog,
            WRAPPER_DIE_ON: '"Doomed"',
          },
          toolgate: { exclude: ["delete_*", "create_relations"] },
        },
        everything: {
          command: node,
          args: [everythingServer, "stdio"],
          env: { TG_NAMED_IN_CONFIG: "visible" },
          toolgate: { namespace: "ev", include: ["echo", "get-env"] },
        },
        notes: { type: "http", url: http.url.href, toolgate: { include: ["note_read", "note_append"] } },
      },
    },
    guard,
  );
}, 120_000);

afterAll(async () => {
  await agg?.close();
  await http?.close();
  await guard?.close();
  delete process.env.TG_TEST_HOST_SECRET;
});

describe("an aggregate of four servers from a Claude Desktop config", () => {
  it("lists every server's tools namespaced, include and exclude honoured", async () => {
    const { tools } = await agg.client.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual([
      "ev__echo",
      "ev__get-env",
      "filesystem__list_directory",
      "filesystem__read_text_file",
      "memory__add_observations",
      "memory__create_entities",
      "memory__open_nodes",
      "memory__read_graph",
      "memory__search_nodes",
      "notes__note_append",
      "notes__note_read",
    ]);
    expect(agg.logs.at(-1)).toBe(
      "toolgate proxy: 11 tools from 4 servers (filesystem, memory, everything, notes); 0 held for review",
    );
  });

  it("routes each call to its own server under the upstream's own name", async () => {
    const read = await agg.client.callTool({
      name: "filesystem__read_text_file",
      arguments: { path: join(files, "hello.txt") },
    });
    expect(textOf(read)).toContain("hello from the filesystem server");
    const echo = await agg.client.callTool({ name: "ev__echo", arguments: { message: "hi" } });
    expect(textOf(echo)).toContain("Echo: hi");
    const note = await agg.client.callTool({
      name: "notes__note_append",
      arguments: { name: "n", line: "over http" },
      _meta: ids("n1"),
    });
    expect(note.structuredContent).toEqual({ name: "n", lines: 1 });
  });

  it("starts a stdio upstream with only the environment its entry names", async () => {
    const env = textOf(await agg.client.callTool({ name: "ev__get-env", arguments: {} }));
    expect(env).toContain("TG_NAMED_IN_CONFIG");
    expect(env).not.toContain("TG_TEST_HOST_SECRET");
    expect(env).not.toContain("host-only-value");
  });

  it("a write's isError answer is recorded and replayed, not in doubt", async () => {
    const args = { observations: [{ entityName: "Nobody", contents: ["x"] }] };
    const first = await agg.client.callTool({ name: "memory__add_observations", arguments: args, _meta: ids("e1") });
    expect(first.isError).toBe(true);
    expect(obsOf(first).error?.code).toBe("tool_failed");
    expect(obsOf(first).error?.detail).toEqual({ reason: "tool_answered_failure" });
    expect(textOf(first)).toContain("Nobody");
    const again = await agg.client.callTool({ name: "memory__add_observations", arguments: args, _meta: ids("e1") });
    expect(obsOf(again).error?.detail).toEqual({ reason: "tool_answered_failure", replay: true });
    expect(memoryCalls().filter((n) => n === "add_observations")).toHaveLength(1);
    const records = await agg.store.records.list({ now: Date.now() });
    expect(records.find((r) => r.tool === "memory__add_observations")?.state).toBe("COMPLETED");
  });

  it("an upstream killed mid-call leaves that call in doubt and only that one", async () => {
    const args = { observations: [{ entityName: "Doomed", contents: ["x"] }] };
    const died = await agg.client.callTool({ name: "memory__add_observations", arguments: args, _meta: ids("k1") });
    expect(obsOf(died).error?.detail?.record_state).toBe("IN_DOUBT");
    const inDoubt = (await agg.store.records.list({ state: "IN_DOUBT", now: Date.now() })).map((r) => r.tool);
    expect(inDoubt).toEqual(["memory__add_observations"]);
    // The other servers never noticed; server-memory is started again by its next call.
    expect((await agg.client.callTool({ name: "ev__echo", arguments: { message: "still" } })).isError).toBeFalsy();
    const made = await agg.client.callTool({
      name: "memory__create_entities",
      arguments: { entities: [{ name: "Ada", entityType: "person", observations: [] }] },
      _meta: ids("k2"),
    });
    expect(made.isError).toBeFalsy();
    expect(obsOf(made).error).toBeUndefined();
  });

  it("refuses at start two tools published under one name, naming both origins", async () => {
    await expect(
      startAggregate(
        dir,
        {
          mcpServers: {
            a: { command: node, args: [everythingServer, "stdio"], toolgate: { namespace: "", include: ["echo"] } },
            b: { command: node, args: [everythingServer, "stdio"], toolgate: { namespace: "", include: ["echo"] } },
          },
        },
        guard,
      ),
    ).rejects.toThrow(/two tools would be published as "echo": a's "echo" and b's "echo"; give one of the servers/);
  }, 60_000);

  it("refuses at start an include that names a tool the server does not serve, with the closest name", async () => {
    await expect(
      startAggregate(
        dir,
        { mcpServers: { ev: { command: node, args: [everythingServer, "stdio"], toolgate: { include: ["ecko"] } } } },
        guard,
      ),
    ).rejects.toThrow(/mcpServers\.ev\.toolgate\.include names "ecko", which ev does not serve; did you mean "echo"\?/);
  }, 60_000);
});
