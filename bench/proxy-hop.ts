/**
 * The proxy hop alone, repeatable: `npx tsx bench/proxy-hop.ts [--tree DIR] [--era E] [--calls N]
 * [--cpu-prof DIR] [--callgrind DIR]`. The setup of bench/mcp.bench.ts's proxy rows (`toolgate
 * proxy` compiled by tsc from DIR's `src/`, default store and audit as there, in front of the bare
 * SDK v2 server of bench/fixtures), without its other rows: after the same 4,000 calls of warm-up
 * a side, N no-op reads through the proxy alternate in batches with N straight to the upstream,
 * and it prints the two medians per call (µs), their difference (the hop's overhead) and the proxy
 * process's CPU per call (schedstat, as the bench's CPU twin reads it).
 *
 * `--cpu-prof DIR` starts the proxy under `node --cpu-prof` (its profile written into DIR when it
 * exits). `--callgrind DIR` starts it under valgrind's callgrind instead (slow: the warm-up and N
 * shrink to what `--warmup`/`--calls` say, default 2,000 and 1,000); the counters are zeroed after
 * the warm-up and dumped after the N calls, and the instructions per proxied call are printed
 * (callgrind counts instructions, so the figure holds on a loaded machine), with the part of them
 * V8 spent compiling and collecting garbage, and the rest: the figure to compare (`callgrind-split.ts`). `--tree` builds
 * another checkout's `src/` (an A/B against a base worktree uses the same script); `--built DIR` takes a
 * build made before (DIR/dist/cli/main.js, DIR/package.json) and keeps it, so alternating runs do not rebuild.
 *
 * `--serve` runs the same loop against `toolgate serve` with the same no-op read (test/mcp/fixtures/
 * notes-catalog.ts, as bench/mcp.bench.ts serves it) in place of the proxy: the server face alone, so
 * the proxy's CPU per call less serve's is what the hop itself costs. `--node-flags "F …"` starts
 * toolgate's node with more flags (e.g. `--perf-basic-prof` for `perf record -p`). `--gc-log FILE`
 * adds `--trace-gc-nvp` and writes the lines it prints into FILE: they reach the client on toolgate's
 * stdout between the protocol's lines, which the client skips as not JSON.
 *
 * Reading a profile of the hop: `--cpu-prof` samples wall time, and a
 * process that writes a line to a pipe wakes its reader and is often preempted by it inside that
 * write, so the profile puts that wait in `writeUtf8String` (39 % of the busy time, 2026-12-04); an
 * on-CPU profile (`perf record` with `--node-flags --perf-basic-prof`) put both writes at 12-13 %
 * of the proxy's CPU, nearly all of it the kernel's send and wake-up, one write() per message.
 */
