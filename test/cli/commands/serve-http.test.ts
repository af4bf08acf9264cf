/**
 * `toolgate serve --http` shutting down cleanly on SIGTERM (in-flight calls answered, or aborted
 * after the grace), and its HTTP bounds and audit as set from the command line.
 */
import { spawn } from "node:child_process";
import net from "node:net";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it, onTestFinished } from "vitest";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { defaultStateDir } from "../../../src/state/location.js";
import { projectRoot } from "../../support/require.js";
import { executions, ids, obsOf, started, tempDir, until } from "../../mcp/support.js";
import { inSession, open, request } from "../../mcp/transports/raw-http.js";

/** A raw TCP connection to the loopback `port` that sends nothing; `answer` is what arrives. */
async function connected(port: number): Promise<net.Socket & { answer: string }> {
  const s = Object.assign(net.connect(port, "127.0.0.1"), { answer: "" });
  onTestFinished(() => void s.destroy());
  s.setEncoding("utf8");
  s.on("data", (d: string) => (s.answer += d));
  s.on("error", () => {});
  await new Promise((resolve) => s.once("connect", resolve));
  return s;
}

/** `toolgate serve --http` on an ephemeral port, killed if a test fails midway. */
async function spawnServe(args: string[], env: Record<string, string> = {}) {
  const child = spawn(
    process.execPath,
    ["--import", "tsx", join(projectRoot, "src/cli/main.ts"), "serve", "--http", "127.0.0.1:0", ...args],
    {
      cwd: projectRoot,
      env: { ...process.env, ...env },
      stdio: ["ignore", "pipe", "pipe"],
    },
  );
  const out = { stdout: "", stderr: "" };
  child.stdout.on("data", (d: Buffer) => (out.stdout += d));
  onTestFinished(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
  });
  const url = await new Promise<string>((resolve, reject) => {
    child.stderr.on("data", (d: Buffer) => {
      out.stderr += d;
      const m = /on (http:\/\/[^\s;]+)/.exec(out.stderr);
      if (m) resolve(m[1]!);
    });
    child.once("exit", (code) => reject(new Error(`serve exited ${code}: ${out.stderr}`)));
  });
  // "close", not "exit": at "exit" the last of stdout and stderr may still be unread.
  const exited = new Promise<number | null>((resolve) => child.once("close", (code) => resolve(code)));
  return { child, url, exited, out };
}

