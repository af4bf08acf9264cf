/**
 * The host user a sandbox runs as. A user namespace started by root maps the sandbox's uid 0 to
 * the host's uid 0: whatever the namespaces hide, a file the command makes setuid, or a kernel
 * setting it can reach, would act as root on the host. So when toolgate's effective uid is 0 the
 * launcher switches to an unprivileged uid and gid, with no supplementary groups, before bwrap
 * starts (setpriv). When toolgate is not root the sandbox runs as toolgate's own user.
 *
 * The default for a root toolgate: the workspace's owner when that is not root (a person's
 * checkout served by a root process: files stay theirs, nothing changes hands), else
 * nobody/nogroup (65534:65534), the account that owns nothing — the usual case of a root-owned
 * checkout in CI or a container, where the tree is handed to that uid once (handover.ts).
 */
import { statSync } from "node:fs";

export interface SandboxUser {
  uid: number;
  gid: number;
}

export const NOBODY: SandboxUser = { uid: 65534, gid: 65534 };

const validId = (n: unknown): n is number => Number.isInteger(n) && (n as number) > 0 && (n as number) < 4294967295;

/**
 * Checks an operator's `user` option (a root toolgate only): positive ids, neither of them 0.
 * Throws an Error naming the field, what arrived and how to fix it.
 */
export function checkUserOption(user: unknown, euid: number): SandboxUser | undefined {
  if (user === undefined) return undefined;
  const u = user as Partial<SandboxUser> | null;
  if (typeof u !== "object" || u === null || !validId(u.uid) || !validId(u.gid)) {
    throw new Error(
      `sandbox user must be { uid, gid } with both integers from 1 to 4294967294 (0 is root, which would give the sandbox host privilege); received ${JSON.stringify(user)}; example { uid: 65534, gid: 65534 }`,
    );
  }
  if (euid !== 0 && u.uid !== euid) {
    throw new Error(
      `sandbox user ${u.uid}:${u.gid} needs toolgate to run as root, which can switch users; toolgate runs as uid ${euid}, so the sandbox runs as that uid: leave user out`,
    );
  }
  return { uid: u.uid, gid: u.gid };
}

/**
 * The user a run in `workspace` switches to, or null for no switch (toolgate is not root).
 * `chosen` is the checked option.
 */
export function sandboxUser(workspace: string, chosen: SandboxUser | undefined, euid: number): SandboxUser | null {
  if (euid !== 0) return null;
  if (chosen) return chosen;
  const st = statSync(workspace);
  if (st.uid === 0) return NOBODY;
  return { uid: st.uid, gid: st.gid === 0 ? NOBODY.gid : st.gid };
}
