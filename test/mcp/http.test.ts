/**
 * Streamable HTTP: the real SDK Client against `serveHttp` over a real gateway, raw requests
 * for bad input, and `toolgate serve --http` shutting down cleanly on SIGTERM.
 */
import { spawn } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it, onTestFinished } from "vitest";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { ElicitRequestSchema, ErrorCode, McpError, ResultSchema } from "@modelcontextprotocol/sdk/types.js";
import { createGateway } from "../../src/runtime/gateway.js";
import { openStore } from "../../src/idempotency/open.js";
import { keyRingFromMap } from "../../src/capability/keys.js";
import { createCapabilityAuthority } from "../../src/capability/authority.js";
import type { Gateway } from "../../src/runtime/types.js";
import type { Store } from "../../src/idempotency/store.js";
import { serveHttp, type HttpHandle } from "../../src/mcp/http.js";
import { projectRoot } from "../support/require.js";
import catalog from "./fixtures/notes-catalog.js";
import { executions, ids, obsOf, tempDir, textOf } from "./support.js";

let notes: string;
let store: Store;
let gateway: Gateway;
let http: HttpHandle;
const clients: Client[] = [];

async function start(options: { keys?: boolean; maxRequestBytes?: number } = {}) {
  store = await openStore("memory:");
  const keys = options.keys ? keyRingFromMap({ k1: Buffer.alloc(32, 9).toString("base64") }, "test") : undefined;
  gateway = createGateway({ tools: catalog, store, audit: false, ...(keys ? { keys } : {}) });
  http = await serveHttp(gateway, { port: 0, ...(options.maxRequestBytes ? { maxRequestBytes: options.maxRequestBytes } : {}) });
  return keys;
}

async function connect(options: { headers?: Record<string, string>; elicit?: boolean } = {}): Promise<Client> {
  const client = new Client({ name: "http-test", version: "1.0.0" }, { capabilities: options.elicit ? { elicitation: { form: {} } } : {} });
  if (options.elicit) client.setRequestHandler(ElicitRequestSchema, () => ({ action: "accept" }));
  await client.connect(new StreamableHTTPClientTransport(http.url, options.headers ? { requestInit: { headers: options.headers } } : undefined));
  clients.push(client);
  return client;
}

const post = (body: string, headers: Record<string, string> = {}) =>
  fetch(http.url, { method: "POST", headers: { "content-type": "application/json", accept: "application/json, text/event-stream", ...headers }, body });

beforeEach(() => {
  notes = tempDir("http");
  process.env.NOTES_DIR = notes;
});
afterEach(async () => {
  await Promise.allSettled(clients.splice(0).map((c) => c.close()));
  await http?.close();
  await gateway?.close();
});