// Each test starts the CLI from source (node + tsx): most of a minute on a loaded two-core machine.
describe("toolgate serve --http", { timeout: 180_000 }, () => {
  it("on SIGTERM finishes the in-flight call, answers it, and exits 0", async () => {
    const dir = tempDir("sigterm");
    // The grace is only an upper bound (serve exits as soon as the call is done): generous, for a loaded machine.
    const { child, url, exited, out } = await spawnServe(
      ["--catalog", "test/mcp/fixtures/notes-catalog.ts", "--workspace", dir, "--grace-ms", "60000"],
      { NOTES_DIR: dir },
    );
    const client = new Client({ name: "sigterm-test", version: "1.0.0" });
    await client.connect(new StreamableHTTPClientTransport(new URL(url)));
    const pending = client.callTool({
      name: "note_slow",
      arguments: { name: "t", delay_ms: 1000 },
      _meta: ids("term-1"),
    });
    await until(() => started(dir).length > 0); // the handler is running: the call is in flight
    child.kill("SIGTERM");
    const result = await pending;
    expect(result.structuredContent).toEqual({ name: "t", lines: 1 });
    expect(await exited).toBe(0);
    expect(out.stdout).toBe("");
    expect(out.stderr).toContain("SIGTERM: finishing in-flight calls");
    expect(executions(dir)).toEqual(["note_slow t"]);
    await client.close().catch(() => {});
  });

  it("on SIGTERM aborts a call still running after the grace period: the client gets an in-doubt answer, the audit line and record are written", async () => {
    const dir = tempDir("sigterm-abort");
    const { child, url, exited, out } = await spawnServe(["--workspace", dir, "--grace-ms", "500"]);
    const client = new Client({ name: "sigterm-abort-test", version: "1.0.0" });
    await client.connect(new StreamableHTTPClientTransport(new URL(url)));
    const pending = client.callTool({
      name: "bash_execute",
      arguments: { command: "touch started; sleep 25; date >> slow.txt", timeout_ms: 60000 },
      _meta: ids("term-abort-1"),
    });
    await until(() => existsSync(join(dir, "started"))); // the command is running in its sandbox
    child.kill("SIGTERM");
    const result = await pending;
    expect(result.isError).toBe(true);
    expect(obsOf(result).error?.code).toBe("tool_failed");
    expect(obsOf(result).error?.detail?.record_state).toBe("IN_DOUBT");
    expect(obsOf(result).error?.message).toMatch(
      /^bash_execute was still running when toolgate shut down \(after its grace period\) and was aborted\./,
    );
    expect(await exited).toBe(0);
    expect(out.stdout).toBe("");
    expect(out.stderr).not.toContain("not written");
    expect(existsSync(join(dir, "slow.txt"))).toBe(false);
    const audit = readFileSync(join(defaultStateDir(dir), "audit.jsonl"), "utf8")
      .trimEnd()
      .split("\n")
      .map((l) => JSON.parse(l) as { call_id: string; outcome: string; record_state: string });
    expect(audit).toEqual([
      expect.objectContaining({ call_id: "term-abort-1", outcome: "tool_failed", record_state: "IN_DOUBT" }),
    ]);
    await client.close().catch(() => {});
  });
  it("bounds connections per peer with --max-connections-per-peer, and writes the audit line of a call whose arguments cannot be serialised", async () => {
    const dir = tempDir("serve-bounds");
    const { url, child, exited } = await spawnServe(
      ["--catalog", "test/mcp/fixtures/notes-catalog.ts", "--workspace", dir, "--max-connections-per-peer", "2"],
      { NOTES_DIR: dir },
    );
    const endpoint = new URL(url);
    const held = [await connected(Number(endpoint.port)), await connected(Number(endpoint.port))];
    const extra = await connected(Number(endpoint.port));
    await new Promise((resolve) => (extra.destroyed ? resolve(null) : extra.once("close", resolve)));
    expect(extra.answer).toMatch(
      /^HTTP\/1\.1 503 Service Unavailable\r\n[^]*too many connections from this machine's clients \(every loopback client counts as one peer\): 2 are open, the most --max-connections-per-peer allows \(2\)/,
    );
    await Promise.all(held.map((s) => new Promise((resolve) => (s.once("close", resolve), s.destroy()))));
    // The server sees the two close a moment after this side does: a refused attempt is retried.
    let sid: string | undefined;
    while (sid === undefined) sid = await open(endpoint).catch(() => undefined);
    const nested = "[".repeat(100_000) + "]".repeat(100_000);
    const deep = await request(endpoint, {
      headers: inSession(sid),
      body: `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"note_read","arguments":{"name":${nested}},"_meta":{"toolgate/call_id":"deep-1"}}}`,
    });
    expect(deep.body).toContain('"code":"invalid_arguments"');
    const ok = await request(endpoint, {
      headers: inSession(sid),
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: 8,
        method: "tools/call",
        params: { name: "note_read", arguments: { name: "a" }, _meta: { "toolgate/call_id": "read-1" } },
      }),
    });
    expect(ok.body).toContain('"ok":true');
    child.kill("SIGTERM");
    expect(await exited).toBe(0);
    const audit = readFileSync(join(defaultStateDir(dir), "audit.jsonl"), "utf8")
      .trimEnd()
      .split("\n")
      .map((l) => JSON.parse(l) as { call_id: string; outcome: string; arguments_unrecorded?: string });
    expect(audit).toEqual([
      expect.objectContaining({
        call_id: "deep-1",
        outcome: "invalid_arguments",
        argument_tokens: 0,
        arguments_unrecorded: expect.stringMatching(
          /^arguments nested 100001 levels deep, deeper than the audit serialises/,
        ),
      }),
      expect.objectContaining({ call_id: "read-1", outcome: "ok" }),
    ]);
  });
});
