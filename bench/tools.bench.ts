/**
 * The coding catalog against the raw tools it wraps:
 * - bash_execute of `true` vs the same bwrap invocation spawned by hand: the same flags, the same
 *   descriptors (seccomp program, workspace root) and the same uid switch (goal ≤ 1.3×); the same
 *   with cgroups off, to show what the per-run cgroups cost; and a bare `bash -c true`;
 * - grep_search (ripgrep inside the envelope) vs raw `rg --json` over node_modules/zod, and vs the
 *   same rg in the same bwrap by hand;
 * - file_edit on a 10 MB file vs read + replace + write by hand.
 * Process spawns are slow, so batches and rounds are small.
 */
import { spawn } from "node:child_process";
import {
  closeSync,
  constants,
  mkdtempSync,
  openSync,
  readFileSync,
  realpathSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { readFile, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Readable, Writable } from "node:stream";
import type { Harness } from "./harness.js";
import { DEFAULT_BASH_LIMITS, executeBash, launcherChooser } from "../src/tools/bash.js";
import { editFile } from "../src/tools/edit.js";
import { grepSearch } from "../src/tools/grep.js";
import { createBubblewrap } from "../src/tools/sandbox/bubblewrap.js";
import type { LaunchPlan } from "../src/tools/sandbox/launcher.js";
import { O_PATH } from "../src/tools/sandbox/protect.js";
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

/**
 * A plan's bwrap command spawned by hand, as a person would: the seccomp program written to fd 3,
 * a pipe for the readiness byte, the workspace root opened O_PATH for `--bind-fd`. No cgroup, no
 * watch, no capture beyond collecting stdout.
 */
function runByHand(plan: LaunchPlan, root: string): Promise<string> {
  return new Promise((done, fail) => {
    const fds = (plan.extraFds ?? []).map((e) =>
      "fd" in e ? openSync(root, O_PATH | constants.O_NOFOLLOW) : ("pipe" as const),
    );
    const child = spawn(plan.file, plan.args, {
      stdio: ["ignore", "pipe", "inherit", ...fds],
      env: plan.env,
      cwd: plan.cwd,
    });
    for (const fd of fds) if (typeof fd === "number") closeSync(fd);
    (plan.extraFds ?? []).forEach((e, i) => {
      const stream = child.stdio[3 + i] as (Readable & Writable) | null;
      stream?.on("error", () => {});
      if ("input" in e) stream?.end(e.input);
      else stream?.resume();
    });
    const chunks: Buffer[] = [];
    child.stdout!.on("data", (c: Buffer) => chunks.push(c));
    child.on("error", fail);
    child.on("close", () => done(Buffer.concat(chunks).toString("utf8")));
  });
}

export default async function toolsBench(h: Harness): Promise<void> {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), "tg-tools-bench-")));
  try {
    const quiet = { warn: () => {} };
    const choose = launcherChooser(createBubblewrap(quiet), false);
    const chooseNoCgroups = launcherChooser(createBubblewrap({ ...quiet, cgroups: "off" }), false);
    await executeBash(choose, dir, { command: "true" }, DEFAULT_BASH_LIMITS); // the one-time handover of the temp workspace
    // The same flags as bash_execute, from the launcher itself (without the per-run cgroup wrapper).
    const bare = createBubblewrap({ ...quiet, cgroups: "off", chownWorkspace: false });
    const raw = await bare.plan({ command: "true", workspace: dir, limits: DEFAULT_BASH_LIMITS });
    await raw.finish?.({ stopped: null, ran: false });
    const byHand = { name: "bwrap … true by hand: same flags, fds, uid switch", fn: () => runByHand(raw, dir) };
    await h.compare({
      area: "tools",
      hot_path: "bash_execute `true` (bwrap envelope)",
      toolgate: () => executeBash(choose, dir, { command: "true" }, DEFAULT_BASH_LIMITS),
      peer: byHand,
      goal: { op: "<=", value: 1.3, label: "≤ 1.3×" },
      batch: 5,
      rounds: 20,
      warmup: 2,
      note: "toolgate adds per-run cgroups (pids, memory, cpuacct: mkdir, limits, and the move of bwrap and its child in while bwrap waits on --block-fd), the watch, output capture and token bounds",
    });
    await h.compare({
      area: "tools",
      hot_path: "bash_execute `true`, cgroups off",
      toolgate: () => executeBash(chooseNoCgroups, dir, { command: "true" }, DEFAULT_BASH_LIMITS),
      peer: byHand,
      batch: 5,
      rounds: 20,
      warmup: 2,
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
    // node_modules is shared and world-readable: searched as the sandbox user, never handed over to it.
    const envelope = {
      choose: launcherChooser(createBubblewrap({ ...quiet, chownWorkspace: false }), false),
      limits: DEFAULT_BASH_LIMITS,
    };
    const rgArgs = ["--json", "--sort", "path", "--no-config", "--no-require-git", "-e", "safeParse", "--", zod];
    const rgPlan = await bare.plan({
      command: "",
      argv: ["/usr/bin/rg", ...rgArgs],
      workspace: zod,
      readOnlyWorkspace: true,
      limits: DEFAULT_BASH_LIMITS,
    });
    await rgPlan.finish?.({ stopped: null, ran: false });
    await h.compare({
      area: "tools",
      hot_path: "grep_search 'safeParse' over node_modules/zod",
      toolgate: () => grepSearch(ws, { pattern: "safeParse", path: zod }, undefined, undefined, undefined, envelope),
      peer: { name: "raw rg --json (no envelope)", fn: () => run("rg", rgArgs) },
      batch: 3,
      rounds: 20,
      warmup: 2,
      note: "ripgrep now runs inside the envelope (bwrap, seccomp, cgroups, uid switch): the ratio is mostly the envelope's start",
    });
    await h.compare({
      area: "tools",
      hot_path: "grep_search 'safeParse' vs the same rg in bwrap by hand",
      toolgate: () => grepSearch(ws, { pattern: "safeParse", path: zod }, undefined, undefined, undefined, envelope),
      peer: { name: "bwrap … rg --json by hand: same flags, fds, uid switch", fn: () => runByHand(rgPlan, zod) },
      goal: { op: "<=", value: 1.3, label: "≤ 1.3×" },
      batch: 3,
      rounds: 20,
      warmup: 2,
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
        return editFile(
          edits,
          flip
            ? { path: big, old_str: "line 500000\n", new_str: "LINE 500000\n" }
            : { path: big, old_str: "LINE 500000\n", new_str: "line 500000\n" },
        );
      },
      peer: {
        name: "readFile + replace + writeFile by hand",
        fn: async () => {
          flip = !flip;
          const text = await readFile(big, "utf8");
          await writeFile(
            big,
            flip ? text.replace("line 500000\n", "LINE 500000\n") : text.replace("LINE 500000\n", "line 500000\n"),
          );
        },
      },
      batch: 1,
      rounds: 10,
      warmup: 1,
      note: "file_edit also checks the match count, hashes before and after, writes a temp file, fsyncs and renames",
    });
    if (!readFileSync(big, "utf8").includes("line 500000\n") && !readFileSync(big, "utf8").includes("LINE 500000\n"))
      throw new Error("the edit benchmark lost its line");
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