describe("serveHttp with the SDK client", () => {
  it("lists, calls, refuses as tool results, and replays a retry with the same _meta ids", async () => {
    await start();
    const client = await connect();
    expect((await client.listTools()).tools).toHaveLength(catalog.length);
    const ok = await client.callTool({ name: "note_append", arguments: { name: "h", line: "one" }, _meta: ids("h1") });
    expect(ok.structuredContent).toEqual({ name: "h", lines: 1 });
    const again = await client.callTool({ name: "note_append", arguments: { name: "h", line: "one" }, _meta: ids("h1") });
    expect(obsOf(again).replay).toBe(true);
    const bad = await client.callTool({ name: "note_append", arguments: { name: "H!", line: "one" } });
    expect([bad.isError, obsOf(bad).error?.code]).toEqual([true, "invalid_arguments"]);
    expect(executions(notes)).toEqual(["note_append h one"]);
  });

  it("takes the capability from Authorization: Bearer", async () => {
    const keys = await start({ keys: true });
    const token = createCapabilityAuthority({ keys: keys! }).issue({ rights: ["read"], objects: ["tool:note_read"], ttl_ms: 60_000 });
    const anonymous = await connect();
    const denied = await anonymous.callTool({ name: "note_read", arguments: { name: "a" } });
    expect(obsOf(denied).error?.code).toBe("denied");
    expect(textOf(denied).split("\n").at(-1)).toBe('Over MCP, send the token in _meta["toolgate/capability"] of tools/call or an Authorization: Bearer header.');
    const bearer = await connect({ headers: { authorization: `Bearer ${token}` } });
    expect((await bearer.callTool({ name: "note_read", arguments: { name: "a" } })).structuredContent).toEqual({ name: "a", text: null });
  });

  it("asks for approval by elicitation on the call's own stream", async () => {
    await start();
    const client = await connect({ elicit: true });
    const result = await client.callTool({ name: "note_delete", arguments: { name: "z" } });
    expect(result.structuredContent).toEqual({ name: "z", deleted: false });
    expect(executions(notes)).toEqual(["note_delete z"]);
  });

  it("keeps serving after malformed JSON, non-JSON-RPC, oversized bodies, unknown sessions and unknown methods", async () => {
    await start({ maxRequestBytes: 2048 });
    const client = await connect();
    const parse = await post("{not json");
    expect([parse.status, ((await parse.json()) as { error: { code: number } }).error.code]).toEqual([400, -32700]);
    const notRpc = await post(JSON.stringify({ hello: "world" }));
    expect([notRpc.status, ((await notRpc.json()) as { error: { message: string } }).error.message]).toEqual([400, "Parse error: Invalid JSON-RPC message"]);
    const big = await post(JSON.stringify({ jsonrpc: "2.0", id: 1, method: "initialize", params: { pad: "x".repeat(5000) } }));
    expect(big.status).toBe(413);
    const lost = await post(JSON.stringify({ jsonrpc: "2.0", id: 2, method: "tools/list" }), { "mcp-session-id": "no-such-session" });
    expect([lost.status, await lost.json()]).toMatchInlineSnapshot(`
      [
        404,
        {
          "error": {
            "code": -32001,
            "message": "Session not found: no-such-session is unknown or closed; start a new session with initialize",
          },
          "id": null,
          "jsonrpc": "2.0",
        },
      ]
    `);
    const noSession = await post(JSON.stringify({ jsonrpc: "2.0", id: 3, method: "tools/list" }));
    expect(noSession.status).toBe(400);
    await expect(client.request({ method: "tools/destroy", params: {} }, ResultSchema)).rejects.toSatisfy((e) => e instanceof McpError && e.code === ErrorCode.MethodNotFound);
    expect((await client.callTool({ name: "note_read", arguments: { name: "a" } })).isError).toBeUndefined();
    expect(http.sessions).toBe(1);
  });

  it("finishes a call the client abandoned, so the retry gets the stored result", async () => {
    await start();
    const client = await connect();
    const abort = new AbortController();
    const pending = client.callTool({ name: "note_slow", arguments: { name: "s", delay_ms: 800 }, _meta: ids("gone-1") }, undefined, { signal: abort.signal }).catch((e: Error) => e);
    await new Promise((r) => setTimeout(r, 150));
    abort.abort();
    expect(await pending).toBeInstanceOf(Error);
    const other = await connect();
    let retry = await other.callTool({ name: "note_slow", arguments: { name: "s", delay_ms: 800 }, _meta: ids("gone-1") });
    while (obsOf(retry).error?.code === "in_flight") {
      await new Promise((r) => setTimeout(r, 100));
      retry = await other.callTool({ name: "note_slow", arguments: { name: "s", delay_ms: 800 }, _meta: ids("gone-1") });
    }
    expect([retry.structuredContent, obsOf(retry).replay]).toEqual([{ name: "s", lines: 1 }, true]);
    expect(executions(notes)).toEqual(["note_slow s"]);
  });
});

/** `toolgate serve --http` on an ephemeral port, killed if a test fails midway. */
async function spawnServe(args: string[], env: Record<string, string> = {}) {
  const child = spawn(process.execPath, ["--import", "tsx", join(projectRoot, "src/cli/main.ts"), "serve", "--http", "127.0.0.1:0", ...args], {
    cwd: projectRoot,
    env: { ...process.env, ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
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
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  return { child, url, exited, out };
}

describe("toolgate serve --http", () => {
  it("on SIGTERM finishes the in-flight call, answers it, and exits 0", async () => {
    const dir = tempDir("sigterm");
    const { child, url, exited, out } = await spawnServe(["--catalog", "test/mcp/fixtures/notes-catalog.ts", "--workspace", dir], { NOTES_DIR: dir });
    const client = new Client({ name: "sigterm-test", version: "1.0.0" });
    await client.connect(new StreamableHTTPClientTransport(new URL(url)));
    const pending = client.callTool({ name: "note_slow", arguments: { name: "t", delay_ms: 1000 }, _meta: ids("term-1") });
    await new Promise((r) => setTimeout(r, 300));
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
    const pending = client.callTool({ name: "bash_execute", arguments: { command: "sleep 25; date >> slow.txt", timeout_ms: 60000 }, _meta: ids("term-abort-1") });
    await new Promise((r) => setTimeout(r, 1500));
    child.kill("SIGTERM");
    const result = await pending;
    expect(result.isError).toBe(true);
    expect(obsOf(result).error?.code).toBe("tool_failed");
    expect(obsOf(result).error?.detail?.record_state).toBe("IN_DOUBT");
    expect(obsOf(result).error?.message).toMatch(/^bash_execute was still running when toolgate shut down \(after its grace period\) and was aborted\./);
    expect(await exited).toBe(0);
    expect(out.stdout).toBe("");
    expect(out.stderr).not.toContain("not written");
    expect(existsSync(join(dir, "slow.txt"))).toBe(false);
    const audit = readFileSync(join(dir, ".toolgate/audit.jsonl"), "utf8").trimEnd().split("\n").map((l) => JSON.parse(l) as { call_id: string; outcome: string; record_state: string });
    expect(audit).toEqual([expect.objectContaining({ call_id: "term-abort-1", outcome: "tool_failed", record_state: "IN_DOUBT" })]);
    await client.close().catch(() => {});
  });
});
