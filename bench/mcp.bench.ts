/**
 * MCP round trips over stdio, same SDK v2 Client, same run, each row in both protocol revisions
 * (2025-11-25: initialize; 2026-07-28: the client pinned to it, every request with its `_meta` envelope):
 * - `toolgate serve --catalog` with a no-op read tool vs a bare SDK v2 McpServer with the same tool (goal ≤ 1.10×);
 * - a no-op write (A2: idempotency key claimed and settled in the default SQLite store) vs the bare server (goal ≤
 * 1.3×);
 * - `toolgate proxy` in front of the bare server vs calling the bare server directly.
 * Both servers are child processes with default settings (SQLite store and audit trail in the
 * state folder of a temporary workspace, with XDG_STATE_HOME in that run's temporary folder). toolgate runs as it
 * ships: `src/` compiled by tsc (tsconfig.build.json)
 * into a private folder for this run, started with plain `node`, like the bare server's `.mjs`.
 * Not under tsx: tsx transpiles with esbuild's keepNames, which wraps every closure the call
 * path creates in an Object.defineProperty, about a quarter of the gateway's CPU per call that a
 * user of the package never pays. The catalog module is still TypeScript loaded through tsx, as a
 * user's would be. A last row runs both servers in process over the SDK's InMemoryTransport
 * (real gateway from the same build, memory store, no audit), which separates the boundary's own
 * cost from process and I/O noise.
 */
