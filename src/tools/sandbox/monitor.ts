/**
 * Watches one run while it runs, every `interval_ms` (50 ms): the bytes its processes wrote to
 * disk-backed files (the workspace is the only one writable), its CPU time, and the protected
 * paths that must not appear or change. Past a bound it stops the run at once (the launcher
 * kills the tree) and says why.
 *
 * Bytes written are `write_bytes` of /proc/<pid>/io summed over the run's live processes (from
 * the run's cgroup, else its process tree); a process's figure includes the children it has
 * reaped, so nothing that exited is lost. The kernel counts a page when it is first dirtied: a
 * 2-byte file counts 4096 bytes, tmpfs (/tmp, HOME) counts nothing, and rewriting a page already
 * dirty counts it once. Between two polls a run can write at the disk's (or page cache's) speed,
 * so the cap can be passed by what is written in one interval; RLIMIT_FSIZE (`ulimit -f`) keeps
 * each single file at or below the cap meanwhile.
 *
 * CPU time is the cgroup's (whole tree, exited processes included) where there is one, else
 * utime + stime + the reaped children's of every live process (/proc/<pid>/stat).
 *
 * A backstop for space taken without a write the kernel counts (fallocate, which the seccomp
 * filter refuses; whatever else may reserve blocks): the used space of the workspace's file
 * system (statfs) at the start and at each poll. Its growth, less what the other runs watched by
 * this process wrote meanwhile, past max_write_bytes + DISK_GROWTH_MARGIN at two polls in a row
 * stops the run as disk_limit too. It is coarse: any other program on the host writing to that file system
 * during the call counts as well, hence the margin.
 */
import { readdirSync, readFileSync, statfsSync } from "node:fs";
import type { StopReason } from "./launcher.js";
import { changedPaths, type Watched } from "./protect.js";

export interface MonitorOptions {
  /** The pid of the launcher process (bwrap), root of the tree. */
  rootPid: number;
  /** `cgroup.procs` of the run, or null to walk the process tree. */
  membersFile: string | null;
  /** CPU time of the run in ns from its cgroup, or null to sum the tree's. */
  cpuNanos: (() => number | null) | null;
  maxWriteBytes: number;
  maxCpuSeconds: number;
  watched: readonly Watched[];
  stop: (reason: StopReason) => void;
  interval_ms?: number;
  /** Bytes used on the workspace's file system now (`diskUsed`), or null for no growth backstop (a read-only run). */
  diskUsed?: (() => number) | null;
  /** Growth allowed past maxWriteBytes. Default DISK_GROWTH_MARGIN. */
  growthMargin?: number;
}

/** How far the workspace's file system may grow past max_write_bytes in one run before the backstop stops it. */
export const DISK_GROWTH_MARGIN = 256 * 1024 * 1024;

/** Bytes written by every run this process watches, added up as each poll sees more: what a run's growth check leaves
 * to the others. */
let writtenByRuns = 0;

/** Bytes used on the file system holding `path` (statfs: blocks in use × block size). */
export function diskUsed(path: string): number {
  const st = statfsSync(path);
  return (st.blocks - st.bfree) * st.bsize;
}

export interface Monitor {
  /** Stops polling; returns the last figures seen. */
  end(): { written_bytes: number; cpu_seconds: number };
}

/** Clock ticks per second of /proc/<pid>/stat (USER_HZ: 100 on every architecture Linux exports to user space). */
const USER_HZ = 100;

