/**
 * A stdio upstream that dies with its proxy even when the proxy is SIGKILLed, where no `exit`
 * hook runs (`upstream-reaper.ts` covers every other way out). Linux can ask the kernel to signal
 * a child when its parent dies (prctl `PR_SET_PDEATHSIG`), but Node cannot set it between fork and
 * exec; util-linux's `setpriv --pdeathsig KILL -- CMD ARGS…` sets it and then execs the command,
 * so the upstream runs as the same process (its own pid), marked. Where that cannot be done —
 * another system, no `setpriv` on PATH, or a command that does not resolve (left unwrapped so its
 * spawn fails as before, naming it) — the command runs as given, with the reaper alone.
 * The mark is the kernel's: it goes with the upstream's own process only, not with processes it
 * starts itself (an `npx` upstream's node child), and a setuid command clears it. Where a PID
 * namespace can be made, `upstream-pidns.ts` starts the upstream so that those die too, and uses
 * this for the fallback (and the mark of its own processes).
 */
import { accessSync, constants, statSync } from "node:fs";
import { delimiter, join, resolve } from "node:path";

/** The command and arguments to spawn. */
export interface Spawned {
  command: string;
  args: string[];
}

/** The first executable file called `name` on `path` (or `name` itself, when it has a slash), else undefined. */
export function onPath(name: string, path: string | undefined, cwd: string): string | undefined {
  const candidates = name.includes("/")
    ? [resolve(cwd, name)]
    : (path ?? "")
        .split(delimiter)
        .filter((dir) => dir !== "")
        .map((dir) => join(dir, name));
  for (const file of candidates)
    try {
      if (!statSync(file).isFile()) continue;
      accessSync(file, constants.X_OK);
      return file;
    } catch {
      // Not there, or not executable: the next one.
    }
  return undefined;
}

/**
 * `target` as spawned so the kernel SIGKILLs it when its parent dies: through `setpriv
 * --pdeathsig KILL --` on Linux when setpriv and the command are both on `env.PATH`; else as given.
 */
export function withParentDeathSignal(
  target: Spawned,
  env: Record<string, string | undefined>,
  cwd: string = process.cwd(),
  platform: NodeJS.Platform = process.platform,
): Spawned {
  if (platform !== "linux") return target;
  const setpriv = onPath("setpriv", env.PATH, cwd);
  if (setpriv === undefined || onPath(target.command, env.PATH, cwd) === undefined) return target;
  return { command: setpriv, args: ["--pdeathsig", "KILL", "--", target.command, ...target.args] };
}
