/**
 * `toolgate serve` as a client sees it: the real SDK Client spawns the CLI from source
 * (node + tsx, no build) and talks MCP over stdio.
 */
import { spawn } from "node:child_process";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it, onTestFinished } from "vitest";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { getDefaultEnvironment, StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { ElicitRequestSchema, type ElicitResult } from "@modelcontextprotocol/sdk/types.js";
import { codingCatalogOptions } from "../../../src/cli/commands/serve.js";
import { prepareState } from "../../../src/cli/host/gateway-settings.js";
import { defaultStateDir } from "../../../src/state/location.js";
import { PROTECTED_DEFAULT } from "../../../src/tools/workspace.js";
import { cli } from "../../support/cli.js";
import { binaryAvailable, projectRoot } from "../../support/require.js";
import { executions, ids, obsOf, started, tempDir, textOf, until } from "../../mcp/support.js";
import { userHome } from "../../state/support.js";

const NOTES_CATALOG = join(projectRoot, "test/mcp/fixtures/notes-catalog.ts");
const open: Client[] = [];

async function serve(
  args: string[],
  options: { env?: Record<string, string>; elicit?: () => ElicitResult } = {},
): Promise<Client> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: ["--import", "tsx", join(projectRoot, "src/cli/main.ts"), "serve", ...args],
    cwd: projectRoot,
    // The per-user state folder of the test run (test/support/state-home.ts), not the real home.
    env: {
      ...getDefaultEnvironment(),
      XDG_STATE_HOME: process.env.XDG_STATE_HOME!,
      XDG_CONFIG_HOME: process.env.XDG_CONFIG_HOME!,
      ...options.env,
    },
    stderr: "pipe",
  });
  const client = new Client(
    { name: "stdio-test", version: "1.0.0" },
    { capabilities: options.elicit ? { elicitation: { form: {} } } : {} },
  );
  if (options.elicit) client.setRequestHandler(ElicitRequestSchema, options.elicit);
  await client.connect(transport);
  open.push(client);
  return client;
}

afterEach(async () => {
  await Promise.allSettled(open.splice(0).map((c) => c.close()));
});

