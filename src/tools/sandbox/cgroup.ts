/**
 * Per-run cgroups: the kernel's own bounds on one sandboxed run, and its accounting.
 * - pids: `pids.max` bounds processes and threads (a fork bomb), `pids.events` says it refused one;
 * - memory: `memory.limit_in_bytes` (+ `memory.memsw.limit_in_bytes`, so swap does not extend it)
 *   on cgroup v1, `memory.max` (+ `memory.swap.max` 0, `memory.oom.group` 1) on v2; tmpfs pages
 *   written under /tmp and HOME are charged here too; the OOM killer's kills are counted in
 *   `memory.oom_control` (v1) or `memory.events` (v2);
 * - cpu: the whole tree's CPU time, `cpuacct.usage` (v1) or `cpu.stat` usage_usec (v2).
 *
 * Each controller is used where it is mounted (v1) or delegated to toolgate's own cgroup (v2) and
 * toolgate may create cgroups there — checked once, up front, by creating and removing one. A
 * controller that fails that check is left out and the run falls back to rlimits (`ulimit`),
 * so a folder root once created does not break a later unprivileged toolgate. The launcher joins
 * every run cgroup before it starts bwrap (bubblewrap.ts), so nothing of the run starts outside.
 */
import {
  accessSync,
  constants,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmdirSync,
  writeFileSync,
} from "node:fs";
import { join, relative } from "node:path";
import { NoEffectError } from "../../core/errors.js";

export type Controller = "pids" | "memory" | "cpu";

/** Where one controller's per-run cgroups are created. */
export interface CgroupBase {
  dir: string;
  version: 1 | 2;
}

/** The usable bases, by controller (a controller without one is absent). */
export type CgroupBases = Partial<Record<Controller, CgroupBase>>;

export interface RunCgroupLimits {
  /** pids.max: processes and threads. */
  maxTasks: number;
  /** Bytes of memory (RAM, swap excluded from growing it). */
  memoryBytes: number;
}

/** One run's cgroups. */
export interface RunCgroup {
  /** The `cgroup.procs` files the launcher writes its own pid into, one per hierarchy. */
  procsFiles: string[];
  /** A `cgroup.procs` listing every process of the run (for the write and CPU watch), or null. */
  membersFile: string | null;
  /** CPU time of the whole run so far in nanoseconds, or null without a cpu base. */
  cpuNanos(): number | null;
  /** Reads what the kernel refused, then removes the cgroups (in the background while tasks exit). */
  finish(): { process_limit_hit: boolean; memory_limit_hit: boolean; cpu_nanos: number | null };
}

let counter = 0;

/** The controllers' v1 files and names. */
const V1_NAME: Record<Controller, string> = { pids: "pids", memory: "memory", cpu: "cpuacct" };

/**
 * Finds the usable cgroup bases for this process (folder `toolgate` under its own cgroup in each
 * hierarchy). `warn` hears once why a mounted controller cannot be used.
 */
