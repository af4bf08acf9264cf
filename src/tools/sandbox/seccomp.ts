/**
 * The seccomp filter every sandboxed process runs under (bwrap `--seccomp FD`). It is a deny
 * list: ordinary programs (compilers, package managers, test runners, git) keep every system
 * call they use, and the calls that only serve to reach past the envelope fail.
 *
 * Refused with EPERM ("Operation not permitted"):
 * - new namespaces and joining others: unshare, setns, and clone with any CLONE_NEW* flag;
 * - the mount API: mount, umount2, pivot_root, open_tree, open_tree_attr, move_mount, fsopen,
 *   fsconfig, fsmount, fspick, mount_setattr;
 * - the kernel keyring: keyctl, add_key, request_key;
 * - kernel attack surface a build does not need: bpf, perf_event_open, userfaultfd;
 * - host administration: kexec_load, kexec_file_load, init_module, finit_module, delete_module,
 *   reboot, swapon, swapoff, settimeofday, clock_settime, clock_adjtime, adjtimex, syslog, acct,
 *   quotactl, quotactl_fd, lookup_dcookie, nfsservctl, uselib, vhangup (and iopl, ioperm on x86_64);
 * - open_by_handle_at (opens files by inode handle, around every path check);
 * - ioctl TIOCSTI and TIOCLINUX (pushing keystrokes into a terminal);
 * - setuid and setgid files: chmod, fchmod, fchmodat, fchmodat2 with S_ISUID or S_ISGID in the
 *   mode, and open, openat, creat, mknod, mknodat creating a file with either bit.
 * Refused with ENOSYS ("not implemented", so libc and runtimes fall back to calls checked above):
 * clone3 (its flags sit in memory a filter cannot read; glibc falls back to clone), openat2 (its
 * mode likewise; callers fall back to openat), io_uring_setup, io_uring_enter, io_uring_register
 * (io_uring performs file operations without passing through this filter).
 * Refused with EOPNOTSUPP ("not supported by this file system"): fallocate, which reserves disk
 * blocks without writing them, so the monitor's count of bytes written never sees them; glibc's
 * posix_fallocate then falls back to writing the blocks, which is counted (monitor.ts).
 * Killed (SIGSYS): a system call of another ABI than the host's — 32-bit x86 (int 0x80) or x32 on
 * x86_64, 32-bit ARM on aarch64 — whose numbers the tables here do not describe.
 *
 * ptrace stays allowed (strace and gdb work): the sandbox has its own PID namespace, so only its
 * own processes can be traced; bwrap applies the same filter to its init process; and since
 * Linux 4.8 the kernel checks seccomp again after a tracer changes a system call.
 */
import { arch as hostArch, endianness } from "node:os";
import { BpfProgram } from "./bpf.js";

const AUDIT_ARCH_X86_64 = 0xc000003e;
const AUDIT_ARCH_AARCH64 = 0xc00000b7;
/** x32 system calls on x86_64 carry this bit in their number. */
const X32_SYSCALL_BIT = 0x40000000;

const SECCOMP_RET_KILL_PROCESS = 0x80000000;
const SECCOMP_RET_ERRNO = 0x00050000;
const SECCOMP_RET_ALLOW = 0x7fff0000;
const EPERM = 1;
const ENOSYS = 38;
const EOPNOTSUPP = 95;

const CLONE_NEW_ANY = 0x00020000 | 0x02000000 | 0x04000000 | 0x08000000 | 0x10000000 | 0x20000000 | 0x40000000; // NS CGROUP UTS IPC USER PID NET
const S_ISUID_OR_GID = 0o4000 | 0o2000;
const O_CREAT_OR_TMPFILE = 0o100 | 0o20000000; // O_CREAT, __O_TMPFILE (the same on x86_64 and aarch64)
const TIOCSTI = 0x5412;
const TIOCLINUX = 0x541c;

/** Calls refused with EPERM outright, by name. */
export const DENIED_EPERM = [
  "unshare",
  "setns",
  "mount",
  "umount2",
  "pivot_root",
  "open_tree",
  "open_tree_attr",
  "move_mount",
  "fsopen",
  "fsconfig",
  "fsmount",
  "fspick",
  "mount_setattr",
  "keyctl",
  "add_key",
  "request_key",
  "bpf",
  "perf_event_open",
  "userfaultfd",
  "kexec_load",
  "kexec_file_load",
  "init_module",
  "finit_module",
  "delete_module",
  "reboot",
  "swapon",
  "swapoff",
  "settimeofday",
  "clock_settime",
  "clock_adjtime",
  "adjtimex",
  "syslog",
  "acct",
  "quotactl",
  "quotactl_fd",
  "lookup_dcookie",
  "nfsservctl",
  "uselib",
  "vhangup",
  "iopl",
  "ioperm",
  "open_by_handle_at",
] as const;
/** Calls refused with ENOSYS, so callers fall back to a call the filter can check. */
export const DENIED_ENOSYS = ["clone3", "openat2", "io_uring_setup", "io_uring_enter", "io_uring_register"] as const;
/** Calls refused with EOPNOTSUPP, so callers fall back to writing (which the disk bound counts). */
export const DENIED_EOPNOTSUPP = ["fallocate"] as const;

