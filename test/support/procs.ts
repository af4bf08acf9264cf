/**
 * The host's process table, read from /proc: for tests that check a process tree is really gone
 * (not only that a message says so). A test marks a process with a unique argv[0] (bash's
 * `exec -a MARKER sleep …`), finds it here while it runs, and polls until it and its PID
 * namespace have no process left.
 */
import { readdirSync, readFileSync, readlinkSync } from "node:fs";

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
