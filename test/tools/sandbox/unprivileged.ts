/**
 * Runs a child toolgate as an unprivileged user (setpriv to 65534:65534, no groups), for the
 * tests whose answer differs when toolgate is not root. Needs root; the caller checks `asRoot`.
 */
import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import { chmodSync, chownSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { projectRoot } from "../../support/require.js";

export const asRoot = process.geteuid?.() === 0;
export const NOBODY = 65534;

const here = dirname(fileURLToPath(import.meta.url));

export interface ChildResult {
  output?: {
    exit_code: number | null;
    signal: string | null;
    timed_out: boolean;
    stdout: string;
    stderr: string;
    sandbox_denied: { code: string; message: string }[];
  };
  text?: string;
  error?: { name: string; code: string | null; message: string };
  warnings: string[];
}

/** Gives `root` (and the folder holding it, made traversable) to the unprivileged user. */
export function handToNobody(base: string, root: string): void {
  chmodSync(base, 0o755);
  chownSync(root, NOBODY, NOBODY);
}

/**
 * The TypeScript file `script` run by Node (through tsx) as 65534:65534 with no groups, from the
 * project root, with a bare environment plus `env`; its standard streams are pipes.
 */
export function tsxAsNobody(
  script: string,
  args: string[],
  env: Record<string, string> = {},
): ChildProcessWithoutNullStreams {
  return spawn(
    "setpriv",
    [
      `--reuid=${NOBODY}`,
      `--regid=${NOBODY}`,
      "--clear-groups",
      "--",
      process.execPath,
      "--import",
      "tsx",
      script,
      ...args,
    ],
    { cwd: projectRoot, env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: "/tmp", ...env }, stdio: "pipe" },
  );
}

/** bash_execute `command` in a child toolgate over `workspace`, run as 65534:65534. */
export function bashAsNobody(
  workspace: string,
  command: string,
  limits?: Record<string, number>,
  readOnly?: string[],
  egress?: object,
): Promise<ChildResult> {
  return new Promise((done, fail) => {
    const child = tsxAsNobody(
      join(here, "child-bash.ts"),
      [workspace, command, ...(limits ? [JSON.stringify(limits)] : [])],
      {
        ...(readOnly ? { TG_CHILD_READ_ONLY: JSON.stringify(readOnly) } : {}),
        ...(egress ? { TG_CHILD_EGRESS: JSON.stringify(egress) } : {}),
      },
    );
    let out = "";
    let err = "";
    child.stdout.on("data", (c: Buffer) => (out += c.toString("utf8")));
    child.stderr.on("data", (c: Buffer) => (err += c.toString("utf8")));
    child.on("error", fail);
    child.on("close", (code) => {
      const line = out.trim().split("\n").pop() ?? "";
      try {
        done(JSON.parse(line) as ChildResult);
      } catch {
        fail(new Error(`the child toolgate (exit ${code}) printed no result: ${out}${err}`));
      }
    });
  });
}
