/** Shared plumbing for the state tests: temporary folders, a private per-user state home, the CLI as a child process.
 * */
import { spawn } from "node:child_process";
import { mkdtempSync, readdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { projectRoot } from "../support/require.js";

export function tempDir(prefix: string): string {
  return mkdtempSync(join(tmpdir(), `toolgate-state-${prefix}-`));
}

/** An environment whose per-user folders (state, keys) are a fresh temporary folder. */
export function userHome(): { XDG_STATE_HOME: string; XDG_CONFIG_HOME: string } {
  const home = tempDir("home");
  return { XDG_STATE_HOME: join(home, "state"), XDG_CONFIG_HOME: join(home, "config") };
}

/** Every file name under `dir`, recursively, relative to it ("" when absent). */
export function listTree(dir: string): string[] {
  try {
    return (readdirSync(dir, { recursive: true }) as string[]).sort();
  } catch {
    return [];
  }
}

/** `toolgate` from source (tsx by absolute URL, so any cwd works). */
export const CLI = [process.execPath, "--import", import.meta.resolve("tsx"), join(projectRoot, "src/cli/main.ts")];

export interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs `toolgate ARGS` to its end (stdin closed). `prefix` is put before node, e.g. setpriv. */
export function runCli(
  args: string[],
  options: { cwd: string; env: NodeJS.ProcessEnv; prefix?: string[]; input?: string },
): Promise<Run> {
  const argv = [...(options.prefix ?? []), ...CLI, ...args];
  return new Promise((done, fail) => {
    const child = spawn(argv[0]!, argv.slice(1), {
      cwd: options.cwd,
      env: options.env,
      stdio: ["pipe", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d: Buffer) => (stdout += d));
    child.stderr.on("data", (d: Buffer) => (stderr += d));
    child.on("error", fail);
    child.on("close", (code) => done({ code, stdout, stderr }));
    child.stdin.end(options.input ?? "");
  });
}
