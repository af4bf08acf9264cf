/**
 * The host's process table, read from /proc: for tests that check a process tree is really gone
 * (not only that a message says so). A test marks a process with a unique argv[0] (bash's
 * `exec -a MARKER sleep …`), finds it here while it runs, and polls until it and its PID
 * namespace have no process left.
 */
import { spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { readdirSync, readFileSync, readlinkSync } from "node:fs";
import { expect } from "vitest";

function pids(): number[] {
  return readdirSync("/proc")
    .filter((name) => /^\d+$/.test(name))
    .map(Number);
}

/** A /proc entry of a process that may exit (or be another user's) while it is read: null then. */
function read<T>(f: () => T): T | null {
  try {
    return f();
  } catch {
    return null;
  }
}

/** Whether `pid` is a live process (a zombie waiting for its parent to reap it is not). */
export function alive(pid: number): boolean {
  return read(() => !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, "utf8"))) ?? false;
}

/** SIGKILLs those of `pids` still there: what a failed test left, at its file's end. */
export function killLeft(pids: number[]): void {
  for (const pid of pids)
    try {
      process.kill(pid, "SIGKILL");
    } catch {
      // Already gone, as it should be.
    }
}

/** Host pids of the processes whose argv[0] is `marker`. */
export function processesNamed(marker: string): number[] {
  return pids().filter((pid) => read(() => readFileSync(`/proc/${pid}/cmdline`, "latin1").split("\0")[0]) === marker);
}

/** The PID namespace of `pid`, as the kernel names it (`pid:[4026532…]`), or null when it has gone. */
export function pidNamespaceOf(pid: number | "self"): string | null {
  return read(() => readlinkSync(`/proc/${pid}/ns/pid`));
}

/** Host pids of the processes in the PID namespace `ns`. */
export function processesInNamespace(ns: string): number[] {
  return pids().filter((pid) => pidNamespaceOf(pid) === ns);
}

/**
 * Checks `condition` every 20 ms until it holds (true) or `ms` pass (false). For a state another
 * process reaches; the bound keeps a test that fails from hanging, and is not what it measures.
 */
export async function pollUntil(condition: () => boolean, ms: number): Promise<boolean> {
  const deadline = Date.now() + ms;
  for (;;) {
    if (condition()) return true;
    if (Date.now() >= deadline) return false;
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** `ps`'s view of `pids` (pid, ppid, state, age, user, command), for a failure to show what is left. */
function shown(pids: number[]): string {
  if (pids.length === 0) return "";
  return spawnSync("ps", ["-o", "pid,ppid,stat,etimes,user,args", "-p", pids.join(",")], { encoding: "utf8" }).stdout;
}

/**
 * A process the command leaves behind on purpose: a `sleep` in a new session (outside the
 * command's process group, so only the sandbox's PID namespace going takes it), found on the
 * host by its argv[0], a marker unique to the test. Never by a pattern of its command line: other
 * runs on the same host (another checkout's suite) start the same commands.
 */
export function markedTree() {
  const marker = `toolgate-escapee-${process.pid}-${randomBytes(6).toString("hex")}`;
  return {
    /** A command prefix (it ends with &): starts the marked sleep in the background. */
    escapee: `setsid bash -c 'exec -a ${marker} sleep 300' </dev/null >/dev/null 2>&1 &`,
    /** A command that runs the marked sleep in the foreground (a subshell that execs it), for 420 s. */
    foreground: `(exec -a ${marker} sleep 420)`,
    /** Waits until the marked sleep runs (or the call ends first: a failure); returns its PID namespace. */
    async running(call: Promise<unknown>): Promise<string> {
      let ended = false;
      call.then(
        () => (ended = true),
        () => (ended = true),
      );
      let ns: string | null = null;
      await pollUntil(() => {
        const pid = processesNamed(marker)[0];
        ns = pid === undefined ? null : pidNamespaceOf(pid);
        return ns !== null || ended;
      }, 50_000);
      expect(ns, "the marked sleep ran while the call did").not.toBeNull();
      // The command's own namespace, not the host's: it has to go as a whole.
      expect(ns).not.toBe(pidNamespaceOf("self"));
      return ns!;
    },
    /** After the call: no process carries the marker and the PID namespace holds none (polled: the kernel reaps
     * asynchronously). */
    async expectGone(ns: string): Promise<void> {
      await pollUntil(() => processesNamed(marker).length === 0 && processesInNamespace(ns).length === 0, 10_000);
      const left = { marked: processesNamed(marker), inNamespace: processesInNamespace(ns) };
      expect(left, `left 10 s after the call:\n${shown([...new Set([...left.marked, ...left.inNamespace])])}`).toEqual({
        marked: [],
        inNamespace: [],
      });
    },
  };
}
