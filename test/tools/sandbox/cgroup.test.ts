import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { NoEffectError } from "../../../src/core/errors.js";
import { createRunCgroup, findCgroupBases, removeWhenEmpty } from "../../../src/tools/sandbox/cgroup.js";

// Plain folders stand in for cgroup mounts: the module only reads mountinfo, creates folders and writes files.
const dir = mkdtempSync(join(tmpdir(), "tg-tools-cgroup-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function files(mountinfo: string, cgroup: string): { mountinfo: string; cgroupFile: string } {
  const m = join(dir, `mountinfo-${Math.random()}`);
  const c = join(dir, `cgroup-${Math.random()}`);
  writeFileSync(m, mountinfo);
  writeFileSync(c, cgroup);
  return { mountinfo: m, cgroupFile: c };
}
const v1 = (id: number, mount: string, controllers: string, root = "/") =>
  `${id} 30 0:${id} ${root} ${mount} rw,relatime - cgroup cgroup rw,${controllers}\n`;

describe("findCgroupBases", () => {
  it("finds each cgroup v1 controller's hierarchy and our path in it, and creates the toolgate folder", () => {
    const [pids, memory, cpu] = ["pids", "memory", "cpuacct"].map((c) => join(dir, `v1-${c}`));
    const f = files(
      v1(38, pids!, "pids") + v1(35, memory!, "memory") + v1(33, cpu!, "cpu,cpuacct"),
      "8:pids:/agents\n4:memory:/process_api/abc\n2:cpu,cpuacct:/\n",
    );
    expect(findCgroupBases(f)).toEqual({
      pids: { dir: join(pids!, "agents", "toolgate"), version: 1 },
      memory: { dir: join(memory!, "process_api", "abc", "toolgate"), version: 1 },
      cpu: { dir: join(cpu!, "toolgate"), version: 1 },
    });
  });

  it("reads our path relative to the mount's root (a cgroup namespace or a bind of a subtree)", () => {
    const mount = join(dir, "v1-rooted");
    const f = files(v1(38, mount, "pids", "/outer"), "8:pids:/outer/inner\n");
    expect(findCgroupBases(f).pids).toEqual({ dir: join(mount, "inner", "toolgate"), version: 1 });
  });

  it("takes cgroup v2 controllers only where they are delegated to our cgroup, and enables them for the runs", () => {
    const mount = join(dir, "v2");
    mkdirSync(join(mount, "svc"), { recursive: true });
    writeFileSync(join(mount, "svc", "cgroup.subtree_control"), "memory pids\n");
    const f = files(`41 31 0:38 / ${mount} rw,relatime - cgroup2 cgroup2 rw\n`, "0::/svc\n");
    const base = { dir: join(mount, "svc", "toolgate"), version: 2 };
    expect(findCgroupBases(f)).toEqual({ pids: base, memory: base, cpu: base });
    expect(readFileSync(join(base.dir, "cgroup.subtree_control"), "utf8")).toBe("+pids +memory");
  });

  it("uses only CPU accounting from a v2 hierarchy that delegates no controller (a hybrid host's unified mount)", () => {
    const mount = join(dir, "v2-empty");
    mkdirSync(mount, { recursive: true });
    writeFileSync(join(mount, "cgroup.subtree_control"), "");
    const f = files(`41 31 0:38 / ${mount} rw,relatime - cgroup2 cgroup2 rw\n`, "0::/\n");
    expect(findCgroupBases(f)).toEqual({ cpu: { dir: join(mount, "toolgate"), version: 2 } });
  });

  it("removes the empty run folders an exited process left behind, and keeps a live process's", () => {
    const mount = join(dir, "v1-leftovers");
    const base = join(mount, "toolgate");
    const dead = join(base, "run-2147483646-3"); // no such pid
    const ours = join(base, `run-${process.pid}-1`);
    const busy = join(base, "run-2147483645-1");
    for (const d of [dead, ours, busy]) mkdirSync(d, { recursive: true });
    writeFileSync(join(busy, "tasks"), ""); // not empty: rmdir fails, and it is left alone
    expect(findCgroupBases(files(v1(38, mount, "pids"), "8:pids:/\n")).pids?.dir).toBe(base);
    expect([existsSync(dead), existsSync(ours), existsSync(busy)]).toEqual([false, true, true]);
  });

  it("leaves out a controller whose folder cannot be created, and says so when an earlier run left it behind", () => {
    const blocker = join(dir, "a-file");
    writeFileSync(blocker, "");
    const warnings: string[] = [];
    // The mount point is a file: nothing can be created under it (as a folder owned by another user would refuse).
    const f = files(v1(38, blocker, "pids") + v1(35, join(dir, "v1-ok"), "memory"), "8:pids:/\n4:memory:/\n");
    const found = findCgroupBases({ ...f, warn: (m) => warnings.push(m) });
    expect(found.pids).toBeUndefined();
    expect(found.memory?.dir).toBe(join(dir, "v1-ok", "toolgate"));
    expect(warnings).toEqual([]); // nothing was left behind: an unprivileged user simply has no cgroups here
  });

  it("is empty without controllers, and when the files cannot be read", () => {
    expect(
      findCgroupBases(
        files("38 30 0:35 / /sys/fs/cgroup/systemd rw - cgroup cgroup rw,name=systemd\n", "1:name=systemd:/\n"),
      ),
    ).toEqual({});
    expect(findCgroupBases({ mountinfo: join(dir, "none"), cgroupFile: join(dir, "none2") })).toEqual({});
  });
});

describe("createRunCgroup", () => {
  it("writes the pids and memory limits, lists one procs file per hierarchy, and reads back what the kernel refused", () => {
    const bases = {
      pids: { dir: join(dir, "run-pids"), version: 1 as const },
      memory: { dir: join(dir, "run-mem"), version: 1 as const },
    };
    for (const b of Object.values(bases)) mkdirSync(b.dir, { recursive: true });
    const run = createRunCgroup(bases, { maxTasks: 68, memoryBytes: 1 << 30 });
    const [pidsDir, memDir] = run.procsFiles.map((f) => join(f, ".."));
    expect(readFileSync(join(pidsDir!, "pids.max"), "utf8")).toBe("68");
    expect(readFileSync(join(memDir!, "memory.limit_in_bytes"), "utf8")).toBe(String(1 << 30));
    expect(run.membersFile).toBe(join(pidsDir!, "cgroup.procs"));
    writeFileSync(join(pidsDir!, "pids.events"), "max 3\n");
    writeFileSync(join(memDir!, "memory.oom_control"), "oom_kill_disable 0\nunder_oom 0\noom_kill 1\n");
    expect(run.finish()).toMatchObject({ process_limit_hit: true, memory_limit_hit: true, cpu_nanos: null });
  });

  it("refuses with NoEffectError naming the folder and the fix when a run's cgroup cannot be created", () => {
    const blocker = join(dir, "run-blocker");
    writeFileSync(blocker, "");
    const err = (() => {
      try {
        createRunCgroup({ pids: { dir: blocker, version: 1 } }, { maxTasks: 10, memoryBytes: 1 << 20 });
      } catch (e) {
        return e;
      }
    })();
    expect(err).toBeInstanceOf(NoEffectError);
    expect((err as NoEffectError).code).toBe("sandbox_unavailable");
    expect((err as Error).message).toMatch(
      new RegExp(
        `^bash_execute could not create its cgroup ${blocker}/run-\\d+-\\d+ \\(ENOTDIR\\); nothing was run\\. Fix: `,
      ),
    );
  });

  it("removeWhenEmpty removes an empty folder at once, and a missing one is no error", () => {
    const empty = join(dir, "empty-run");
    mkdirSync(empty);
    removeWhenEmpty(empty);
    expect(existsSync(empty)).toBe(false);
    expect(() => removeWhenEmpty(empty)).not.toThrow();
  });
});
