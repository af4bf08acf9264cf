import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { findPidsCgroupBase, removeWhenEmpty } from "../../../src/tools/sandbox/pids.js";

const dir = mkdtempSync(join(tmpdir(), "tg-tools-pids-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function files(mountinfo: string, cgroup: string): [string, string] {
  const m = join(dir, `mountinfo-${Math.random()}`);
  const c = join(dir, `cgroup-${Math.random()}`);
  writeFileSync(m, mountinfo);
  writeFileSync(c, cgroup);
  return [m, c];
}

describe("findPidsCgroupBase", () => {
  it("finds the cgroup v1 pids hierarchy and our path in it, and creates the toolgate folder", () => {
    const mount = join(dir, "pids");
    const [m, c] = files(`38 30 0:35 / ${mount} rw,relatime - cgroup cgroup rw,pids\n`, "8:pids:/agents\n4:memory:/x\n");
    expect(findPidsCgroupBase(m, c)).toBe(join(mount, "agents", "toolgate"));
  });

  it("removes the empty run folders an exited process left behind, and keeps a live process's", () => {
    const mount = join(dir, "pids-leftovers");
    const base = join(mount, "toolgate");
    const dead = join(base, "run-2147483646-3"); // no such pid
    const ours = join(base, `run-${process.pid}-1`);
    const busy = join(base, "run-2147483645-1");
    for (const d of [dead, ours, busy]) mkdirSync(d, { recursive: true });
    writeFileSync(join(busy, "tasks"), ""); // not empty: rmdir fails, and it is left alone
    const [m, c] = files(`38 30 0:35 / ${mount} rw,relatime - cgroup cgroup rw,pids\n`, "8:pids:/\n");
    expect(findPidsCgroupBase(m, c)).toBe(base);
    expect([existsSync(dead), existsSync(ours), existsSync(busy)]).toEqual([false, true, true]);
  });

  it("removeWhenEmpty removes an empty folder at once, and a missing one is no error", () => {
    const empty = join(dir, "empty-run");
    mkdirSync(empty);
    removeWhenEmpty(empty);
    expect(existsSync(empty)).toBe(false);
    expect(() => removeWhenEmpty(empty)).not.toThrow();
  });

  it("is null without a pids controller (then only ulimit -u applies)", () => {
    const [m, c] = files("38 30 0:35 / /sys/fs/cgroup/memory rw - cgroup cgroup rw,memory\n", "4:memory:/\n");
    expect(findPidsCgroupBase(m, c)).toBeNull();
  });

  it("is null when the files cannot be read", () => {
    expect(findPidsCgroupBase(join(dir, "none"), join(dir, "none2"))).toBeNull();
  });
});
