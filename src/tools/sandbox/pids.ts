/**
 * A pids cgroup per run: the kernel's own bound on how many processes the command may have.
 * `ulimit -u` (RLIMIT_NPROC) is also set, but the kernel does not enforce it for the root user
 * (uid 0 of the initial user namespace, which is what a sandbox started by root maps to), so
 * where toolgate may create cgroups (root, or a delegated subtree) each run gets its own with
 * `pids.max`, and bwrap is moved into it before it starts anything.
 */
import { mkdirSync, readdirSync, readFileSync, rmdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";

/** One run's cgroup: the file to write the launcher's pid into, and how to read and remove it. */
export interface RunCgroup {
  procsFile: string;
  /** Whether a fork was refused by the limit; then removes the cgroup. */
  finish(): Promise<boolean>;
}

let counter = 0;

/**
 * The folder under which per-run cgroups can be created, or null where the pids controller is
 * not mounted or not writable (then only `ulimit -u` bounds processes). Checked by creating it.
 */
export function findPidsCgroupBase(mountinfo = "/proc/self/mountinfo", cgroupFile = "/proc/self/cgroup"): string | null {
  try {
    const mounts = readFileSync(mountinfo, "utf8").split("\n");
    const own = readFileSync(cgroupFile, "utf8").split("\n");
    // cgroup v1: a mount whose super options include "pids", and our path in that hierarchy.
    const v1 = mounts.map((l) => l.split(" ")).find((f) => f.includes("cgroup") && (f[f.length - 1] ?? "").split(",").includes("pids"));
    const v1Path = own.find((l) => l.split(":")[1]?.split(",").includes("pids"))?.split(":")[2];
    let base: string | null = null;
    if (v1?.[4] && v1Path !== undefined) base = join(v1[4], v1Path, "toolgate");
    else {
      // cgroup v2: only when the pids controller is delegated to our subtree.
      const v2 = mounts.map((l) => l.split(" ")).find((f) => f.includes("cgroup2"));
      const v2Path = own.find((l) => l.startsWith("0::"))?.slice(3);
      if (v2?.[4] && v2Path !== undefined && readFileSync(join(v2[4], v2Path, "cgroup.subtree_control"), "utf8").includes("pids")) base = join(v2[4], v2Path, "toolgate");
    }
    if (base === null) return null;
    mkdirSync(base, { recursive: true });
    removeLeftovers(base);
    return base;
  } catch {
    return null;
  }
}

/** Creates a cgroup allowing `maxTasks` tasks (processes and threads). */
export function createRunCgroup(base: string, maxTasks: number): RunCgroup {
  const dir = join(base, `run-${process.pid}-${++counter}`);
  mkdirSync(dir);
  writeFileSync(join(dir, "pids.max"), String(maxTasks));
  return {
    procsFile: join(dir, "cgroup.procs"),
    async finish() {
      let hit = false;
      try {
        const max = /^max (\d+)$/m.exec(readFileSync(join(dir, "pids.events"), "utf8"));
        hit = max !== null && Number(max[1]) > 0;
      } catch {
        // No events file (an older kernel): fall back to the shell's fork messages.
      }
      // The namespace's last tasks may still be exiting when bwrap has: the cgroup is removed in
      // the background once they are gone, so the call's answer does not wait for it.
      removeWhenEmpty(dir);
      return hit;
    },
  };
}

/**
 * Removes an empty cgroup now, or retries in the background (every 10 ms, for up to 5 s) while
 * its last tasks exit. The timers do not keep the process alive.
 */
export function removeWhenEmpty(dir: string, attempt = 0): void {
  try {
    rmdirSync(dir);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT" || attempt >= 500) return;
    setTimeout(() => removeWhenEmpty(dir, attempt + 1), 10).unref();
  }
}

/** Removes the empty run cgroups a process that has since exited left behind (its background removal never ran). */
function removeLeftovers(base: string): void {
  for (const name of readdirSync(base)) {
    const pid = Number(/^run-(\d+)-\d+$/.exec(name)?.[1]);
    if (!pid || pid === process.pid || alive(pid)) continue;
    try {
      rmdirSync(join(base, name));
    } catch {
      // Still has tasks, or not ours to remove: leave it.
    }
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
}