describe("toolgate serve (default coding catalog) over stdio", { timeout: 180_000 }, () => {
  it("lists the four coding tools and runs each one's happy path", async () => {
    const ws = tempDir("ws");
    writeFileSync(join(ws, "main.py"), "def add(a, b):\n    return a + b\n");
    const client = await serve(["--workspace", ws]);
    const { tools } = await client.listTools();
    expect(tools.map((t) => [t.name, t.annotations?.readOnlyHint])).toEqual([
      ["bash_execute", false],
      ["file_edit", false],
      ["file_view", true],
      ["grep_search", true],
    ]);

    const view = await client.callTool({
      name: "file_view",
      arguments: { path: join(ws, "main.py"), offset: 1, limit: 10 },
    });
    expect(view.isError).toBeUndefined();
    expect(textOf(view)).toContain("return a + b");

    const edit = await client.callTool({
      name: "file_edit",
      arguments: { path: join(ws, "main.py"), old_str: "a + b", new_str: "b + a" },
    });
    expect(edit.isError).toBeUndefined();
    expect(obsOf(edit).authority).toBe("A2");

    const grep = await client.callTool({ name: "grep_search", arguments: { pattern: "b \\+ a", path: ws } });
    expect(grep.isError).toBeUndefined();
    expect(textOf(grep)).toContain("main.py");

    if (binaryAvailable("bwrap")) {
      const bash = await client.callTool({ name: "bash_execute", arguments: { command: "grep -c 'b + a' main.py" } });
      expect(bash.isError).toBeUndefined();
      expect(bash.structuredContent).toMatchObject({ exit_code: 0 });
    }
  });

  it("refuses invalid arguments and a path outside the workspace as tool results", async () => {
    const ws = tempDir("ws");
    const client = await serve(["--workspace", ws]);
    const invalid = await client.callTool({
      name: "file_view",
      arguments: { path: join(ws, "x"), offset: 0, limit: 10 },
    });
    expect(invalid.isError).toBe(true);
    expect(obsOf(invalid).error?.code).toBe("invalid_arguments");
    const outside = await client.callTool({
      name: "file_view",
      arguments: { path: "/etc/passwd", offset: 1, limit: 10 },
    });
    expect(outside.isError).toBe(true);
    expect(textOf(outside)).not.toContain("root:");
  });

  it("answers a tools/call over 4 MiB with a tool result for that request, telling the model to send smaller arguments", async () => {
    const ws = tempDir("ws-big");
    const client = await serve(["--workspace", ws]);
    // Without the request's id the answer would not reach this call, and it would wait for the client's timeout.
    const big = await client.callTool(
      { name: "file_edit", arguments: { path: join(ws, "a.txt"), old_str: "x", new_str: "y".repeat(5 * 2 ** 20) } },
      undefined,
      { timeout: 30_000 },
    );
    expect(big.isError).toBe(true);
    expect(textOf(big)).toContain("Send smaller arguments");
    const { tools } = await client.listTools(); // the session goes on
    expect(tools).toHaveLength(4);
  });

  it("needs a capability when started with --keys and takes one from _meta", async () => {
    const ws = tempDir("ws");
    const keyFile = join(tempDir("keys"), "keys.json"); // outside the workspace: serve refuses a key file inside it
    writeFileSync(keyFile, JSON.stringify({ k1: Buffer.alloc(32, 3).toString("base64") }));
    const { createCapabilityAuthority } = await import("../../../src/capability/authority.js");
    const { loadKeys } = await import("../../../src/capability/keys.js");
    const token = createCapabilityAuthority({ keys: loadKeys({ file: keyFile }) }).issue({
      rights: ["read"],
      objects: [`path:${ws}`],
      ttl_ms: 600_000,
    });
    writeFileSync(join(ws, "a.txt"), "alpha\n");
    const client = await serve(["--workspace", ws, "--keys", keyFile]);
    const denied = await client.callTool({
      name: "file_view",
      arguments: { path: join(ws, "a.txt"), offset: 1, limit: 5 },
    });
    expect(obsOf(denied).error?.code).toBe("denied");
    const allowed = await client.callTool({
      name: "file_view",
      arguments: { path: join(ws, "a.txt"), offset: 1, limit: 5 },
      _meta: { "toolgate/capability": token },
    });
    expect(allowed.isError).toBeUndefined();
    const write = await client.callTool({
      name: "file_edit",
      arguments: { path: join(ws, "a.txt"), old_str: "alpha", new_str: "beta" },
      _meta: { "toolgate/capability": token },
    });
    expect(obsOf(write).error?.code).toBe("denied");
  });

  it.runIf(binaryAvailable("bwrap"))(
    "on SIGTERM aborts a bash_execute still running after --grace-ms: in-doubt answer, audit line written, the command's effect never happens",
    async () => {
      const ws = tempDir("ws-sigterm");
      const client = await serve(["--workspace", ws, "--grace-ms", "500"]);
      const pid = (client.transport as StdioClientTransport).pid!;
      const pending = client.callTool({
        name: "bash_execute",
        arguments: { command: "touch started; sleep 25; date >> slow.txt", timeout_ms: 60000 },
        _meta: ids("stdio-term-1"),
      });
      await until(() => existsSync(join(ws, "started"))); // the command is running in its sandbox
      process.kill(pid, "SIGTERM");
      const result = await pending;
      expect(result.isError).toBe(true);
      expect(obsOf(result).error?.code).toBe("tool_failed");
      expect(obsOf(result).error?.detail?.record_state).toBe("IN_DOUBT");
      const audit = readFileSync(join(defaultStateDir(ws), "audit.jsonl"), "utf8")
        .trimEnd()
        .split("\n")
        .map((l) => JSON.parse(l) as { call_id: string; outcome: string; record_state: string });
      expect(audit).toEqual([
        expect.objectContaining({ call_id: "stdio-term-1", outcome: "tool_failed", record_state: "IN_DOUBT" }),
      ]);
      expect(existsSync(join(ws, "slow.txt"))).toBe(false);
    },
  );
});