export function findCgroupBases(
  options: { mountinfo?: string; cgroupFile?: string; warn?: (message: string) => void } = {},
): CgroupBases {
  const warn = options.warn ?? (() => {});
  let mounts: string[][];
  let own: string[];
  try {
    mounts = readFileSync(options.mountinfo ?? "/proc/self/mountinfo", "utf8")
      .split("\n")
      .filter(Boolean)
      .map((l) => l.split(" "));
    own = readFileSync(options.cgroupFile ?? "/proc/self/cgroup", "utf8")
      .split("\n")
      .filter(Boolean);
  } catch {
    return {};
  }
  const bases: CgroupBases = {};
  const unusable: string[] = [];
  // Only a folder that exists but cannot be used is news (root left it behind): without one, an unprivileged user
  // simply has no cgroups.
  const tryBase = (controller: Controller, base: CgroupBase) => {
    const existed = existsSync(base.dir);
    const problem = usable(base.dir);
    if (problem === null) bases[controller] = base;
    else if (existed) unusable.push(`${controller} (${base.dir}: ${problem})`);
  };

  // cgroup v1: a mount of type "cgroup" whose super options name the controller.
  for (const controller of ["pids", "memory", "cpu"] as Controller[]) {
    const name = V1_NAME[controller];
    const mount = mounts.find((f) => fsType(f) === "cgroup" && superOptions(f).includes(name));
    const path = own
      .map((l) => l.split(":"))
      .find((p) => p.length >= 3 && p[1]!.split(",").includes(name))
      ?.slice(2)
      .join(":");
    if (!mount || path === undefined) continue;
    const dir = cgroupDir(mount, path);
    if (dir !== null) tryBase(controller, { dir: join(dir, "toolgate"), version: 1 });
  }

  // cgroup v2: controllers delegated to our own cgroup (listed in its cgroup.subtree_control).
  const v2 = mounts.find((f) => fsType(f) === "cgroup2");
  const v2Path = own.find((l) => l.startsWith("0::"))?.slice(3);
  const missing = (["pids", "memory", "cpu"] as Controller[]).filter((c) => bases[c] === undefined);
  if (v2 && v2Path !== undefined && missing.length > 0) {
    const dir = cgroupDir(v2, v2Path);
    if (dir !== null) {
      const delegated = new Set(readOr(join(dir, "cgroup.subtree_control"), "").split(/\s+/).filter(Boolean));
      // CPU time (cpu.stat usage_usec) is kept by every v2 cgroup, with or without the cpu controller.
      const wanted = missing.filter((c) => c === "cpu" || delegated.has(c));
      if (wanted.length > 0) {
        const base: CgroupBase = { dir: join(dir, "toolgate"), version: 2 };
        const enable = wanted.filter((c) => c !== "cpu").map((c) => `+${c}`);
        const existed = existsSync(base.dir);
        const problem = usable(base.dir, () => {
          if (enable.length) writeFileSync(join(base.dir, "cgroup.subtree_control"), enable.join(" "));
        });
        if (problem === null) for (const c of wanted) bases[c] = base;
        else if (existed) unusable.push(`${wanted.join(", ")} (${base.dir}: ${problem})`);
      }
    }
  }
  if (unusable.length) {
    warn(
      `[toolgate] bash_execute cannot create cgroups for ${unusable.join("; ")}: runs are bounded by ulimit alone there (processes -u, memory -v, CPU -t). ` +
        "To use the cgroup, let toolgate's user create folders in it, or remove a folder an earlier run as root left behind.",
    );
  }
  return bases;
}

const fsType = (fields: string[]) => fields[fields.indexOf("-") + 1];
const superOptions = (fields: string[]) => (fields[fields.indexOf("-") + 3] ?? "").split(",");

/** The folder of cgroup `path` under a mount whose root (field 4) is a cgroup of the hierarchy, or null if outside it.
 * */
function cgroupDir(mount: string[], path: string): string | null {
  const [root, mountPoint] = [mount[3] ?? "/", mount[4]];
  if (mountPoint === undefined) return null;
  const rel = relative(root, path);
  if (rel.startsWith("..")) return null;
  return join(mountPoint.replace(/\\040/g, " "), rel);
}

/** Null when cgroups can be created and removed under `dir` (created if missing), else why not. */
function usable(dir: string, prepare?: () => void): string | null {
  try {
    mkdirSync(dir, { recursive: true });
    accessSync(dir, constants.W_OK);
    prepare?.();
    const probe = join(dir, `probe-${process.pid}-${++counter}`);
    mkdirSync(probe);
    rmdirSync(probe);
    removeLeftovers(dir);
    return null;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code ?? (err as Error).message;
  }
}

/**
 * Creates one run's cgroups under `bases`. Throws NoEffectError (nothing has run) naming the
 * folder and the fix when one cannot be created or limited.
 */
