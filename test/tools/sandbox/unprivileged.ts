/**
 * Runs a child toolgate as an unprivileged user (setpriv to 65534:65534, no groups), for the
 * tests whose answer differs when toolgate is not root. Needs root; the caller checks `asRoot`.
 */
import { spawn } from "node:child_process";
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

/** bash_execute `command` in a child toolgate over `workspace`, run as 65534:65534. */
export function bashAsNobody(
  workspace: string,
  command: string,
  limits?: Record<string, number>,
  readOnly?: string[],
  egress?: object,
): Promise<ChildResult> {
  return new Promise((done, fail) => {
    const child = spawn(
      "setpriv",
      [
        `--reuid=${NOBODY}`,
        `--regid=${NOBODY}`,
        "--clear-groups",
        "--",
        process.execPath,
        "--import",
        "tsx",
        join(here, "child-bash.ts"),
        workspace,
        command,
        ...(limits ? [JSON.stringify(limits)] : []),
      ],
      {
        cwd: projectRoot,
        env: {
          PATH: process.env.PATH ?? "/usr/bin:/bin",
          HOME: "/tmp",
          ...(readOnly ? { TG_CHILD_READ_ONLY: JSON.stringify(readOnly) } : {}),
          ...(egress ? { TG_CHILD_EGRESS: JSON.stringify(egress) } : {}),
        },
        stdio: ["ignore", "pipe", "pipe"],
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
