/**
 * The per-call cost of the boundary in one process, without pipes or a second process: a no-op
 * read or write through `gateway.call`, through `serveStdio` fed a real SDK v2 client's lines
 * (both revisions), and through a bare SDK v2 server fed the same lines (the peer of
 * `mcp.bench.ts`). Not part of `npm run bench` (not a `*.bench.ts`): a profiling aid.
 *   npx tsx bench/serve-loop.ts                 each configuration once, wall and CPU µs per call
 *   npx tsx bench/serve-loop.ts --callgrind     instructions per call under valgrind: 1,000 calls after 2,000 of
 *                                               warm-up, counted from the warm-up's end to the last call's answer
 *                                               (`node --single-threaded`, so V8's compiler and collector run on the
 *                                               counted thread). Not yet repeatable at load 20+: the same tree gave
 *                                               657 k and 1,120 k (callgrind_control's zero and dump are served only
 *                                               when the loop wakes, and V8's tier-up moves); compare runs of a quiet
 *                                               machine, or take the difference of two call counts instead.
 *   npx tsx bench/serve-loop.ts --only stdio,read   configurations whose label has each of these words
 *   npx tsx bench/serve-loop.ts --keep --only none   builds, records, prints the loop's command and keeps its files
 * The loop itself is `bench/fixtures/serve-loop.mjs`, run with plain node over the tsc build
 * (`build.ts`), so it can run under valgrind and `node --cpu-prof` as the package ships.
 */
import { execFileSync, spawn } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { Client } from "@modelcontextprotocol/client";
import { getDefaultEnvironment, StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import type { JSONRPCMessage } from "@modelcontextprotocol/server";
import { buildToolgate } from "./build.js";

const root = dirname(dirname(fileURLToPath(import.meta.url)));
const loop = join(root, "bench/fixtures/serve-loop.mjs");
const eras = ["2025-11-25", "2026-07-28"] as const;

/** What a real client sends: its opening messages, and one tools/call as a template (id, name, arguments left out). */
async function recordLines(era: (typeof eras)[number]): Promise<{ opening: string[]; call: string }> {
  const client = new Client(
    { name: "bench", version: "1.0.0" },
    era === "2026-07-28" ? { versionNegotiation: { mode: { pin: era } } } : {},
  );
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [join(root, "bench/fixtures/bare-mcp-server.mjs")],
    env: getDefaultEnvironment(),
    stderr: "ignore",
  });
  const sent: JSONRPCMessage[] = [];
  const send = transport.send.bind(transport);
  transport.send = (message: JSONRPCMessage) => {
    sent.push(structuredClone(message));
    return send(message);
  };
  await client.connect(transport);
  await client.listTools();
  const opening = sent.length;
  await client.callTool({ name: "noop_read", arguments: {} });
  await client.close();
  const call = sent.slice(opening).find((m) => "method" in m && m.method === "tools/call") as unknown as {
    id: unknown;
    params: { name: unknown; arguments: unknown };
  };
  call.id = "ID";
  call.params.name = "TOOL";
  call.params.arguments = "ARGS";
  return { opening: sent.slice(0, opening).map((m) => JSON.stringify(m)), call: JSON.stringify(call) };
}

/**
 * Instructions callgrind counts over `calls` calls of the loop with `args`, after 2,000 of warm-up: the counters are
 * zeroed when the loop says it is warm and dumped when it says it is done (`--sync`), so neither start nor exit counts.
 */
async function measuredInstructions(args: string[], calls: number): Promise<number> {
  const sync = mkdtempSync(join(tmpdir(), "toolgate-serve-loop-sync-"));
  const out = join(sync, "callgrind.out");
  const child = spawn(
    "valgrind",
    [
      "--tool=callgrind",
      `--callgrind-out-file=${out}`,
      process.execPath,
      "--single-threaded",
      loop,
      ...args,
      "--warmup",
      "2000",
      "--calls",
      String(calls),
      "--sync",
      sync,
    ],
    { stdio: "ignore" },
  );
  const ended = new Promise<number | null>((resolve) => child.on("exit", resolve));
  const seen = async (name: string) => {
    while (!existsSync(join(sync, name))) {
      if (child.exitCode !== null)
        throw new Error(`serve-loop under valgrind exited (${child.exitCode}) before ${name}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  };
  try {
    await seen("warm");
    execFileSync("callgrind_control", ["--zero", String(child.pid)], { stdio: "ignore" });
    writeFileSync(join(sync, "go"), "");
    await seen("done");
    execFileSync("callgrind_control", ["--dump", String(child.pid)], { stdio: "ignore" });
    writeFileSync(join(sync, "end"), "");
    await ended;
    const dump = readdirSync(sync).find((f) => f.startsWith("callgrind.out.") && f !== "callgrind.out");
    if (!dump) throw new Error(`callgrind wrote no dump in ${sync}`);
    const totals = /^(?:summary|totals): (\d+)/m.exec(readFileSync(join(sync, dump), "utf8"));
    return Number(totals![1]);
  } finally {
    child.kill();
    rmSync(sync, { recursive: true, force: true });
  }
}

const configs: Array<{ label: string; args: string[] }> = [];
for (const tool of ["read", "write"])
  for (const audit of ["on", "off"])
    configs.push({
      label: `gateway ${tool} audit-${audit}`,
      args: ["--face", "gateway", "--era", eras[0], "--tool", tool, "--audit", audit],
    });
for (const era of eras)
  for (const tool of ["read", "write"]) {
    configs.push({ label: `bare ${era} ${tool}`, args: ["--face", "bare", "--era", era, "--tool", tool] });
    for (const audit of ["on", "off"])
      configs.push({
        label: `stdio ${era} ${tool} audit-${audit}`,
        args: ["--face", "stdio", "--era", era, "--tool", tool, "--audit", audit],
      });
  }

const argv = process.argv.slice(2);
const callgrind = argv.includes("--callgrind");
const only = argv.includes("--only") ? argv[argv.indexOf("--only") + 1]!.split(",") : null;
const keep = argv.includes("--keep");
const dist = buildToolgate();
const tmp = mkdtempSync(join(tmpdir(), "toolgate-serve-loop-lines-"));
try {
  const linesFile = join(tmp, "lines.json");
  const lines: Record<string, unknown> = {};
  for (const era of eras) lines[era] = await recordLines(era);
  writeFileSync(linesFile, JSON.stringify(lines));
  const base = ["--dist", dist, "--lines", linesFile];
  if (keep) console.log(`node ${loop} ${base.join(" ")}`);
  for (const c of configs) {
    if (only && !only.every((w) => c.label.split(" ").includes(w))) continue;
    if (!callgrind) {
      const out = execFileSync(process.execPath, [loop, ...base, ...c.args, "--calls", "14000", "--batches", "7"], {
        encoding: "utf8",
      });
      const r = JSON.parse(out.trim().split("\n").pop()!) as { wall_us: number; cpu_us: number };
      console.log(`${c.label.padEnd(32)} wall ${r.wall_us.toFixed(1)} µs  cpu ${r.cpu_us.toFixed(1)} µs`);
      continue;
    }
    const perCall = (await measuredInstructions([...base, ...c.args], 1000)) / 1000;
    console.log(`${c.label.padEnd(32)} ${Math.round(perCall).toLocaleString("en")} instructions per call`);
  }
} finally {
  if (!keep) rmSync(tmp, { recursive: true, force: true });
  if (!keep) rmSync(dirname(dist), { recursive: true, force: true });
}
