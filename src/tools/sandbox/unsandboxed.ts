/**
 * The explicit opt-out: `bash -c` on the host with the allowlisted environment and the limits,
 * but no isolation. Used only when the operator passes `allowUnsandboxed: true` and the
 * envelope cannot start; the catalog prints a warning when the opt-out is given.
 */
import { limitedBash, sandboxEnv, type SandboxLauncher } from "./launcher.js";

export function createUnsandboxed(): SandboxLauncher {
  return {
    name: "none",
    isolated: false,
    probe: () => Promise.resolve(null),
    plan(run) {
      const [file, ...args] = run.argv ?? limitedBash(run, { addressSpace: true });
      return Promise.resolve({
        file: file!,
        args,
        env: sandboxEnv(process.env.HOME ?? run.workspace),
        cwd: run.workspace,
      });
    },
  };
}