type Name =
  | (typeof DENIED_EPERM)[number]
  | (typeof DENIED_ENOSYS)[number]
  | (typeof DENIED_EOPNOTSUPP)[number]
  | "clone"
  | "ioctl"
  | "chmod"
  | "fchmod"
  | "fchmodat"
  | "fchmodat2"
  | "open"
  | "openat"
  | "creat"
  | "mknod"
  | "mknodat";

/**
 * System call numbers (arch/x86/entry/syscalls/syscall_64.tbl and include/uapi/asm-generic/unistd.h).
 * A call the architecture does not have (aarch64 has no open, chmod, creat, mknod, iopl, ioperm,
 * uselib) is absent.
 */
const TABLES: Record<"x86_64" | "aarch64", Partial<Record<Name, number>>> = {
  x86_64: {
    unshare: 272,
    setns: 308,
    clone: 56,
    clone3: 435,
    mount: 165,
    umount2: 166,
    pivot_root: 155,
    open_tree: 428,
    open_tree_attr: 467,
    move_mount: 429,
    fsopen: 430,
    fsconfig: 431,
    fsmount: 432,
    fspick: 433,
    mount_setattr: 442,
    keyctl: 250,
    add_key: 248,
    request_key: 249,
    bpf: 321,
    perf_event_open: 298,
    userfaultfd: 323,
    io_uring_setup: 425,
    io_uring_enter: 426,
    io_uring_register: 427,
    kexec_load: 246,
    kexec_file_load: 320,
    init_module: 175,
    finit_module: 313,
    delete_module: 176,
    reboot: 169,
    swapon: 167,
    swapoff: 168,
    settimeofday: 164,
    clock_settime: 227,
    clock_adjtime: 305,
    adjtimex: 159,
    syslog: 103,
    acct: 163,
    quotactl: 179,
    quotactl_fd: 443,
    lookup_dcookie: 212,
    nfsservctl: 180,
    uselib: 134,
    vhangup: 153,
    iopl: 172,
    ioperm: 173,
    open_by_handle_at: 304,
    openat2: 437,
    ioctl: 16,
    fallocate: 285,
    chmod: 90,
    fchmod: 91,
    fchmodat: 268,
    fchmodat2: 452,
    open: 2,
    openat: 257,
    creat: 85,
    mknod: 133,
    mknodat: 259,
  },
  aarch64: {
    unshare: 97,
    setns: 268,
    clone: 220,
    clone3: 435,
    mount: 40,
    umount2: 39,
    pivot_root: 41,
    open_tree: 428,
    open_tree_attr: 467,
    move_mount: 429,
    fsopen: 430,
    fsconfig: 431,
    fsmount: 432,
    fspick: 433,
    mount_setattr: 442,
    keyctl: 219,
    add_key: 217,
    request_key: 218,
    bpf: 280,
    perf_event_open: 241,
    userfaultfd: 282,
    io_uring_setup: 425,
    io_uring_enter: 426,
    io_uring_register: 427,
    kexec_load: 104,
    kexec_file_load: 294,
    init_module: 105,
    finit_module: 273,
    delete_module: 106,
    reboot: 142,
    swapon: 224,
    swapoff: 225,
    settimeofday: 170,
    clock_settime: 112,
    clock_adjtime: 266,
    adjtimex: 171,
    syslog: 116,
    acct: 89,
    quotactl: 60,
    quotactl_fd: 443,
    lookup_dcookie: 18,
    nfsservctl: 42,
    vhangup: 58,
    open_by_handle_at: 265,
    openat2: 437,
    ioctl: 29,
    fallocate: 47,
    fchmod: 52,
    fchmodat: 53,
    fchmodat2: 452,
    openat: 56,
    mknodat: 33,
  },
};

/** Where each argument's checked word sits in `struct seccomp_data` (nr, arch, ip, args[6]). */
const OFFSET_NR = 0;
const OFFSET_ARCH = 4;
/** The low 32 bits of argument `i`: every argument checked here is an int, a mode or flags. */
const argLow = (i: number) => 16 + 8 * i + (endianness() === "LE" ? 0 : 4);

/** Which argument holds the mode, per call (and for the opens, which holds the flags). */
const MODE_ARG: Partial<Record<Name, number>> = {
  chmod: 1,
  fchmod: 1,
  fchmodat: 2,
  fchmodat2: 2,
  creat: 1,
  mknod: 1,
  mknodat: 2,
};
const OPEN_ARGS: Partial<Record<Name, { flags: number; mode: number }>> = {
  open: { flags: 1, mode: 2 },
  openat: { flags: 2, mode: 3 },
};

