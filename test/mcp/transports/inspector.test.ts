/**
 * An outside client: the MCP Inspector CLI (`@modelcontextprotocol/inspector-cli` 1.0.3, the
 * `--cli` mode of the Inspector, which runs on Node 20) lists and calls tools on `toolgate serve`.
 * It runs with cwd `test/`: the Inspector CLI locates its own package.json as `../package.json`
 * relative to the working directory. It is built on `@modelcontextprotocol/sdk` 1.x, so it speaks
 * the 2025-11-25 revision only (initialize, then a session over HTTP); the 2026-07-28 revision is
 * tried with the SDK v2 client (eras.test.ts) and raw requests (http-modern, http-hostile-2026).
 */
import { execFile } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, describe, expect, it } from "vitest";
import { createGateway } from "../../../src/runtime/gateway.js";
import { openStore } from "../../../src/idempotency/open.js";
import { serveHttp, type HttpHandle } from "../../../src/mcp/transports/http.js";
import type { Gateway } from "../../../src/runtime/types.js";
import { projectRoot } from "../../support/require.js";
import catalog from "../fixtures/notes-catalog.js";
import { tempDir } from "../support.js";

const run = promisify(execFile);
const inspector = join(projectRoot, "node_modules/.bin/mcp-inspector-cli");
const serve = [process.execPath, "--import", "tsx", join(projectRoot, "src/cli/main.ts"), "serve"];

async function inspect(args: string[]): Promise<Record<string, unknown>> {
  const { stdout } = await run(inspector, ["--cli", ...args], { cwd: join(projectRoot, "test"), timeout: 90_000 });
  return JSON.parse(stdout) as Record<string, unknown>;
}

let http: HttpHandle | undefined;

/** The Inspector's arguments for note_append over Streamable HTTP, with `extra` tool arguments. */
const appendOverHttp = (...extra: string[]) => [
  http!.url.href,
  "--transport",
  "http",
  "--method",
  "tools/call",
  "--tool-name",
  "note_append",
  "--tool-arg",
  "name=insp",
  "line=hi",
  ...extra,
];
let gateway: Gateway | undefined;
afterAll(async () => {
  await http?.close();
  await gateway?.close();
});

describe("MCP Inspector CLI against toolgate serve", { timeout: 180_000 }, () => {
  it("lists the coding tools over stdio", async () => {
    const ws = tempDir("inspector");
    const listed = (await inspect([...serve, "--workspace", ws, "--method", "tools/list"])) as {
      tools: Array<{ name: string; annotations: Record<string, boolean> }>;
    };
    expect(listed.tools.map((t) => t.name)).toEqual(["bash_execute", "file_edit", "file_view", "grep_search"]);
    expect(listed.tools[2]!.annotations).toMatchObject({ readOnlyHint: true });
  });

  it("calls a tool over stdio, and gets a refusal as an isError result", async () => {
    const ws = tempDir("inspector");
    writeFileSync(join(ws, "a.txt"), "inspected line\n");
    const ok = (await inspect([
      ...serve,
      "--workspace",
      ws,
      "--method",
      "tools/call",
      "--tool-name",
      "file_view",
      "--tool-arg",
      `path=${join(ws, "a.txt")}`,
      "offset=1",
      "limit=5",
    ])) as { structuredContent: { content: string }; isError?: boolean };
    expect(ok.isError).toBeUndefined();
    expect(ok.structuredContent.content).toContain("inspected line");
    const refused = (await inspect([
      ...serve,
      "--workspace",
      ws,
      "--method",
      "tools/call",
      "--tool-name",
      "file_view",
      "--tool-arg",
      `path=${join(ws, "a.txt")}`,
      "offset=1",
      "limit=5",
      "mode=fast",
    ])) as { isError?: boolean; content: Array<{ text: string }> };
    expect(refused.isError).toBe(true);
    expect(refused.content[0]!.text).toContain("unknown field: mode");
  });

  it("calls a tool over stdio with toolgate ids as --tool-metadata, which the Inspector sends as strings (the turn too)", async () => {
    const ws = tempDir("inspector");
    writeFileSync(join(ws, "a.txt"), "inspected line\n");
    const call = [
      ...serve,
      "--workspace",
      ws,
      "--method",
      "tools/call",
      "--tool-name",
      "file_view",
      "--tool-arg",
      `path=${join(ws, "a.txt")}`,
      "offset=1",
      "limit=5",
    ];
    const ok = (await inspect([
      ...call,
      "--tool-metadata",
      "toolgate/trajectory_id=insp-1",
      "toolgate/call_id=c-1",
      "toolgate/turn=2",
    ])) as { isError?: boolean; _meta: Record<string, { call_id: string }> };
    expect(ok.isError).toBeUndefined();
    expect(ok._meta["toolgate/observation"]!.call_id).toBe("c-1");
  });

  it("lists and calls over Streamable HTTP", async () => {
    process.env.NOTES_DIR = tempDir("inspector-notes");
    gateway = createGateway({ tools: catalog, store: await openStore("memory:"), audit: false });
    http = await serveHttp(gateway, { port: 0 });
    const listed = (await inspect([http.url.href, "--transport", "http", "--method", "tools/list"])) as {
      tools: unknown[];
    };
    expect(listed.tools).toHaveLength(catalog.length);
    const called = (await inspect(appendOverHttp())) as { structuredContent: unknown };
    expect(called.structuredContent).toEqual({ name: "insp", lines: 1 });
  });

  it("gets an invalid call over Streamable HTTP as an isError result naming the field", async () => {
    const before = http!.sessions;
    const refused = (await inspect(appendOverHttp("mode=fast"))) as {
      isError?: boolean;
      content: Array<{ text: string }>;
    };
    expect(refused.isError).toBe(true);
    expect(refused.content[0]!.text).toContain("unknown field: mode");
    // A 2025-11-25 client: it opened a session, and left it to idle out (it sends no DELETE).
    expect(http!.sessions).toBe(before + 1);
  });
});