import { execFileSync } from "node:child_process";
import { appendFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { Client } from "@modelcontextprotocol/client";
import { getDefaultEnvironment, StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { buildToolgate, toolgateArgs } from "./build.js";
import { callgrindSplit } from "./callgrind-split.js";
import { median } from "./harness.js";

const here = dirname(dirname(fileURLToPath(import.meta.url)));
const { values: flags } = parseArgs({
  options: {
    tree: { type: "string", default: here },
    era: { type: "string" },
    calls: { type: "string" },
    warmup: { type: "string" },
    batch: { type: "string", default: "50" },
    "cpu-prof": { type: "string" },
    callgrind: { type: "string" },
    serve: { type: "boolean", default: false },
    "node-flags": { type: "string" },
    "gc-log": { type: "string" },
    /** A build of the tree made before (the folder holding dist/ and package.json): kept, not rebuilt. */
    built: { type: "string" },
  },
});
const tree = resolve(flags.tree!);
const grind = flags.callgrind !== undefined ? resolve(flags.callgrind) : undefined;
const calls = Number(flags.calls ?? (grind ? 1_000 : 6_000));
const warmup = Number(flags.warmup ?? (grind ? 2_000 : 4_000));
const batch = Number(flags.batch);
const eras = flags.era ? [flags.era] : ["2025-11-25", "2026-07-28"];
const bare = join(here, "bench/fixtures/bare-mcp-server.mjs");

/** Under valgrind the proxy runs some 50 times slower: its client waits as long as it takes. */
const request = grind ? { timeout: 3_600_000 } : undefined;

async function connect(era: string, command: string, args: string[], env: Record<string, string> = {}) {
  const client = new Client(
    { name: "bench", version: "1.0.0" },
    era === "2026-07-28" ? { versionNegotiation: { mode: { pin: era as "2026-07-28" } } } : {},
  );
  const transport = new StdioClientTransport({
    command,
    args,
    cwd: here,
    env: { ...getDefaultEnvironment(), ...env },
    stderr: "ignore",
  });
  await client.connect(transport, request);
  await client.listTools(undefined, request);
  return { client, pid: transport.pid, transport };
}

/**
 * Appends the lines of the child's stdout that are not JSON-RPC (V8's GC trace) to `file`. The SDK's
 * transport does not expose that stream; its private `_process` does (the SDK is pinned exactly).
 */
function logGc(transport: StdioClientTransport, file: string): void {
  const stdout = (transport as unknown as { _process?: { stdout?: NodeJS.ReadableStream | null } })._process?.stdout;
  if (!stdout) throw new Error("--gc-log: the SDK's StdioClientTransport no longer keeps its child as _process");
  let rest = "";
  stdout.on("data", (chunk: Buffer) => {
    const lines = (rest + chunk.toString("utf8")).split("\n");
    rest = lines.pop()!;
    const trace = lines.filter((l) => !l.startsWith("{"));
    if (trace.length > 0) appendFileSync(file, trace.join("\n") + "\n");
  });
}

function cpuUs(pid: number | null): number {
  let ns = 0;
  for (const tid of readdirSync(`/proc/${pid}/task`))
    ns += Number(readFileSync(`/proc/${pid}/task/${tid}/schedstat`, "utf8").split(" ")[0]);
  return ns / 1000;
}

async function timed(fn: () => Promise<unknown>, n: number): Promise<number> {
  const start = performance.now();
  for (let i = 0; i < n; i++) await fn();
  return ((performance.now() - start) * 1000) / n;
}

const dir = flags.built !== undefined ? resolve(flags.built) : dirname(buildToolgate(tree));
const ws = mkdtempSync(join(tmpdir(), "toolgate-hop-"));
try {
  for (const era of eras) {
    const direct = await connect(era, process.execPath, [bare]);
    const main = join(dir, "dist/cli/main.js");
    const project = join(ws, `project-${era}`);
    if (flags.serve) mkdirSync(project);
    const proxyArgs = [main, ...(flags.serve ? toolgateArgs.serve(project) : toolgateArgs.proxy(ws, era, bare))];
    const nodeFlags = [
      ...(flags["node-flags"]?.split(" ").filter(Boolean) ?? []),
      ...(flags["gc-log"] !== undefined ? ["--trace-gc-nvp"] : []),
    ];
    const prof = flags["cpu-prof"] !== undefined ? resolve(flags["cpu-prof"]) : undefined;
    if (prof) mkdirSync(prof, { recursive: true });
    const grindOut = grind ? join(grind, `callgrind.${era}.out`) : undefined;
    if (grind) mkdirSync(grind, { recursive: true });
    const [command, args] = grindOut
      ? [
          "valgrind",
          [
            "--tool=callgrind",
            `--callgrind-out-file=${grindOut}`,
            process.execPath,
            // One thread: V8's compiler and GC helpers run on the main thread, so the count does not depend on scheduling.
            "--single-threaded",
            // No major GC in the counted window, in either tree of an A/B: one that lands in one run's
            // window and not the other's outweighs any change (a tree allocating less moves it later,
            // into the window), and its marking slows the code that runs beside it. Scavenges, which
            // follow what each call allocates, still count.
            "--initial-old-space-size=1024",
            "--no-memory-reducer",
            ...nodeFlags,
            ...proxyArgs,
          ],
        ]
      : [process.execPath, [...nodeFlags, ...(prof ? ["--cpu-prof", "--cpu-prof-dir", prof] : []), ...proxyArgs]];
    const proxied = await connect(era, command, args, { XDG_STATE_HOME: join(ws, "state-home") });
    if (flags["gc-log"] !== undefined) logGc(proxied.transport, resolve(flags["gc-log"]));
    const read = (c: Client) => () => c.callTool({ name: "noop_read", arguments: {} }, request);
    for (let i = 0; i < warmup; i++) {
      await read(proxied.client)();
      if (!grind) await read(direct.client)();
    }
    if (grindOut) {
      execFileSync("callgrind_control", ["-z", String(proxied.pid)], { stdio: ["ignore", "ignore", "inherit"] });
      await new Promise((r) => setTimeout(r, 2000));
      for (let i = 0; i < calls; i++) await read(proxied.client)();
      // `--dump=HINT` (callgrind_control has no `-d`: it took the hint for a process name and dumped nothing).
      execFileSync("callgrind_control", [`--dump=${era}-calls`, String(proxied.pid)], {
        stdio: ["ignore", "ignore", "inherit"],
      });
      // The dump is written when the process next runs: wait for its totals line.
      const dump = join(grind!, `callgrind.${era}.out.1`);
      const text = () => (existsSync(dump) ? readFileSync(dump, "utf8") : "");
      for (let i = 0; i < 600 && !/^totals: /m.test(text()); i++) await new Promise((r) => setTimeout(r, 1000));
      const last = dump;
      const summary = /^summary: (\d+)/m.exec(text());
      const ir = Number(summary?.[1] ?? NaN);
      const split = callgrindSplit(last, calls);
      const k = (n: number) => n.toFixed(0).replace(/\B(?=(\d{3})+$)/g, ",");
      console.log(
        `${era}: ${(ir / calls).toFixed(0)} instructions per proxied call (${calls} calls, ${last}): V8 compiling ${k(split.compile)}, GC ${k(split.gc)}, the rest ${k(split.rest)} (bench/callgrind-split.ts)`,
      );
    } else {
      const via: number[] = [];
      const straight: number[] = [];
      const cpuStart = cpuUs(proxied.pid);
      for (let done = 0; done < calls; done += batch) {
        via.push(await timed(read(proxied.client), batch));
        straight.push(await timed(read(direct.client), batch));
      }
      const cpu = (cpuUs(proxied.pid) - cpuStart) / calls;
      const [v, s] = [median(via), median(straight)];
      console.log(
        `${era}: proxied ${v.toFixed(0)} µs, direct ${s.toFixed(0)} µs, overhead ${(v - s).toFixed(0)} µs; proxy CPU ${cpu.toFixed(0)} µs per call (${calls} calls in batches of ${batch})`,
      );
    }
    await proxied.client.close();
    await direct.client.close();
  }
} finally {
  rmSync(ws, { recursive: true, force: true });
  if (flags.built === undefined) rmSync(dir, { recursive: true, force: true });
}
