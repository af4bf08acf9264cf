import { describe, expect, it } from "vitest";
import { BpfProgram, runBpf } from "../../../src/tools/sandbox/bpf.js";
import {
  DENIED_ENOSYS,
  DENIED_EOPNOTSUPP,
  DENIED_EPERM,
  SECCOMP_ACTIONS,
  seccompData,
  seccompProgram,
  type SeccompArch,
} from "../../../src/tools/sandbox/seccomp.js";

const { allow, eperm, enosys, eopnotsupp, kill } = SECCOMP_ACTIONS;
const S_ISUID = 0o4000;
const S_ISGID = 0o2000;
const O_CREAT = 0o100;
const O_TMPFILE = 0o20200000;

describe.each<SeccompArch>(["x86_64", "aarch64"])("the seccomp filter on %s", (arch) => {
  const program = seccompProgram(arch);
  const verdict = (name: Parameters<typeof seccompData>[1], args: number[] = []) =>
    runBpf(program, seccompData(arch, name, args));

  it("refuses every listed family with EPERM, and clone3, openat2 and io_uring with ENOSYS", () => {
    const missing = arch === "aarch64" ? new Set(["iopl", "ioperm", "uselib"]) : new Set<string>();
    for (const name of DENIED_EPERM) if (!missing.has(name)) expect([name, verdict(name)]).toEqual([name, eperm]);
    for (const name of DENIED_ENOSYS) expect([name, verdict(name)]).toEqual([name, enosys]);
  });

  it("refuses fallocate with EOPNOTSUPP, whatever its mode (posix_fallocate then writes the blocks)", () => {
    expect(DENIED_EOPNOTSUPP).toEqual(["fallocate"]);
    for (const mode of [0, 1 /* FALLOC_FL_KEEP_SIZE */, 0x10 /* FALLOC_FL_ZERO_RANGE */])
      expect(verdict("fallocate", [3, mode])).toBe(eopnotsupp);
  });

  it("allows what builds use: read, openat without O_CREAT, a plain clone (fork, threads), ioctl TCGETS, chmod 0755", () => {
    const read = arch === "x86_64" ? 0 : 63;
    expect(verdict(read)).toBe(allow);
    expect(verdict("openat", [-100, 0, 0o2 /* O_RDWR */, S_ISUID])).toBe(allow); // no O_CREAT: the mode is unused
    expect(verdict("clone", [0x01200011 /* SIGCHLD|CLONE_CHILD_SETTID|CLONE_CHILD_CLEARTID */])).toBe(allow);
    expect(verdict("clone", [0x003d0f00 /* a pthread_create's flags */])).toBe(allow);
    expect(verdict("ioctl", [1, 0x5401 /* TCGETS */])).toBe(allow);
    expect(verdict("fchmodat", [-100, 0, 0o755])).toBe(allow);
    expect(verdict("fchmod", [3, 0o1777])).toBe(allow); // the sticky bit is not setuid
  });

  it("refuses clone with any CLONE_NEW* flag", () => {
    for (const flag of [0x00020000, 0x02000000, 0x04000000, 0x08000000, 0x10000000, 0x20000000, 0x40000000])
      expect(verdict("clone", [0x11 | flag])).toBe(eperm);
  });

  it("refuses TIOCSTI and TIOCLINUX, whatever the upper half of the argument", () => {
    expect(verdict("ioctl", [0, 0x5412])).toBe(eperm);
    expect(verdict("ioctl", [0, 0x541c])).toBe(eperm);
    // The kernel reads the command as 32 bits: a filter comparing all 64 could be walked around with high bits set.
    const data = seccompData(arch, "ioctl", [0, 0x5412]);
    data.writeUInt32LE(1, 16 + 8 + 4);
    expect(runBpf(program, data)).toBe(eperm);
  });

  it("refuses setuid and setgid modes on chmod, fchmod, fchmodat, fchmodat2 and on creating opens and mknod", () => {
    for (const bit of [S_ISUID, S_ISGID]) {
      expect(verdict("fchmod", [3, 0o755 | bit])).toBe(eperm);
      expect(verdict("fchmodat", [-100, 0, 0o755 | bit])).toBe(eperm);
      expect(verdict("fchmodat2", [-100, 0, 0o755 | bit, 0])).toBe(eperm);
      expect(verdict("openat", [-100, 0, O_CREAT | 1, 0o755 | bit])).toBe(eperm);
      expect(verdict("openat", [-100, 0, O_TMPFILE | 2, 0o755 | bit])).toBe(eperm);
      expect(verdict("mknodat", [-100, 0, 0o100000 | 0o644 | bit, 0])).toBe(eperm);
      if (arch === "x86_64") {
        expect(verdict("chmod", [0, 0o755 | bit])).toBe(eperm);
        expect(verdict("open", [0, O_CREAT | 1, 0o755 | bit])).toBe(eperm);
        expect(verdict("creat", [0, 0o755 | bit])).toBe(eperm);
        expect(verdict("mknod", [0, 0o100000 | bit, 0])).toBe(eperm);
      }
    }
  });

  it("kills a system call of another ABI (a foreign audit arch, and x32 on x86_64)", () => {
    const foreign = seccompData(arch, 0);
    foreign.writeUInt32LE(arch === "x86_64" ? 0x40000003 /* i386 */ : 0x40000028 /* arm */, 4);
    expect(runBpf(program, foreign)).toBe(kill);
    if (arch === "x86_64") {
      expect(verdict(0x40000000 | 2)).toBe(kill);
      expect(verdict(0xffffffff)).toBe(allow); // -1, a tracer's skipped call, which the kernel answers ENOSYS
    }
  });
});

describe("BpfProgram", () => {
  it("refuses a conditional jump past 255 instructions rather than emit a wrong one", () => {
    const p = new BpfProgram().load(0).jump("eq", 1, "far");
    for (let i = 0; i < 300; i++) p.ret(0);
    p.label("far").ret(1);
    expect(() => p.assemble()).toThrow(/jump to far is 300 instructions ahead, more than 255/);
  });

  it("refuses an undefined label and a program that does not end in a return", () => {
    expect(() => new BpfProgram().load(0).jump("eq", 1, "nowhere").ret(0).assemble()).toThrow(
      /label nowhere is not defined/,
    );
    expect(() => new BpfProgram().load(0).assemble()).toThrow(/must end with a return/);
  });
});
