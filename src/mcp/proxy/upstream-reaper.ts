/**
 * A stdio upstream does not outlive the proxy that started it. The SDK's transport ends an
 * upstream gracefully on close (its stdin closed; SIGTERM two seconds later; SIGKILL two after
 * that), but a proxy that exits meanwhile — `process.exit`, or a second stop signal while it is
 * closing (`cli/commands/proxy.ts`) — would leave the child running, orphaned, with whatever
 * timers and files it holds (server-everything's update ticker runs forever). So every child
 * started is held here until it exits, and the process's `exit` SIGKILLs those still running.
 * A child is released on its own `exit`, so a pid that may have been reused is never signalled.
 */
import type { ChildProcess } from "node:child_process";

const running = new Set<ChildProcess>();
let hooked = false;

function killRunning(): void {
  for (const child of running)
    if (child.exitCode === null && child.signalCode === null)
      try {
        child.kill("SIGKILL");
      } catch {
        // Gone between the check and the signal: nothing to end.
      }
}

/** Holds `child` until it exits; SIGKILLed should this process exit first. */
export function reapOnExit(child: ChildProcess | undefined): void {
  if (!child || child.exitCode !== null || child.signalCode !== null) return;
  if (!hooked) {
    hooked = true;
    process.on("exit", killRunning);
  }
  running.add(child);
  child.once("exit", () => running.delete(child));
}

/** The child an SDK stdio transport spawned (the transport keeps it private; read once, after start). */
export function spawnedChild(transport: unknown): ChildProcess | undefined {
  const child = (transport as { _process?: unknown })._process;
  return typeof child === "object" && child !== null && "kill" in child ? (child as ChildProcess) : undefined;
}
