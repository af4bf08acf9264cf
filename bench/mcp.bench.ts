/**
 * MCP round trips over stdio, same SDK v2 Client, same run, each row in both protocol revisions
 * (2025-11-25: initialize; 2026-07-28: the client pinned to it, every request with its `_meta` envelope):
 * - `toolgate serve --catalog` with a no-op read tool vs a bare SDK v2 McpServer with the same tool (goal ≤ 1.10×);
 * - a no-op write (A2: idempotency key claimed and settled in the default SQLite store) vs the bare server (goal ≤
 * 1.3×);
 * - the same write against its floor: the bare server's write plus the two durable commits any write with an
 * idempotency key needs (claim the key, then settle it with the result), made by better-sqlite3 in a file
 * with the store's own settings (WAL, synchronous=NORMAL);
 * - `toolgate proxy` in front of the bare server vs calling the bare server directly, and that difference
 * stated in µs (goal ≤ 200 µs of overhead).
 * Each stdio row has a CPU twin: the CPU time the server process spends per call (all its threads, from
 * /proc/PID/task/TID/schedstat, ns), summed over the row's rounds and divided by its calls; the client is the same
 * for both sides, and CPU time does not grow when other processes load the machine the way wall time does. The write
 * floor's CPU is the bare server's plus the two commits' CPU in this process; the proxy's is the proxy process's
 * own (the upstream is a process of its own: its CPU is the direct call's).
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
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { Client } from "@modelcontextprotocol/client";
import { getDefaultEnvironment, StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { InMemoryTransport, McpServer, type Server } from "@modelcontextprotocol/server";
import Database from "better-sqlite3";
import { z } from "zod";
import type * as OpenModule from "../src/idempotency/open.js";
import type * as ServerModule from "../src/mcp/server/server.js";
import type * as GatewayModule from "../src/runtime/gateway.js";
import { noop } from "../test/mcp/fixtures/notes-catalog.js";
import type { Harness, Row } from "./harness.js";
import { buildToolgate, toolgateArgs } from "./build.js";

const root = dirname(dirname(fileURLToPath(import.meta.url)));
const bare = join(root, "bench/fixtures/bare-mcp-server.mjs");

type Era = "2025-11-25" | "2026-07-28";

/** A client of a server process, and that process's id (for its CPU time). */
interface Served {
  client: Client;
  pid: number | null;
}

async function connect(
  era: Era,
  command: string,
  args: string[],
  cwd: string,
  env: Record<string, string> = {},
): Promise<Served> {
  const client = new Client(
    { name: "bench", version: "1.0.0" },
    era === "2026-07-28" ? { versionNegotiation: { mode: { pin: era } } } : {},
  );
  const transport = new StdioClientTransport({
    command,
    args,
    cwd,
    env: { ...getDefaultEnvironment(), ...env },
    stderr: "ignore",
  });
  await client.connect(transport);
  await client.listTools(); // caches output validators on both sides alike
  return { client, pid: transport.pid };
}

/**
 * CPU time of process `pid` so far, µs: every thread's time on a CPU (the first field of its
 * schedstat, ns), so garbage collection and libuv's threads count too. Null off Linux.
 */
function processCpuUs(pid: number | null): number | null {
  if (pid === null) return null;
  try {
    let ns = 0;
    for (const tid of readdirSync(`/proc/${pid}/task`))
      ns += Number(readFileSync(`/proc/${pid}/task/${tid}/schedstat`, "utf8").split(" ")[0]);
    return ns / 1000;
  } catch {
    return null;
  }
}

/** Counts the calls `fn` makes, so a row's CPU time can be divided by them. */
function counted(fn: () => Promise<unknown>): { fn: () => Promise<unknown>; calls: () => number } {
  let n = 0;
  return {
    fn: () => {
      n++;
      return fn();
    },
    calls: () => n,
  };
}