export function createRunCgroup(bases: CgroupBases, limits: RunCgroupLimits): RunCgroup {
  const name = `run-${process.pid}-${++counter}`;
  const dirs = new Map<string, CgroupBase>();
  const dirOf = (c: Controller) => (bases[c] ? join(bases[c]!.dir, name) : null);
  for (const c of ["pids", "memory", "cpu"] as Controller[]) if (bases[c]) dirs.set(dirOf(c)!, bases[c]!);
  const created: string[] = [];
  const step = (what: string, fn: () => void) => {
    try {
      fn();
    } catch (err) {
      for (const d of created.reverse()) removeWhenEmpty(d);
      const code = (err as NodeJS.ErrnoException).code ?? (err as Error).message;
      throw new NoEffectError(
        `bash_execute could not ${what} (${code}); nothing was run. Fix: let toolgate's user write there (or remove the folder if an earlier run as root created it), or create the catalog with sandbox cgroups "off" to bound runs by ulimit alone`,
        "sandbox_unavailable",
      );
    }
  };
  for (const dir of dirs.keys()) {
    step(`create its cgroup ${dir}`, () => mkdirSync(dir));
    created.push(dir);
  }
  const pids = dirOf("pids");
  if (pids) step(`set ${join(pids, "pids.max")}`, () => writeFileSync(join(pids, "pids.max"), String(limits.maxTasks)));
  const memory = dirOf("memory");
  if (memory) {
    const bytes = String(Math.floor(limits.memoryBytes));
    if (bases.memory!.version === 1) {
      step(`set ${join(memory, "memory.limit_in_bytes")}`, () =>
        writeFileSync(join(memory, "memory.limit_in_bytes"), bytes),
      );
      // Present only where swap accounting is on; it must not be below the memory limit.
      if (exists(join(memory, "memory.memsw.limit_in_bytes")))
        step(`set ${join(memory, "memory.memsw.limit_in_bytes")}`, () =>
          writeFileSync(join(memory, "memory.memsw.limit_in_bytes"), bytes),
        );
    } else {
      step(`set ${join(memory, "memory.max")}`, () => writeFileSync(join(memory, "memory.max"), bytes));
      if (exists(join(memory, "memory.swap.max")))
        step(`set ${join(memory, "memory.swap.max")}`, () => writeFileSync(join(memory, "memory.swap.max"), "0"));
      if (exists(join(memory, "memory.oom.group")))
        step(`set ${join(memory, "memory.oom.group")}`, () => writeFileSync(join(memory, "memory.oom.group"), "1"));
    }
  }
  const cpu = dirOf("cpu");
  const cpuNanos = (): number | null => {
    if (!cpu) return null;
    if (bases.cpu!.version === 1) return Number(readOr(join(cpu, "cpuacct.usage"), "NaN").trim()) || 0;
    const usec = /^usage_usec (\d+)$/m.exec(readOr(join(cpu, "cpu.stat"), ""));
    return usec ? Number(usec[1]) * 1000 : 0;
  };
  return {
    procsFiles: [...dirs.keys()].map((d) => join(d, "cgroup.procs")),
    membersFile: pids
      ? join(pids, "cgroup.procs")
      : memory
        ? join(memory, "cgroup.procs")
        : cpu
          ? join(cpu, "cgroup.procs")
          : null,
    cpuNanos,
    finish() {
      const counted = (file: string, key: string) =>
        Number(new RegExp(`^${key} (\\d+)$`, "m").exec(readOr(file, ""))?.[1] ?? 0) > 0;
      const process_limit_hit = pids !== null && counted(join(pids, "pids.events"), "max");
      const memory_limit_hit =
        memory !== null &&
        counted(join(memory, bases.memory!.version === 1 ? "memory.oom_control" : "memory.events"), "oom_kill");
      const cpu_nanos = cpuNanos();
      // The namespace's last tasks may still be exiting when bwrap has: the cgroups are removed in
      // the background once they are gone, so the call's answer does not wait for it.
      for (const dir of dirs.keys()) removeWhenEmpty(dir);
      return { process_limit_hit, memory_limit_hit, cpu_nanos };
    },
  };
}

function readOr(file: string, fallback: string): string {
  try {
    return readFileSync(file, "utf8");
  } catch {
    return fallback;
  }
}

function exists(file: string): boolean {
  try {
    accessSync(file);
    return true;
  } catch {
    return false;
  }
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
    const pid = Number(/^(?:run|probe)-(\d+)-\d+$/.exec(name)?.[1]);
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
