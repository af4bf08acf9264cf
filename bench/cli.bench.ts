/**
 * How the CLI starts, as a client or a shell starts it: `toolgate --version` and `toolgate lint`
 * of one small file, each a spawned process of the built CLI (`dist/cli/main.js`, what `npm
 * install` builds and `npm link` or an installed package runs), side by side with `node -e 0`.
 * Goals: at most 3× its time and 2× its memory (max RSS). Every command's code loads only when
 * that command runs (`src/cli/commands.ts`), so these two do not pay for the gateway, the stores
 * or the MCP SDK. Both sides run with the same `--import` hook that reports the process's max RSS
 * at exit. Run `npm run build` first: the row times whatever `dist/` holds.
 */
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { median, type Harness } from "./harness.js";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const main = join(root, "dist/cli/main.js");
const RSS_HOOK = `data:text/javascript,process.on("exit",()=>process.stderr.write("\\nmaxrss="+process.resourceUsage().maxRSS+"\\n"))`;

/** Runs one process to its end; its max RSS in KiB goes to `rss`. */
function spawnMeasured(args: string[], rss: number[]): void {
  const r = spawnSync(process.execPath, ["--import", RSS_HOOK, ...args], { encoding: "utf8", cwd: tmpdir() });
  if (r.status !== 0) throw new Error(`node ${args.join(" ")} exited ${r.status}: ${r.stderr}`);
  const m = /maxrss=(\d+)\s*$/.exec(r.stderr);
  if (!m) throw new Error(`node ${args.join(" ")} reported no max RSS: ${r.stderr}`);
  rss.push(Number(m[1]));
}

const range = (values: number[], f: (v: number) => string) => `${f(Math.min(...values))}–${f(Math.max(...values))}`;
const ms = (us: number) => `${(us / 1000).toFixed(0)} ms`;
const mib = (kib: number) => `${(kib / 1024).toFixed(1)} MiB`;

export default async function (h: Harness): Promise<void> {
  if (!existsSync(main)) throw new Error(`${main} is not built: run npm run build first`);
  const file = join(mkdtempSync(join(tmpdir(), "toolgate-bench-cli-")), "tool.json");
  writeFileSync(
    file,
    JSON.stringify({
      name: "find_orders",
      description: "Find at most 20 newest orders for one customer.",
      inputSchema: {
        type: "object",
        properties: { customer_id: { type: "string", maxLength: 64, description: "Customer id, e.g. c_7." } },
        required: ["customer_id"],
        additionalProperties: false,
      },
      annotations: { readOnlyHint: true },
    }),
  );

  for (const [label, args] of [
    ["toolgate --version", [main, "--version"]],
    ["toolgate lint <one file>", [main, "lint", file]],
  ] as const) {
    const ours: number[] = [];
    const peers: number[] = [];
    const times: { ours: number[]; peer: number[] } = { ours: [], peer: [] };
    const timed = (fn: () => void, into: number[]) => () => {
      const start = performance.now();
      fn();
      into.push((performance.now() - start) * 1000);
    };
    const row = await h.compare({
      area: "cli",
      hot_path: `${label} (spawned process, time)`,
      toolgate: timed(() => spawnMeasured([...args], ours), times.ours),
      peer: { name: "node -e 0", fn: timed(() => spawnMeasured(["-e", "0"], peers), times.peer) },
      goal: { op: "<=", value: 3, label: "≤ 3×" },
      batch: 1,
      rounds: 15,
      warmup: 1,
    });
    row.note = `ranges of ${times.ours.length} runs: toolgate ${range(times.ours, ms)}, node -e 0 ${range(times.peer, ms)}`;
    const rssOurs = median(ours);
    const rssPeer = median(peers);
    const ratio = rssOurs / rssPeer;
    h.record({
      area: "cli",
      hot_path: `${label} (spawned process, max RSS)`,
      toolgate_median_us: rssOurs,
      peer: "node -e 0",
      peer_median_us: rssPeer,
      ratio,
      goal: "≤ 2×",
      goal_met: ratio <= 2,
      unit: "KiB",
      note: `ranges: toolgate ${range(ours, mib)}, node -e 0 ${range(peers, mib)}`,
    });
  }
}