describe("toolgate serve --catalog (TypeScript module, no build) over stdio", { timeout: 180_000 }, () => {
  it("replays a retry with the same _meta ids across a restart of the server (SQLite store)", async () => {
    const notes = tempDir("notes");
    const args = ["--catalog", NOTES_CATALOG, "--workspace", notes];
    const first = await serve(args, { env: { NOTES_DIR: notes } });
    const a = await first.callTool({
      name: "note_append",
      arguments: { name: "n", line: "once" },
      _meta: ids("restart-1"),
    });
    expect(a.structuredContent).toEqual({ name: "n", lines: 1 });
    await first.close();
    const second = await serve(args, { env: { NOTES_DIR: notes } });
    const b = await second.callTool({
      name: "note_append",
      arguments: { name: "n", line: "once" },
      _meta: ids("restart-1"),
    });
    expect(b.structuredContent).toEqual({ name: "n", lines: 1 });
    expect(obsOf(b).replay).toBe(true);
    expect(executions(notes)).toEqual(["note_append n once"]);
  });

  it("reports in-doubt and approval-required refusals as tool results", async () => {
    const notes = tempDir("notes");
    const client = await serve(["--catalog", NOTES_CATALOG, "--workspace", notes, "--store", "memory:"], {
      env: { NOTES_DIR: notes },
    });
    await client.callTool({ name: "note_fail", arguments: { name: "x" }, _meta: ids("d1") });
    const doubt = await client.callTool({ name: "note_fail", arguments: { name: "x" }, _meta: ids("d1") });
    expect([doubt.isError, obsOf(doubt).error?.code]).toEqual([true, "in_doubt"]);
    const held = await client.callTool({ name: "note_delete", arguments: { name: "x" } });
    expect([held.isError, obsOf(held).error?.code]).toEqual([true, "approval_required"]);
    expect(textOf(held)).toContain("toolgate approvals approve");
  });

  it("asks by elicitation: accept runs the destructive call once, decline runs nothing", async () => {
    const notes = tempDir("notes");
    writeFileSync(join(notes, "old.txt"), "bye\n");
    const yes = await serve(["--catalog", NOTES_CATALOG, "--workspace", notes], {
      env: { NOTES_DIR: notes },
      elicit: () => ({ action: "accept" }),
    });
    const done = await yes.callTool({ name: "note_delete", arguments: { name: "old" } });
    expect(done.structuredContent).toEqual({ name: "old", deleted: true });
    const no = await serve(["--catalog", NOTES_CATALOG, "--workspace", notes], {
      env: { NOTES_DIR: notes },
      elicit: () => ({ action: "decline" }),
    });
    const refused = await no.callTool({ name: "note_delete", arguments: { name: "other" } });
    expect(obsOf(refused).error?.code).toBe("approval_denied");
    expect(executions(notes)).toEqual(["note_delete old"]);
  });

  it("finishes a call whose client disconnected, so the retry gets the stored result", async () => {
    const notes = tempDir("notes");
    const args = ["--catalog", NOTES_CATALOG, "--workspace", notes];
    const leaving = await serve(args, { env: { NOTES_DIR: notes } });
    const pending = leaving
      .callTool({ name: "note_slow", arguments: { name: "s", delay_ms: 500 }, _meta: ids("slow-1") })
      .catch((e: Error) => e);
    await until(() => started(notes).length > 0); // the handler is running: the call is in flight
    await leaving.close();
    // Closing ends the server's stdin: it finishes the call and writes the answer, which this
    // client may or may not still read; either way the effect happened once and is recorded.
    await pending;
    const back = await serve(args, { env: { NOTES_DIR: notes } });
    let retry = await back.callTool({
      name: "note_slow",
      arguments: { name: "s", delay_ms: 500 },
      _meta: ids("slow-1"),
    });
    // The first server may still be finishing (the client gives it 2 s before SIGTERM, which
    // finishes the call too); in_flight says so. The handler's 500 ms keep that well within reach.
    while (obsOf(retry).error?.code === "in_flight") {
      await new Promise((r) => setTimeout(r, 200));
      retry = await back.callTool({ name: "note_slow", arguments: { name: "s", delay_ms: 500 }, _meta: ids("slow-1") });
    }
    expect(retry.structuredContent).toEqual({ name: "s", lines: 1 });
    expect(obsOf(retry).replay).toBe(true);
    expect(executions(notes)).toEqual(["note_slow s"]);
  });
});