export type SeccompArch = keyof typeof TABLES;

/** The architecture tables this filter has for the host, or null (then no filter can be built). */
export function seccompArch(arch: string = hostArch()): SeccompArch | null {
  return arch === "x64" ? "x86_64" : arch === "arm64" ? "aarch64" : null;
}

/**
 * The filter program for `arch` (default: the host's), as bytes for bwrap's `--seccomp FD`.
 * Every architecture other than `arch` is killed, so numbers from another table never apply.
 */
export function seccompProgram(arch: SeccompArch | null = seccompArch()): Buffer {
  if (arch === null)
    throw new Error(
      `no seccomp tables for this architecture (${hostArch()}); bash_execute's filter covers x86_64 and aarch64`,
    );
  const table = TABLES[arch];
  const p = new BpfProgram();
  p.load(OFFSET_ARCH).jump("eq", arch === "x86_64" ? AUDIT_ARCH_X86_64 : AUDIT_ARCH_AARCH64, null, "kill");
  p.load(OFFSET_NR);
  // -1 is no call at all (a tracer's "skip this one"); the kernel answers it with ENOSYS.
  if (arch === "x86_64") p.jump("eq", 0xffffffff, "allow").jump("ge", X32_SYSCALL_BIT, "kill");
  const nr = (name: Name) => table[name];
  for (const name of DENIED_EPERM) if (nr(name) !== undefined) p.jump("eq", nr(name)!, "eperm");
  for (const name of DENIED_ENOSYS) if (nr(name) !== undefined) p.jump("eq", nr(name)!, "enosys");
  for (const name of DENIED_EOPNOTSUPP) p.jump("eq", nr(name)!, "eopnotsupp");
  p.jump("eq", nr("clone")!, "clone");
  p.jump("eq", nr("ioctl")!, "ioctl");
  for (const [name, arg] of Object.entries(MODE_ARG) as [Name, number][])
    if (nr(name) !== undefined) p.jump("eq", nr(name)!, `mode${arg}`);
  for (const [name, args] of Object.entries(OPEN_ARGS) as [Name, { flags: number; mode: number }][])
    if (nr(name) !== undefined) p.jump("eq", nr(name)!, `open${args.flags}`);
  p.label("allow").ret(SECCOMP_RET_ALLOW);

  p.label("clone").load(argLow(0)).jump("set", CLONE_NEW_ANY, "eperm").ret(SECCOMP_RET_ALLOW);
  p.label("ioctl").load(argLow(1)).jump("eq", TIOCSTI, "eperm").jump("eq", TIOCLINUX, "eperm").ret(SECCOMP_RET_ALLOW);
  // The opens: only a call that creates a file (O_CREAT, O_TMPFILE) has a mode to check.
  for (const flags of [1, 2])
    p.label(`open${flags}`)
      .load(argLow(flags))
      .jump("set", O_CREAT_OR_TMPFILE, `mode${flags + 1}`)
      .ret(SECCOMP_RET_ALLOW);
  for (const mode of [1, 2, 3])
    p.label(`mode${mode}`).load(argLow(mode)).jump("set", S_ISUID_OR_GID, "eperm").ret(SECCOMP_RET_ALLOW);
  p.label("eperm").ret(SECCOMP_RET_ERRNO | EPERM);
  p.label("enosys").ret(SECCOMP_RET_ERRNO | ENOSYS);
  p.label("eopnotsupp").ret(SECCOMP_RET_ERRNO | EOPNOTSUPP);
  p.label("kill").ret(SECCOMP_RET_KILL_PROCESS);
  return p.assemble();
}

/** For tests: `struct seccomp_data` for one call on `arch` with the given argument words. */
export function seccompData(arch: SeccompArch, name: Name | number, args: number[] = []): Buffer {
  const data = Buffer.alloc(64);
  const le = endianness() === "LE";
  const nr = typeof name === "number" ? name : TABLES[arch][name];
  if (nr === undefined) throw new Error(`${arch} has no system call ${String(name)}`);
  const put = (value: number, at: number) =>
    le ? data.writeUInt32LE(value >>> 0, at) : data.writeUInt32BE(value >>> 0, at);
  put(nr, OFFSET_NR);
  put(arch === "x86_64" ? AUDIT_ARCH_X86_64 : AUDIT_ARCH_AARCH64, OFFSET_ARCH);
  args.forEach((v, i) => put(v, argLow(i)));
  return data;
}

export const SECCOMP_ACTIONS = {
  allow: SECCOMP_RET_ALLOW,
  eperm: SECCOMP_RET_ERRNO | EPERM,
  enosys: SECCOMP_RET_ERRNO | ENOSYS,
  eopnotsupp: SECCOMP_RET_ERRNO | EOPNOTSUPP,
  kill: SECCOMP_RET_KILL_PROCESS,
};