/**
 * Calls each side makes before its CPU time is read. A fresh server process of either side gets
 * faster for its first few thousand calls (V8 optimising the per-call path): in rounds of 500
 * no-op reads, the bare server took about 2,500 calls to settle at its steady time, toolgate
 * serve about 3,500 (the first rounds 3-8× slower than the last). 500 left the rows of the first
 * side-by-side in that slope (a warm read 223 µs was measured at 110 µs once warm).
 */
const CPU_WARMUP_CALLS = 4000;

interface CpuSide {
  name: string;
  pid: number | null;
  fn: () => Promise<unknown>;
  /** CPU spent outside `pid` that belongs to this side's calls, µs so far (the floor's commits). */
  extraUs?: () => number;
}

/**
 * Runs `compare` (a side-by-side row over `ours` and `theirs`) and records beside it the CPU
 * time per call of each side's server process over the whole row, each process warmed first.
 */
async function withCpu(
  h: Harness,
  hot_path: string,
  ours: CpuSide,
  theirs: CpuSide,
  compare: (ours: () => Promise<unknown>, theirs: () => Promise<unknown>) => Promise<unknown>,
  goal?: { value: number; label: string },
): Promise<void> {
  // Warm first, so the row's CPU is a warm process's (a fresh one spends its first calls compiling).
  for (let i = 0; i < CPU_WARMUP_CALLS; i++) {
    await ours.fn();
    await theirs.fn();
  }
  const a = counted(ours.fn);
  const b = counted(theirs.fn);
  const extra = (side: CpuSide) => side.extraUs?.() ?? 0;
  const startA = processCpuUs(ours.pid);
  const startB = processCpuUs(theirs.pid);
  const [extraA, extraB] = [extra(ours), extra(theirs)];
  await compare(a.fn, b.fn);
  const endA = processCpuUs(ours.pid);
  const endB = processCpuUs(theirs.pid);
  if (startA === null || startB === null || endA === null || endB === null) return;
  const usA = (endA - startA + extra(ours) - extraA) / a.calls();
  const usB = (endB - startB + extra(theirs) - extraB) / b.calls();
  const ratio = usA / usB;
  h.record({
    area: "mcp",
    hot_path,
    toolgate_median_us: usA,
    peer: theirs.name,
    peer_median_us: usB,
    ratio,
    goal: goal?.label ?? null,
    goal_met: goal ? ratio <= goal.value : null,
    note: `CPU time per call of the server process (mean over the row above, after ${CPU_WARMUP_CALLS} calls of warm-up), not wall time`,
  });
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

/**
 * Fewer, smaller batches than the default: each call is a process round trip. The warm-up
 * itself is `withCpu`'s (CPU_WARMUP_CALLS per side before each row); these 12 batches come on
 * top, and 30 rounds a side keep a median steady under a loaded machine.
 */
const SIZE = { batch: 50, rounds: 30, warmup: 12 } as const;

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
        [...toolgate.slice(1), ...toolgateArgs.serve(project)],
        root,
        stateHome,
      );
      const proxied = await connect(
        era,
        toolgate[0]!,
        [...toolgate.slice(1), ...toolgateArgs.proxy(ws, era, bare)],
        root,
        stateHome,
      );
      clients.push(direct.client, served.client, proxied.client);
      const bareSide = (fn: () => Promise<unknown>, name = "bare SDK v2 McpServer"): CpuSide => ({
        name,
        pid: direct.pid,
        fn,
      });
      /** One side-by-side row in wall time (`hot_path`) and its CPU twin (`cpu_path`). */
      const sideBySide = async (o: {
        hot_path: string;
        cpu_path: string;
        ours: CpuSide;
        peer: CpuSide;
        goal?: { value: number; label: string };
        note: string;
      }): Promise<Row> => {
        let row: Row | undefined;
        await withCpu(
          h,
          o.cpu_path,
          o.ours,
          o.peer,
          async (ours, theirs) => {
            row = await h.compare({
              area: "mcp",
              hot_path: o.hot_path,
              toolgate: ours,
              peer: { name: o.peer.name, fn: theirs },
              ...(o.goal ? { goal: { op: "<=", ...o.goal } } : {}),
              note: o.note,
              ...SIZE,
            });
          },
          o.goal,
        );
        return row!;
      };
      const serve = (fn: () => Promise<unknown>): CpuSide => ({ name: "toolgate serve", pid: served.pid, fn });

      await sideBySide({
        hot_path: `tools/call no-op read (A0) over stdio, ${era}`,
        cpu_path: `server CPU per no-op read (A0) over stdio, ${era}`,
        ours: serve(read(served.client)),
        peer: bareSide(read(direct.client)),
        goal: { value: 1.1, label: "≤ 1.10×" },
        note: "toolgate serve --catalog, default SQLite store + audit trail",
      });

      let n = 0;
      const write = (c: Client) => () => c.callTool({ name: "noop_write", arguments: { n: n++ } });
      await sideBySide({
        hot_path: `tools/call no-op write (A2) over stdio, ${era}`,
        cpu_path: `server CPU per no-op write (A2) over stdio, ${era}`,
        ours: serve(write(served.client)),
        peer: bareSide(write(direct.client)),
        goal: { value: 1.3, label: "≤ 1.3×" },
        note: "each call claims and settles an idempotency key in SQLite (WAL)",
      });

      // The floor of a durable write: what the bare server does plus two commits, one to claim
      // the key before running and one to settle it after, in a file set up as the store sets up its own.
      const floorDb = new Database(join(ws, `floor-${era}.db`));
      floorDb.pragma("journal_mode = WAL");
      floorDb.pragma("synchronous = NORMAL");
      floorDb.exec("CREATE TABLE IF NOT EXISTS k (key TEXT PRIMARY KEY, value TEXT) WITHOUT ROWID");
      const claim = floorDb.prepare("INSERT INTO k (key, value) VALUES (?, NULL)");
      const settle = floorDb.prepare("UPDATE k SET value = ? WHERE key = ?");
      let commitsUs = 0;
      const timedCommit = (commit: () => unknown) => {
        const before = process.cpuUsage();
        commit();
        const spent = process.cpuUsage(before);
        commitsUs += spent.user + spent.system;
      };
      const floor = async () => {
        const key = `floor-${n}`;
        timedCommit(() => claim.run(key));
        const result = await write(direct.client)();
        timedCommit(() => settle.run(JSON.stringify(result), key));
      };
      await sideBySide({
        hot_path: `tools/call no-op write (A2) over stdio vs its floor, ${era}`,
        cpu_path: `server CPU per no-op write (A2) over stdio vs its floor, ${era}`,
        ours: serve(write(served.client)),
        peer: { ...bareSide(floor, "bare server + claim and settle commits"), extraUs: () => commitsUs },
        goal: { value: 1.3, label: "≤ 1.3×" },
        note: "the floor: the bare server's write plus two SQLite commits (WAL, synchronous=NORMAL)",
      });
      floorDb.close();

      const viaProxy = await sideBySide({
        hot_path: `toolgate proxy → upstream no-op read, ${era}`,
        cpu_path: `toolgate proxy process CPU per no-op read (the hop) vs the upstream's own, ${era}`,
        ours: { name: "toolgate proxy", pid: proxied.pid, fn: read(proxied.client) },
        peer: bareSide(read(direct.client), "upstream called directly"),
        note: "two stdio hops vs one",
      });
      const overhead = viaProxy.toolgate_median_us - viaProxy.peer_median_us!;
      h.record({
        area: "mcp",
        hot_path: `toolgate proxy overhead per no-op read, ${era}`,
        toolgate_median_us: overhead,
        peer: null,
        peer_median_us: null,
        ratio: null,
        goal: "≤ 200 µs",
        goal_met: overhead <= 200,
        note: "proxied median minus direct median of the row above",
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
      // In process too, both sides get faster for their first couple of thousand calls.
      warmup: 40,
    });
  } finally {
    await Promise.allSettled(clients.map((c) => c.close()));
    rmSync(ws, { recursive: true, force: true });
    if (build) rmSync(dirname(build), { recursive: true, force: true });
  }
}