describe("toolgate serve over raw stdio: bad input", { timeout: 180_000 }, () => {
  it("answers malformed JSON, non-JSON-RPC, an oversized message and an unknown method, and keeps serving", async () => {
    const notes = tempDir("raw");
    const child = spawn(
      process.execPath,
      [
        "--import",
        "tsx",
        join(projectRoot, "src/cli/main.ts"),
        "serve",
        "--catalog",
        NOTES_CATALOG,
        "--workspace",
        notes,
        "--store",
        "memory:",
      ],
      {
        cwd: projectRoot,
        env: { ...process.env, NOTES_DIR: notes },
        stdio: ["pipe", "pipe", "pipe"],
      },
    );
    onTestFinished(() => {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
    });
    const replies: Array<{ id: unknown; error?: { code: number; message: string }; result?: unknown }> = [];
    let buffered = "";
    child.stdout.on("data", (d: Buffer) => {
      buffered += d.toString("utf8");
      let nl;
      while ((nl = buffered.indexOf("\n")) !== -1) {
        replies.push(JSON.parse(buffered.slice(0, nl)));
        buffered = buffered.slice(nl + 1);
      }
    });
    // "close", not "exit": at "exit" the last of the server's stdout may still be unread.
    const exited = new Promise<number | null>((resolve) => child.once("close", resolve));
    const send = (line: string) => child.stdin.write(line + "\n");
    send(
      JSON.stringify({
        jsonrpc: "2.0",
        id: 1,
        method: "initialize",
        params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "raw", version: "1" } },
      }),
    );
    await until(() => replies.some((r) => r.id === 1));
    send(JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }));
    send('{"jsonrpc":"2.0","id":2,"method":"tools/list"');
    send(JSON.stringify({ id: 3, method: "tools/list" }));
    send(
      JSON.stringify({
        jsonrpc: "2.0",
        id: 4,
        method: "tools/call",
        params: { name: "note_append", arguments: { name: "big", line: "x".repeat(5 * 1024 * 1024) } },
      }),
    );
    send(JSON.stringify({ jsonrpc: "2.0", id: 5, method: "resources/destroy", params: {} }));
    send(
      JSON.stringify({
        jsonrpc: "2.0",
        id: 6,
        method: "tools/call",
        params: { name: "note_append", arguments: { name: "ok", line: "still serving" } },
      }),
    );
    await until(() => replies.some((r) => r.id === 6));
    child.stdin.end();
    expect(await exited).toBe(0);
    const errors = replies.filter((r) => r.error).map((r) => [r.id, r.error!.code, r.error!.message.slice(0, 60)]);
    expect(errors).toMatchInlineSnapshot(`
      [
        [
          null,
          -32700,
          "Parse error: the line is not valid JSON (Expected ',' or '}'",
        ],
        [
          3,
          -32600,
          "Invalid Request: not a JSON-RPC 2.0 message; expected {"json",
        ],
        [
          5,
          -32601,
          "Method not found",
        ],
      ]
    `);
    // The oversized call is answered for its own id, as a tool result the model reads.
    expect(replies.find((r) => r.id === 4)?.result).toMatchObject({
      isError: true,
      content: [{ type: "text", text: expect.stringContaining("Send smaller arguments") }],
    });
    expect(replies.find((r) => r.id === 6)?.result).toMatchObject({ structuredContent: { name: "ok", lines: 1 } });
    expect(executions(notes)).toEqual(["note_append ok still serving"]);
  });
});

describe("toolgate serve over raw stdio: a client that writes and hangs up", { timeout: 180_000 }, () => {
  it("still answers the calls it sent before closing stdin, then exits 0", async () => {
    const notes = tempDir("hangup");
    const child = spawn(
      process.execPath,
      [
        "--import",
        "tsx",
        join(projectRoot, "src/cli/main.ts"),
        "serve",
        "--catalog",
        NOTES_CATALOG,
        "--workspace",
        notes,
      ],
      {
        cwd: projectRoot,
        env: { ...process.env, NOTES_DIR: notes },
        stdio: ["pipe", "pipe", "ignore"],
      },
    );
    onTestFinished(() => {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
    });
    let stdout = "";
    child.stdout.on("data", (d: Buffer) => (stdout += d));
    // "close", not "exit": at "exit" the last of the server's stdout may still be unread.
    const exited = new Promise<number | null>((resolve) => child.once("close", resolve));
    child.stdin.end(
      [
        {
          jsonrpc: "2.0",
          id: 1,
          method: "initialize",
          params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "hangup", version: "1" } },
        },
        { jsonrpc: "2.0", method: "notifications/initialized" },
        {
          jsonrpc: "2.0",
          id: 2,
          method: "tools/call",
          params: { name: "note_slow", arguments: { name: "h", delay_ms: 300 } },
        },
      ]
        .map((m) => JSON.stringify(m) + "\n")
        .join(""),
    );
    expect(await exited).toBe(0);
    const answers = stdout
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as { id: number; result?: { structuredContent?: unknown } });
    expect(answers.find((a) => a.id === 2)?.result?.structuredContent).toEqual({ name: "h", lines: 1 });
    expect(executions(notes)).toEqual(["note_slow h"]);
  });
});

describe("toolgate serve --git-writable", () => {
  it("takes the repository's .git out of the coding catalog's protected list; its hooks and config stay in it", () => {
    const ws = tempDir("ws");
    const { protectedPaths } = codingCatalogOptions(ws, prepareState({ workspace: ws, env: userHome() }), true);
    expect(PROTECTED_DEFAULT[0]).toBe(".git");
    expect(protectedPaths).toEqual(PROTECTED_DEFAULT.filter((p) => p !== ".git"));
    expect(protectedPaths).toEqual(expect.arrayContaining([".git/hooks", ".git/config"]));
    expect(codingCatalogOptions(ws, prepareState({ workspace: ws, env: userHome() }))).toEqual({ workspace: ws });
  });

  it("with --catalog it is refused before anything starts, saying why", async () => {
    const r = await cli("serve", "--workspace", tempDir("ws"), "--catalog", NOTES_CATALOG, "--git-writable");
    expect([r.code, r.out]).toEqual([2, ""]);
    expect(r.err).toContain(
      "--git-writable configures the built-in coding tools and means nothing with --catalog (a catalog module sets its own protectedPaths); drop one of the two",
    );
  });
});
