/**
 * Long calls through MCP with real clients: a bash_execute that runs past a second sends
 * progress notifications to a request with a progressToken, and a client that cancels its
 * tools/call gets the command's whole process tree killed. The SDK v2 client in both revisions
 * and the SDK v1 client (2025-11-25), over stdio (serve spawned from source) and Streamable HTTP.
 */
import { chmodSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { Client, StreamableHTTPClientTransport, type Transport } from "@modelcontextprotocol/client";
import { getDefaultEnvironment, StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { Client as V1Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport as V1Stdio } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport as V1Http } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { createGateway } from "../../../src/runtime/gateway.js";
import { openStore } from "../../../src/idempotency/open.js";
import { createCodingCatalog } from "../../../src/tools/catalog.js";
import { serveHttp } from "../../../src/mcp/transports/http.js";
import { markedTree, pollUntil } from "../../support/procs.js";
import { binaryAvailable } from "../../support/require.js";
import { tempDir } from "../support.js";

const cleanup: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const done of cleanup.splice(0).reverse()) await done().catch(() => {});
});

/** A workspace the root sandbox's unprivileged user may use. */
function workspace(name: string): string {
  const base = tempDir(`long-${name}`);
  const ws = join(base, "ws");
  mkdirSync(ws);
  chmodSync(base, 0o755);
  return ws;
}

interface Caller {
  call(
    command: string,
    opts: { onprogress?: (p: { progress: number; message?: string }) => void; signal?: AbortSignal },
  ): Promise<unknown>;
}

type ClientKind = "v2 2025-11-25" | "v2 2026-07-28" | "v1";

function serveCommand(ws: string) {
  const root = join(import.meta.dirname, "../../..");
  return {
    command: process.execPath,
    args: ["--import", "tsx", join(root, "src/cli/main.ts"), "serve", "--workspace", ws, "--store", "memory:"],
    cwd: root,
    env: {
      ...getDefaultEnvironment(),
      XDG_STATE_HOME: process.env.XDG_STATE_HOME!,
      XDG_CONFIG_HOME: process.env.XDG_CONFIG_HOME!,
    },
  };
}

async function connect(kind: ClientKind, over: "stdio" | "http", ws: string): Promise<Caller> {
  let url: URL | null = null;
  if (over === "http") {
    const gateway = createGateway({
      tools: createCodingCatalog({ workspace: ws, sandbox: { warn: () => {} } }),
      store: await openStore("memory:"),
      audit: false,
    });
    const http = await serveHttp(gateway, { port: 0, warn: () => {} });
    url = http.url;
    cleanup.push(async () => {
      await http.close();
      await gateway.close({ grace_ms: 0 });
    });
  }
  const args = (command: string) => ({ name: "bash_execute", arguments: { command, timeout_ms: 120_000 } });
  if (kind === "v1") {
    const c = new V1Client({ name: "long-v1", version: "1.0.0" });
    await c.connect(url ? new V1Http(url) : new V1Stdio({ ...serveCommand(ws), stderr: "pipe" }));
    cleanup.push(() => c.close());
    return { call: (command, opts) => c.callTool(args(command), undefined, { ...opts, timeout: 120_000 }) };
  }
  const transport: Transport = url
    ? new StreamableHTTPClientTransport(url)
    : new StdioClientTransport({ ...serveCommand(ws), stderr: "pipe" });
  const c = new Client(
    { name: `long-${kind}`, version: "1.0.0" },
    kind === "v2 2026-07-28" ? { versionNegotiation: { mode: { pin: "2026-07-28" } } } : {},
  );
  await c.connect(transport);
  cleanup.push(() => c.close());
  return { call: (command, opts) => c.callTool(args(command), { ...opts, timeout: 120_000 }) };
}

const kinds: ClientKind[] = ["v2 2025-11-25", "v2 2026-07-28", "v1"];

describe.runIf(binaryAvailable("bwrap"))("long calls over MCP", () => {
  describe.each(["stdio", "http"] as const)("over %s", (over) => {
    describe.each(kinds)("a %s client", { timeout: 90_000 }, (kind) => {
      it("receives progress while bash_execute runs past a second", async () => {
        const ws = workspace(`progress-${over}`);
        const c = await connect(kind, over, ws);
        const seen: { progress: number; message?: string }[] = [];
        const pending = c.call("echo hi; while [ ! -e go ]; do sleep 0.05; done", {
          onprogress: (p) => void seen.push(p),
        });
        expect(await pollUntil(() => seen.length >= 1, 30_000), "a progress notification arrived").toBe(true);
        writeFileSync(join(ws, "go"), "");
        const result = (await pending) as { isError?: boolean; structuredContent?: { exit_code?: number } };
        expect(result.isError).toBeFalsy();
        expect(seen[0]!.progress).toBeGreaterThanOrEqual(1000);
        expect(seen[0]!.message).toMatch(/^running for \d+ s; 3 B of stdout and 0 B of stderr so far$/);
      });

      it("a cancelled bash_execute leaves no process of its tree", async () => {
        const ws = workspace(`cancel-${over}`);
        const c = await connect(kind, over, ws);
        const tree = markedTree();
        const abort = new AbortController();
        const pending = c.call(`${tree.escapee} sleep 300`, { signal: abort.signal }).catch((e: unknown) => e);
        const ns = await tree.running(pending);
        abort.abort();
        await pending;
        await tree.expectGone(ns);
      });
    });
  });
});