import { execFileSync } from "node:child_process";
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { Client } from "@modelcontextprotocol/client";
import { getDefaultEnvironment, StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { InMemoryTransport, McpServer, type Server } from "@modelcontextprotocol/server";
import { z } from "zod";
import type * as OpenModule from "../src/idempotency/open.js";
import type * as ServerModule from "../src/mcp/server/server.js";
import type * as GatewayModule from "../src/runtime/gateway.js";
import { noop } from "../test/mcp/fixtures/notes-catalog.js";
import type { Harness } from "./harness.js";

const root = dirname(dirname(fileURLToPath(import.meta.url)));
const bare = join(root, "bench/fixtures/bare-mcp-server.mjs");

/**
 * Compiles `src/` as `npm run build` does, into a fresh folder under node_modules/.cache (inside
 * the project, so the build resolves the project's dependencies); beside it a copy of
 * package.json, which makes the output ES modules and gives the CLI its version. Type errors
 * of a work in progress do not stop tsc from emitting; a build without the CLI is an error.
 */
function buildToolgate(): string {
  const cache = join(root, "node_modules/.cache");
  mkdirSync(cache, { recursive: true });
  const dir = mkdtempSync(join(cache, "toolgate-bench-"));
  copyFileSync(join(root, "package.json"), join(dir, "package.json"));
  const tsc = createRequire(import.meta.url).resolve("typescript/bin/tsc");
  process.stderr.write("  mcp · compiling src/ with tsc (tsconfig.build.json) …\n");
  try {
    execFileSync(
      process.execPath,
      [
        tsc,
        "-p",
        join(root, "tsconfig.build.json"),
        "--outDir",
        join(dir, "dist"),
        "--declaration",
        "false",
        "--sourceMap",
        "false",
      ],
      { stdio: "ignore" },
    );
  } catch {
    // Exit code 2: type errors, files emitted all the same.
  }
  if (!existsSync(join(dir, "dist/cli/main.js"))) {
    rmSync(dir, { recursive: true, force: true });
    throw new Error("tsc emitted no dist/cli/main.js for the MCP benchmark; run npm run build to see why");
  }
  return join(dir, "dist");
}

type Era = "2025-11-25" | "2026-07-28";

async function connect(
  era: Era,
  command: string,
  args: string[],
  cwd: string,
  env: Record<string, string> = {},
): Promise<Client> {
  const client = new Client(
    { name: "bench", version: "1.0.0" },
    era === "2026-07-28" ? { versionNegotiation: { mode: { pin: era } } } : {},
  );
  await client.connect(
    new StdioClientTransport({ command, args, cwd, env: { ...getDefaultEnvironment(), ...env }, stderr: "ignore" }),
  );
  await client.listTools(); // caches output validators on both sides alike
  return client;
}

async function connectInMemory(server: Server | McpServer): Promise<Client> {
  const [serverSide, clientSide] = InMemoryTransport.createLinkedPair();
  await server.connect(serverSide);
  const client = new Client({ name: "bench", version: "1.0.0" });
  await client.connect(clientSide);
  await client.listTools();
  return client;
}

const read = (c: Client) => () => c.callTool({ name: "noop_read", arguments: {} });

/** Fewer, smaller batches than the default: each call is a process round trip. */
const SIZE = { batch: 50, rounds: 20 } as const;

export default async function (h: Harness): Promise<void> {
  const ws = mkdtempSync(join(tmpdir(), "toolgate-bench-mcp-"));
  const clients: Client[] = [];
  let build: string | null = null;
  try {
    build = buildToolgate();
    const toolgate = [process.execPath, join(build, "cli/main.js")];
    const load = <T>(path: string) => import(pathToFileURL(join(build!, path)).href) as Promise<T>;
    for (const era of ["2025-11-25", "2026-07-28"] as const) {
      const direct = await connect(era, process.execPath, [bare], root);
      // The default state folder inside this run's temporary folder, not the real home.
      const stateHome = { XDG_STATE_HOME: join(ws, "state-home") };
      const project = join(ws, `project-${era}`);
      mkdirSync(project);
      const served = await connect(
        era,
        toolgate[0]!,
        [
          ...toolgate.slice(1),
          "serve",
          "--workspace",
          project,
          "--catalog",
          join(root, "test/mcp/fixtures/notes-catalog.ts"),
        ],
        root,
        stateHome,
      );
      const proxied = await connect(
        era,
        toolgate[0]!,
        [
          ...toolgate.slice(1),
          "proxy",
          "--store",
          `sqlite:${join(ws, `proxy-${era}.db`)}`,
          "--audit",
          join(ws, `proxy-audit-${era}.jsonl`),
          "--",
          process.execPath,
          bare,
        ],
        root,
        stateHome,
      );
      clients.push(direct, served, proxied);

      await h.compare({
        area: "mcp",
        hot_path: `tools/call no-op read (A0) over stdio, ${era}`,
        toolgate: read(served),
        peer: { name: "bare SDK v2 McpServer", fn: read(direct) },
        goal: { op: "<=", value: 1.1, label: "≤ 1.10×" },
        note: "toolgate serve --catalog, default SQLite store + audit trail",
        ...SIZE,
      });

      let n = 0;
      const write = (c: Client) => () => c.callTool({ name: "noop_write", arguments: { n: n++ } });
      await h.compare({
        area: "mcp",
        hot_path: `tools/call no-op write (A2) over stdio, ${era}`,
        toolgate: write(served),
        peer: { name: "bare SDK v2 McpServer", fn: write(direct) },
        goal: { op: "<=", value: 1.3, label: "≤ 1.3×" },
        note: "each call claims and settles an idempotency key in SQLite (WAL)",
        ...SIZE,
      });

      await h.compare({
        area: "mcp",
        hot_path: `toolgate proxy → upstream no-op read, ${era}`,
        toolgate: read(proxied),
        peer: { name: "upstream called directly", fn: read(direct) },
        note: "two stdio hops vs one",
        ...SIZE,
      });
    }

    const { openStore } = await load<typeof OpenModule>("idempotency/open.js");
    const { createMcpServer } = await load<typeof ServerModule>("mcp/server/server.js");
    const { createGateway } = await load<typeof GatewayModule>("runtime/gateway.js");
    const gateway = createGateway({ tools: [noop], store: await openStore("memory:"), audit: false });
    const bareServer = new McpServer({ name: "bare", version: "1.0.0" });
    bareServer.registerTool(
      "noop_read",
      {
        description: "Does nothing and returns ok.",
        inputSchema: z.object({}),
        outputSchema: z.object({ ok: z.boolean() }),
      },
      () => ({
        content: [{ type: "text", text: '{"ok":true}' }],
        structuredContent: { ok: true },
      }),
    );
    const inProcess = await connectInMemory(createMcpServer(gateway));
    const bareInProcess = await connectInMemory(bareServer);
    clients.push(inProcess, bareInProcess);
    await h.compare({
      area: "mcp",
      hot_path: "tools/call no-op read, in process, 2025-11-25",
      toolgate: read(inProcess),
      peer: { name: "bare SDK v2 McpServer", fn: read(bareInProcess) },
      note: "InMemoryTransport; real gateway, memory store, audit off",
    });
  } finally {
    await Promise.allSettled(clients.map((c) => c.close()));
    rmSync(ws, { recursive: true, force: true });
    if (build) rmSync(dirname(build), { recursive: true, force: true });
  }
}