export function startMonitor(o: MonitorOptions): Monitor {
  let written = 0;
  let grown = 0;
  let lastEstimate = 0;
  let cpu = 0;
  let stopped = false;
  const usedAtStart = o.diskUsed ? safely(o.diskUsed) : null;
  const othersAtStart = writtenByRuns;
  const growthLimit = o.maxWriteBytes + (o.growthMargin ?? DISK_GROWTH_MARGIN);
  const poll = () => {
    if (stopped) return;
    const pids = o.membersFile ? cgroupMembers(o.membersFile) : treePids(o.rootPid);
    const fromCgroup = o.cpuNanos?.() ?? null;
    // Where the cgroup counts CPU time, each process's stat need not be read.
    const perProcess = pids.map((pid) => readProcess(pid, fromCgroup === null));
    const nowWritten = perProcess.reduce((s, p) => s + p.writeBytes, 0);
    if (nowWritten > written) writtenByRuns += nowWritten - written;
    written = Math.max(written, nowWritten);
    cpu = Math.max(
      cpu,
      fromCgroup !== null ? fromCgroup / 1e9 : perProcess.reduce((s, p) => s + p.cpuTicks, 0) / USER_HZ,
    );
    const used = usedAtStart !== null ? safely(o.diskUsed!) : null;
    if (used !== null) {
      // Held against the run only when two polls in a row see it: another run's writes show on the
      // file system at once but in its own count only at its next poll.
      const estimate = used - usedAtStart! - (writtenByRuns - othersAtStart - written);
      grown = Math.max(grown, Math.min(estimate, lastEstimate));
      lastEstimate = estimate;
    }
    const reason: StopReason | null =
      written > o.maxWriteBytes || grown > growthLimit
        ? "disk_limit"
        : cpu > o.maxCpuSeconds
          ? "cpu_limit"
          : changedPaths(o.watched).length > 0
            ? "protected_path"
            : null;
    if (reason) {
      stopped = true;
      clearInterval(timer);
      o.stop(reason);
    }
  };
  const timer = setInterval(poll, o.interval_ms ?? 50);
  timer.unref();
  return {
    end() {
      stopped = true;
      clearInterval(timer);
      // Past the backstop, the growth is the figure the denial quotes.
      return { written_bytes: grown > growthLimit ? Math.max(written, grown) : written, cpu_seconds: cpu };
    },
  };
}

/** The used bytes, or null when the file system cannot be asked (the backstop then stands aside for the poll). */
function safely(used: () => number): number | null {
  try {
    return used();
  } catch {
    return null;
  }
}

function cgroupMembers(file: string): number[] {
  try {
    // Lowest pid first: a parent (usually older) is read before a child it may reap meanwhile,
    // so a reap between the two reads undercounts by that child at most, never counts it twice.
    return readFileSync(file, "utf8")
      .split("\n")
      .filter(Boolean)
      .map(Number)
      .sort((a, b) => a - b);
  } catch {
    return [];
  }
}

/** The pids of the tree under `root` (root first), from /proc/<pid>/task/<tid>/children. */
export function treePids(root: number): number[] {
  const out: number[] = [];
  const queue = [root];
  const seen = new Set<number>();
  while (queue.length > 0 && out.length < 100_000) {
    const pid = queue.shift()!;
    if (seen.has(pid)) continue;
    seen.add(pid);
    out.push(pid);
    let tasks: string[];
    try {
      tasks = readdirSync(`/proc/${pid}/task`);
    } catch {
      continue;
    }
    for (const tid of tasks) {
      try {
        for (const c of readFileSync(`/proc/${pid}/task/${tid}/children`, "utf8").split(" "))
          if (c.trim()) queue.push(Number(c));
      } catch {
        // exited meanwhile
      }
    }
  }
  return out;
}

function readProcess(pid: number, withCpu: boolean): { writeBytes: number; cpuTicks: number } {
  let writeBytes = 0;
  let cpuTicks = 0;
  try {
    writeBytes = Number(/^write_bytes: (\d+)$/m.exec(readFileSync(`/proc/${pid}/io`, "utf8"))?.[1] ?? 0);
  } catch {
    // exited, or not readable: counts nothing
  }
  if (!withCpu) return { writeBytes, cpuTicks };
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    // Fields after the command name (which may hold spaces and parentheses): utime is field 14.
    const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    cpuTicks = Number(f[11]) + Number(f[12]) + Number(f[13]) + Number(f[14]);
  } catch {
    // exited
  }
  return { writeBytes, cpuTicks };
}
