/**
 * The escape suite, bounds: one bash_execute call cannot take the server's memory, disk or CPU,
 * and calls past the concurrency cap are refused at once with nothing run. Each bound ends the
 * command with a typed denial in `sandbox_denied` and the observation's text; the defaults let
 * ordinary heavy work through. As root the bounds are cgroups (plus rlimits); as an unprivileged
 * toolgate without cgroups (a child under setpriv) they are rlimits and the watch alone.
 */
import { existsSync, readdirSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { NoEffectError } from "../../src/core/errors.js";
import type { ToolContext, ToolSpec } from "../../src/core/tool.js";
import { DEFAULT_BASH_LIMITS, executeBash, launcherChooser, type BashLimits } from "../../src/tools/bash.js";
import { createCodingCatalog } from "../../src/tools/catalog.js";
import { createBubblewrap } from "../../src/tools/sandbox/bubblewrap.js";
import { findCgroupBases } from "../../src/tools/sandbox/cgroup.js";
import { binaryAvailable } from "../support/require.js";
import { makeWorkspace, stable } from "./fixtures.js";
import { asRoot, bashAsNobody, handToNobody } from "./sandbox/unprivileged.js";

const s = makeWorkspace("escape-bounds");
afterAll(() => s.cleanup());
const ready = binaryAvailable("bwrap") && binaryAvailable("python3");
const launcher = launcherChooser(createBubblewrap({ warn: () => {} }), false);
const MiB = 1024 * 1024;

interface Out {
  exit_code: number | null;
  signal: string | null;
  timed_out: boolean;
  stdout: string;
  stderr: string;
  sandbox_denied: { code: string; message: string }[];
}
async function bash(
  command: string,
  limits: Partial<BashLimits>,
  timeout_ms = 30_000,
): Promise<{ out: Out; text: string }> {
  const r = await executeBash(launcher, s.root, { command, timeout_ms }, { ...DEFAULT_BASH_LIMITS, ...limits });
  return { out: r.output as unknown as Out, text: r.text! };
}
const codes = (o: { sandbox_denied: { code: string }[] }) => o.sandbox_denied.map((d) => d.code);
/** Disk space FALLOCATE's files in `dir` take (allocated blocks, not their sizes), in MiB. */
const reservedMiB = (dir: string) =>
  readdirSync(dir)
    .filter((f) => /^(first|f\d+)\.bin$/.test(f))
    .reduce((sum, f) => sum + statSync(join(dir, f)).blocks * 512, 0) / MiB;

/** Each probe: a command that takes more than its bound, and the bound. */
const MEMORY = {
  command: `python3 -c 'x = " " * (2048 << 20); print("allocated")'`,
  limits: { max_memory_bytes: 256 * MiB },
};
const TMPFS = {
  command: "head -c 300M /dev/zero > /tmp/big; head -c 300M /dev/zero > $HOME/big; du -sm /tmp/big $HOME/big | cut -f1",
  limits: { max_tmp_bytes: 64 * MiB },
};
const WRITES = {
  command: "i=0; while :; do i=$((i+1)); head -c 1M /dev/zero > w$i.bin; done",
  limits: { max_write_bytes: 16 * MiB },
};
/** Space reserved without writing: fallocate(1), then 64 files of 8 MiB by posix_fallocate (512 MiB if nothing stops
 * it). */
const FALLOCATE = {
  command: `fallocate -l 8M first.bin; echo "fallocate exit $?"; python3 -c 'import os
for i in range(64):
    fd = os.open("f%d.bin" % i, os.O_CREAT | os.O_WRONLY)
    os.posix_fallocate(fd, 0, 8 << 20)
    os.close(fd)
print("reserved")'`,
  limits: { max_write_bytes: 16 * MiB },
};
const CPU_TREE = {
  command: "for i in $(seq 16); do (while :; do :; done) & done; wait",
  limits: { max_cpu_seconds: 1 },
};

describe.runIf(ready && asRoot)("escape suite: bounds of one call, toolgate as root", () => {
  it("memory: the whole command is held to max_memory_bytes (cgroup), killed past it, and told so", async () => {
    const { out, text } = await bash(MEMORY.command, MEMORY.limits);
    expect(out.stdout).not.toContain("allocated");
    expect(codes(out)).toContain("memory_limit");
    expect(text).toContain(
      "[sandbox denied: the sandbox's memory limit (256 MiB for the whole command, files in /tmp and HOME included) stopped it",
    );
  });

  it("tmpfs: /tmp and HOME hold at most max_tmp_bytes each, and a full one is reported as disk_limit", async () => {
    const { out, text } = await bash(TMPFS.command, TMPFS.limits);
    expect(out.stdout).toBe("64\n64\n");
    expect(out.stderr).toContain("No space left on device");
    expect(codes(out)).toContain("disk_limit");
    expect(text).toContain(
      "[sandbox denied: a write found no space left: /tmp and HOME are tmpfs mounts of 64 MiB each",
    );
  });

  it("disk: writing past max_write_bytes to the workspace stops the command (it does not run to its timeout)", async () => {
    const { out, text } = await bash(WRITES.command, WRITES.limits);
    expect([out.timed_out, out.signal]).toEqual([false, "SIGKILL"]);
    expect(codes(out)).toContain("disk_limit");
    expect(stable(text, s)).toMatch(
      /\[sandbox denied: the command wrote more than the sandbox allows to the workspace in one call \(16 MiB; about [\d.]+ MiB seen\) and was stopped/,
    );
  });

  it("disk: space reserved without a write is refused (fallocate) or written and counted (posix_fallocate's fallback), and stopped", async () => {
    const t = makeWorkspace("escape-bounds-fallocate");
    try {
      const r = await executeBash(
        launcher,
        t.root,
        { command: FALLOCATE.command, timeout_ms: 60_000 },
        { ...DEFAULT_BASH_LIMITS, ...FALLOCATE.limits },
      );
      const out = r.output as unknown as Out;
      expect(out.stdout).toBe("fallocate exit 1\n");
      expect(out.stderr).toContain("fallocate: fallocate failed: Operation not supported");
      expect([out.timed_out, out.signal, codes(out)]).toEqual([false, "SIGKILL", ["disk_limit"]]);
      expect(reservedMiB(t.root)).toBeLessThan(512); // not all 64 files: the run was stopped on the way
    } finally {
      t.cleanup();
    }
  });

  it("disk: one file is held to max_write_bytes too (RLIMIT_FSIZE is the smaller of the two)", async () => {
    const { out } = await bash("head -c 20M /dev/zero > big.bin", { max_write_bytes: 16 * MiB });
    expect(out.signal).toBe("SIGXFSZ");
    expect(codes(out)).toContain("file_size_limit");
  });

  it("CPU: the whole tree is held to max_cpu_seconds together (16 busy processes are stopped, not left to each use its own)", async () => {
    const tree = await bash(CPU_TREE.command, CPU_TREE.limits);
    // Per-process limits alone would let the loops run 16 CPU-seconds; the run's own total stops them (SIGKILL).
    expect([tree.out.timed_out, tree.out.signal]).toEqual([false, "SIGKILL"]);
    expect(codes(tree.out)).toContain("cpu_limit");
    const one = await bash("while :; do :; done", { max_cpu_seconds: 1 });
    expect([one.out.timed_out, codes(one.out)]).toEqual([false, ["cpu_limit"]]);
    expect(one.text).toContain(
      "[sandbox denied: the sandbox's CPU limit (1 CPU-second for the whole command, all processes together) stopped it]",
    );
  });

  it("too many calls at once: one past max_concurrent is refused at once (NoEffectError, nothing run), and the slot returns", async () => {
    const t = makeWorkspace("escape-bounds-concurrent");
    try {
      const tools = new Map<string, ToolSpec>(
        createCodingCatalog({
          workspace: t.root,
          sandbox: { warn: () => {} },
          limits: { bash: { max_concurrent: 2 } },
        }).map((x) => [x.name, x]),
      );
      const ctx = (): ToolContext => ({
        signal: new AbortController().signal,
        trajectory_id: "t",
        turn: 0,
        call_id: "c",
        now: Date.now,
        budget_tokens: 100_000,
      });
      const call = (command: string) =>
        Promise.resolve(tools.get("bash_execute")!.handler({ command, timeout_ms: 30_000 }, ctx()));
      const waiting = [1, 2].map((n) =>
        call(`touch started-${n}; while [ ! -e go ]; do sleep 0.05; done; echo done-${n}`),
      );
      const third = await call("touch third-ran").then(
        () => null,
        (e: unknown) => e,
      );
      writeFileSync(join(t.root, "go"), "");
      await Promise.all(waiting);
      expect(third).toBeInstanceOf(NoEffectError);
      expect([(third as NoEffectError).code, (third as Error).message]).toEqual([
        "too_many_calls",
        "too many bash_execute calls at once: 2 are running, the most this server allows (limits.bash.max_concurrent); nothing was run. Wait for one to finish, then call again (the operator can raise limits.bash.max_concurrent)",
      ]);
      expect(existsSync(join(t.root, "third-ran"))).toBe(false);
      const after = (await call("echo again")) as { output: { stdout: string } };
      expect(after.output.stdout).toBe("again\n");
    } finally {
      t.cleanup();
    }
  });

  it("the defaults let heavy ordinary work through: 1.5 GiB of memory, WebAssembly, 200 processes, 200 MiB written", async () => {
    const { out } = await bash(
      [
        `node -e "const b = Buffer.alloc(1.5 * 2 ** 30, 1); new WebAssembly.Memory({ initial: 1 }); console.log('node', b.length > 0)"`,
        "for i in $(seq 200); do sleep 2 & done; wait; echo procs",
        "head -c 200M /dev/zero > heavy.bin && rm heavy.bin && echo wrote",
      ].join(" && "),
      {},
      120_000,
    );
    expect([out.stdout, out.sandbox_denied]).toEqual(["node true\nprocs\nwrote\n", []]);
  });
});

describe("bash limits given to the catalog", () => {
  it("an unknown field or a value that is not a positive number is refused at creation, naming the field", () => {
    const make = (bash: Record<string, unknown>) => () =>
      createCodingCatalog({ workspace: s.root, limits: { bash: bash as Partial<BashLimits> } });
    expect(make({ max_memory_bytes: -1 })).toThrow(
      "limits.bash.max_memory_bytes must be a positive number; received -1; example 4294967296 (the default)",
    );
    expect(make({ max_concurrent: 1.5 })).toThrow(
      "limits.bash.max_concurrent must be a positive integer; received 1.5; example 4 (the default)",
    );
    expect(make({ max_cpu_seconds: "10" })).toThrow(
      'limits.bash.max_cpu_seconds must be a positive number; received "10"; example 600 (the default)',
    );
    expect(make({ max_memory: 1 })).toThrow(
      "limits.bash.max_memory is not a bash limit; the limits are max_processes, max_file_bytes, max_memory_bytes, max_cpu_seconds, max_write_bytes, max_tmp_bytes, output_bytes, output_tokens, max_concurrent",
    );
  });
});

describe.runIf(ready && asRoot)(
  "escape suite: bounds of one call, toolgate as an unprivileged user (no cgroups)",
  () => {
    const t = makeWorkspace("escape-bounds-nobody");
    afterAll(() => t.cleanup());
    handToNobody(t.base, t.root);

    it("a cgroup folder root once created does not break it: the run falls back to rlimits and runs (nothing IN_DOUBT)", async () => {
      findCgroupBases(); // as root: makes sure the folders exist, root-owned, as after any root run
      const r = await bashAsNobody(t.root, "echo ran; id -u");
      expect(r.error).toBeUndefined();
      expect(r.output!.stdout).toBe("ran\n65534\n");
    });

    it("memory: address space is bounded (RLIMIT_AS), and the failure is reported as memory_limit", async () => {
      const r = await bashAsNobody(t.root, MEMORY.command, MEMORY.limits);
      expect(r.output!.stdout).not.toContain("allocated");
      expect(r.output!.stderr).toContain("MemoryError");
      expect(codes(r.output!)).toContain("memory_limit");
    });

    it("tmpfs, disk and CPU bounds hold from the process tree's own figures", async () => {
      const tmp = await bashAsNobody(t.root, TMPFS.command, TMPFS.limits);
      expect([tmp.output!.stdout, codes(tmp.output!)]).toEqual(["64\n64\n", ["disk_limit"]]);
      const writes = await bashAsNobody(t.root, WRITES.command, WRITES.limits);
      expect([writes.output!.timed_out, writes.output!.signal, codes(writes.output!)]).toEqual([
        false,
        "SIGKILL",
        ["disk_limit"],
      ]);
      const reserve = await bashAsNobody(t.root, FALLOCATE.command, FALLOCATE.limits);
      expect([reserve.output!.stdout, reserve.output!.signal, codes(reserve.output!)]).toEqual([
        "fallocate exit 1\n",
        "SIGKILL",
        ["disk_limit"],
      ]);
      expect(reservedMiB(t.root)).toBeLessThan(512); // not all 64 files: the run was stopped on the way
      const cpu = await bashAsNobody(t.root, CPU_TREE.command, CPU_TREE.limits);
      expect([cpu.output!.timed_out, cpu.output!.signal, codes(cpu.output!)]).toEqual([
        false,
        "SIGKILL",
        ["cpu_limit"],
      ]);
    });
  },
);
