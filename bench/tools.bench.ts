/**
 * The coding catalog against the raw tools it wraps (issue 6, "Benchmark"):
 * - bash_execute of `true` vs the same bwrap invocation spawned by hand (goal ≤ 1.2×), and a bare `bash -c true`;
 * - grep_search vs raw `rg --json` over node_modules/zod (goal ≤ 1.3×);
 * - file_edit on a 10 MB file vs read + replace + write by hand.
 * Process spawns are slow, so batches and rounds are small.
 */
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { readFile, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Harness } from "./harness.js";
import { DEFAULT_BASH_LIMITS, executeBash, launcherChooser } from "../src/tools/bash.js";
import { editFile } from "../src/tools/edit.js";
import { grepSearch } from "../src/tools/grep.js";
import { createBubblewrap } from "../src/tools/sandbox/bubblewrap.js";
import { openWorkspace } from "../src/tools/workspace.js";

function run(file: string, args: string[], env?: Record<string, string>): Promise<string> {
  return new Promise((done, fail) => {
    const child = spawn(file, args, { stdio: ["ignore", "pipe", "inherit"], ...(env ? { env } : {}) });
    const chunks: Buffer[] = [];
    child.stdout.on("data", (c: Buffer) => chunks.push(c));
    child.on("error", fail);
    child.on("close", () => done(Buffer.concat(chunks).toString("utf8")));
  });
}

export default async function toolsBench(h: Harness): Promise<void> {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), "tg-tools-bench-")));
  try {
    // The same flags as bash_execute, taken from the launcher itself (without the per-run cgroup wrapper).
    const launcher = createBubblewrap({ cgroups: "off" });
    const choose = launcherChooser(createBubblewrap(), false);
    const raw = await launcher.plan({ command: "true", workspace: dir, limits: DEFAULT_BASH_LIMITS });
    await h.compare({
      area: "tools",
      hot_path: "bash_execute `true` (bwrap envelope)",
      toolgate: () => executeBash(choose, dir, { command: "true" }, DEFAULT_BASH_LIMITS),
      peer: { name: "raw bwrap … bash -c true, same flags", fn: () => run(raw.file, raw.args, raw.env) },
      goal: { op: "<=", value: 1.2, label: "≤ 1.2×" },
      batch: 5,
      rounds: 10,
      warmup: 1,
      note: "toolgate adds a per-run pids cgroup (sh wrapper) where one can be created, output capture and token bounds",
    });
    await h.compare({
      area: "tools",
      hot_path: "bare `bash -c true` (no envelope, the floor)",
      toolgate: () => run("bash", ["-c", "true"]),
      batch: 5,
      rounds: 10,
      warmup: 1,
    });

    const zod = realpathSync(join(process.cwd(), "node_modules", "zod"));
    const ws = openWorkspace(zod);
    await h.compare({
      area: "tools",
      hot_path: "grep_search 'safeParse' over node_modules/zod",
      toolgate: () => grepSearch(ws, { pattern: "safeParse", path: zod }),
      peer: { name: "raw rg --json", fn: () => run("rg", ["--json", "-e", "safeParse", "--", zod]) },
      goal: { op: "<=", value: 1.3, label: "≤ 1.3×" },
      batch: 3,
      rounds: 10,
      warmup: 1,
    });

    const big = join(dir, "big.txt");
    writeFileSync(big, Array.from({ length: 1_000_000 }, (_, i) => `line ${i + 1}`).join("\n") + "\n");
    const edits = openWorkspace(dir);
    let flip = false;
    await h.compare({
      area: "tools",
      hot_path: "file_edit one line of a 10 MB file",
      toolgate: () => {
        flip = !flip;
        return editFile(edits, flip ? { path: big, old_str: "line 500000\n", new_str: "LINE 500000\n" } : { path: big, old_str: "LINE 500000\n", new_str: "line 500000\n" });
      },
      peer: {
        name: "readFile + replace + writeFile by hand",
        fn: async () => {
          flip = !flip;
          const text = await readFile(big, "utf8");
          await writeFile(big, flip ? text.replace("line 500000\n", "LINE 500000\n") : text.replace("LINE 500000\n", "line 500000\n"));
        },
      },
      batch: 1,
      rounds: 10,
      warmup: 1,
      note: "file_edit also checks the match count, hashes before and after, writes a temp file, fsyncs and renames",
    });
    if (!readFileSync(big, "utf8").includes("line 500000\n") && !readFileSync(big, "utf8").includes("LINE 500000\n")) throw new Error("the edit benchmark lost its line");
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
