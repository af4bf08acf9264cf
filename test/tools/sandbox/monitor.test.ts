/**
 * The monitor's file-system growth backstop (monitor.ts): a run whose workspace file system grows
 * past max_write_bytes + the margin is stopped as disk_limit even when no write of its own was
 * counted; what another watched run wrote meanwhile is not held against it. The polls are driven
 * by fake timers; the processes and their /proc figures are real.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import type { StopReason } from "../../../src/tools/sandbox/launcher.js";
import { DISK_GROWTH_MARGIN, diskUsed, startMonitor } from "../../../src/tools/sandbox/monitor.js";

const MiB = 1024 * 1024;
const dir = mkdtempSync(join(tmpdir(), "tg-monitor-"));
const children: ChildProcess[] = [];
afterAll(() => rmSync(dir, { recursive: true, force: true }));
beforeEach(() => void vi.useFakeTimers({ toFake: ["setInterval", "clearInterval"] }));
afterEach(() => {
  vi.useRealTimers();
  for (const c of children.splice(0)) c.kill("SIGKILL");
});

/** A shell that runs `script`, says "ready" and then waits: a process tree with real /proc figures. */
async function tree(script: string): Promise<number> {
  const child = spawn("sh", ["-c", `${script}; echo ready; exec sleep 60`], {
    cwd: dir,
    stdio: ["ignore", "pipe", "inherit"],
  });
  children.push(child);
  await new Promise<void>((done) => child.stdout!.on("data", (c: Buffer) => c.toString().includes("ready") && done()));
  return child.pid!;
}

function watch(rootPid: number, maxWriteBytes: number, used: () => number) {
  const stops: StopReason[] = [];
  const m = startMonitor({
    rootPid,
    membersFile: null,
    cpuNanos: null,
    maxWriteBytes,
    maxCpuSeconds: 1000,
    watched: [],
    stop: (r) => stops.push(r),
    interval_ms: 50,
    diskUsed: used,
    growthMargin: 0,
  });
  return { stops, end: () => m.end() };
}

describe("the file-system growth backstop", () => {
  it("stops a run whose file system grew past the bound without any write of its own counted, and reports the growth", async () => {
    let used = 10_000 * MiB;
    const run = watch(await tree("true"), 4 * MiB, () => used);
    used += 4 * MiB;
    vi.advanceTimersByTime(100);
    expect(run.stops).toEqual([]);
    used += 1 * MiB;
    vi.advanceTimersByTime(50);
    expect(run.stops).toEqual([]); // seen once: another run's writes might not be in its count yet
    vi.advanceTimersByTime(50);
    expect(run.stops).toEqual(["disk_limit"]);
    expect(run.end().written_bytes).toBe(5 * MiB);
  });

  it("leaves out what another watched run wrote meanwhile", async () => {
    let used = 10_000 * MiB;
    const quiet = watch(await tree("true"), 1 * MiB, () => used);
    const writer = watch(await tree("head -c 8388608 /dev/zero > written.bin"), 1024 * MiB, () => used);
    used += 8 * MiB; // the writer's 8 MiB, now on the file system (the quiet run is polled first, before the writer's count has it)
    vi.advanceTimersByTime(200);
    expect([quiet.stops, writer.stops]).toEqual([[], []]);
    expect(writer.end().written_bytes).toBeGreaterThanOrEqual(8 * MiB);
    used += 2 * MiB; // and 2 MiB no counted write explains
    vi.advanceTimersByTime(100);
    expect(quiet.stops).toEqual(["disk_limit"]);
    quiet.end();
  });

  it("the margin defaults to 256 MiB, and the used space is the file system's own figure", () => {
    expect(DISK_GROWTH_MARGIN).toBe(256 * MiB);
    expect(diskUsed(dir)).toBeGreaterThan(0);
  });
});
