/**
 * The pieces of the bubblewrap launcher that talk to processes: joining a run's cgroups through
 * bwrap's info and block channels, the short trusted runs (probe, restore), and what the probe
 * says when something is missing.
 */
import { spawn } from "node:child_process";
import { writeFileSync } from "node:fs";
import type { Duplex } from "node:stream";
import { HOME } from "./bwrap-args.js";
import type { RunCgroup } from "./cgroup.js";
import { sandboxEnv } from "./launcher.js";

/**
 * Moves bwrap's sandbox child (its pid from `--info-fd`) into every cgroup of the run, then lets it
 * go on (`--block-fd`): it waits there after its setup and before it forks the command, so nothing
 * the command starts is ever outside. `fail` hears why when a move is refused.
 */
export function admit(cgroup: RunCgroup, info: Duplex, block: Duplex, fail: (why: string) => void): void {
  let text = "";
  let done = false;
  block.on("error", () => {});
  info.on("error", () => {});
  // The pid is taken as soon as it is complete, not at the end of the message: bwrap's child holds
  // the channel open through its setup, and waiting for it would put the move after the setup.
  info.on("data", (c: Buffer) => {
    if (done) return;
    text += c.toString("utf8");
    const pid = /"child-pid":\s*(\d+)\D/.exec(text)?.[1];
    if (pid === undefined) return;
    done = true;
    // Only the child: the launcher itself forks nothing else and runs no command, and each move
    // costs the kernel a synchronisation of every cgroup hierarchy (about a millisecond).
    for (const file of cgroup.procsFiles) {
      try {
        writeFileSync(file, pid);
      } catch (err) {
        return fail(
          `cannot join the cgroup: writing to ${file} failed (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`,
        );
      }
    }
    block.end("x");
  });
  info.resume();
}

export function missingBinary(binary: string): string {
  return `bash_execute needs bubblewrap, and ${binary} was not found on PATH; install it (Debian/Ubuntu: apt-get install -y bubblewrap; Fedora: dnf install bubblewrap; Alpine: apk add bubblewrap)`;
}

export function missingSetpriv(setpriv: string): string {
  return `bash_execute switches to an unprivileged user when toolgate runs as root, with ${setpriv} (util-linux), which the sandbox did not find under /usr; install it (Debian/Ubuntu: apt-get install -y util-linux; Fedora: dnf install util-linux; Alpine: apk add setpriv)`;
}

export const unsupportedArch = () =>
  `bash_execute's seccomp filter has tables for x86_64 and aarch64 only, and this machine is ${process.arch}; run toolgate on one of those`;

/** Spawns a short trusted process with the seccomp program on fd 3 and `fds` from fd 4 on; its exit status and stderr.
 * */
export function spawnOnce(
  file: string,
  args: string[],
  filter: Buffer,
  fds: number[] = [],
  cwd = "/",
): Promise<{ code: number | null; stderr: string; error?: NodeJS.ErrnoException }> {
  return new Promise((done) => {
    const child = spawn(file, args, {
      stdio: ["ignore", "ignore", "pipe", "pipe", ...fds],
      env: sandboxEnv(HOME),
      cwd,
    });
    let stderr = "";
    child.stderr!.on("data", (chunk: Buffer) => (stderr += chunk.toString("utf8")));
    const input = child.stdio[3] as NodeJS.WritableStream & { destroy(): void; on(e: string, f: () => void): void };
    input.on("error", () => {});
    input.end(filter, () => input.destroy());
    child.on("error", (error: NodeJS.ErrnoException) => done({ code: null, stderr, error }));
    child.on("close", (code) => done({ code, stderr }));
  });
}
