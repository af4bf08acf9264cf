/**
 * Recognises a command that failed because of the envelope rather than its own bug, so the
 * observation can say "the sandbox denied this" and the model does not retry blindly: from the
 * command's own messages, and from what the envelope itself recorded (its cgroups and watch).
 */
import { join, relative, resolve } from "node:path";
import type { EnvelopeLimits } from "./launcher.js";
import type { RunOutcome } from "./run.js";

/** What the envelope denied: the stable codes of bash_execute's `sandbox_denied`. */
export type SandboxDenialCode =
  | "read_only_filesystem"
  | "permission_denied"
  | "no_network"
  | "host_service_unreachable"
  | "not_permitted"
  | "process_limit"
  | "file_size_limit"
  | "memory_limit"
  | "cpu_limit"
  | "disk_limit"
  /** A protected path the command created or replaced, or a write refused in the repository's read-only .git. */
  | "protected_path"
  /** A connection the egress proxy refused (egress/session.ts): with host, port and reason. */
  | "egress_denied";

export interface SandboxDenial {
  code: SandboxDenialCode;
  message: string;
  /** An egress denial's host, port and reason (`EgressReason`). */
  host?: string;
  port?: number;
  reason?: string;
}

interface Rule {
  code: SandboxDenialCode;
  pattern: RegExp;
  message: (workspace: string, limits: EnvelopeLimits) => string;
}

const RULES: Rule[] = [
  {
    code: "read_only_filesystem",
    pattern: /Read-only file system/i,
    message: (ws) =>
      `the sandbox denied a write: only the workspace ${ws}, /tmp and HOME are writable (everything else is read-only, and /tmp and HOME are discarded after the call)`,
  },
  {
    code: "permission_denied",
    pattern: /Permission denied|EACCES/,
    message: (ws) =>
      `the sandbox denied access: commands run as an unprivileged user, which may not read or write files it does not own, and only the workspace ${ws}, /tmp and HOME are writable`,
  },
  {
    code: "no_network",
    pattern:
      /Temporary failure in name resolution|Could not resolve host|Name or service not known|Network is unreachable|getaddrinfo|EAI_AGAIN|No address associated with hostname/i,
    message: () =>
      "the sandbox has no network: name resolution and connections to other hosts fail here; retrying will not help",
  },
  {
    code: "host_service_unreachable",
    pattern: /Connection refused|ECONNREFUSED/i,
    message: () =>
      "the sandbox has its own network namespace: services on the host (even at 127.0.0.1) are unreachable; only servers started inside the same command answer",
  },
  {
    code: "not_permitted",
    pattern: /Operation not permitted|EPERM\b/,
    message: () =>
      "the sandbox refused an operation that needs privilege: commands run as an unprivileged user without capabilities, and setuid/setgid bits, new namespaces, mounts and host administration are refused; retrying will not help",
  },
  {
    code: "process_limit",
    pattern: /fork: (retry: )?Resource temporarily unavailable|Cannot fork|EAGAIN.*(spawn|fork)/i,
    message: (_ws, limits) => `the sandbox's process limit (${limits.max_processes} processes) refused to start more`,
  },
];

/** The path a "…: Read-only file system" message names (git, shells and coreutils quote it with ' " ‘ ’ or
 * `, or not at all). */
const READ_ONLY_PATH = /([^\s'"‘’`]+)['"‘’`]?: Read-only file system/g;

/**
 * The message for a write into the repository's .git where the run keeps it read-only as a
 * whole (workspace.ts PROTECTED_DEFAULT), so that the model stops retrying git commands that write.
 */
const GIT_READ_ONLY =
  "the repository's .git is read-only in the sandbox (git runs its hooks and config on the host, so a command must not be able to plant them there): git commands that only read work (status, log, diff, show, blame, grep), those that write the repository (add, commit, checkout, switch, stash, fetch, gc) fail here; retrying will not help. " +
  'Make the changes in the files and leave committing to a person, or the operator lets the agent commit by taking ".git" out of the catalog\'s protectedPaths option (toolgate serve --git-writable); its hooks and config stay read-only';

/** Whether `path` (as a command printed it, relative to the workspace or absolute) is the workspace's .git or under it.
 * */
function inGitDir(path: string, workspace: string): boolean {
  const rel = relative(workspace, resolve(workspace, path));
  return rel === ".git" || rel.startsWith(".git/");
}

const OUT_OF_MEMORY =
  /Cannot allocate memory|out of memory|MemoryError|std::bad_alloc|JavaScript heap out of memory|memory exhausted/i;

/** 1073741824 → "1 GiB", 10002432 → "9.5 MiB": binary units, exact where they divide, else to a tenth. */
export function formatBytes(n: number): string {
  for (const [unit, size] of [
    ["GiB", 1024 ** 3],
    ["MiB", 1024 ** 2],
    ["KiB", 1024],
  ] as const) {
    if (n >= size) return `${n % size === 0 ? n / size : (n / size).toFixed(1)} ${unit}`;
  }
  return `${n} bytes`;
}

/** Every envelope denial visible in the outcome, most specific first; empty when none. `readOnly`: the run's read-only
 * paths. */
export function sandboxDenials(
  outcome: RunOutcome,
  workspace: string,
  limits: EnvelopeLimits,
  readOnly: readonly string[] = [],
): SandboxDenial[] {
  const text = `${outcome.stderr.text}\n${outcome.stdout.text}`;
  const r = outcome.report;
  const found: SandboxDenial[] = [];
  const add = (code: SandboxDenialCode, message: string) => found.push({ code, message });
  if (r.protected_changed.length > 0) {
    const [list, one] = [r.protected_changed.join(", "), r.protected_changed.length === 1];
    add(
      "protected_path",
      `the command created or replaced ${list}, which ${one ? "is" : "are"} protected (programs on the host, such as git or an editor, run what ${one ? "it holds" : "they hold"}): the command was stopped and ${one ? "it was" : "they were"} put back as before; nothing else was undone` +
        (r.protected_unrestored.length ? `. NOT put back: ${r.protected_unrestored.join("; ")}` : ""),
    );
  }
  const refused = [...text.matchAll(READ_ONLY_PATH)].map((m) => m[1]!);
  const intoGit = readOnly.includes(join(workspace, ".git")) ? refused.filter((p) => inGitDir(p, workspace)) : [];
  if (intoGit.length > 0) add("protected_path", GIT_READ_ONLY);
  for (const rule of RULES) {
    // A write refused only inside .git is told above; the general message would send the model elsewhere.
    if (rule.code === "read_only_filesystem" && intoGit.length > 0 && intoGit.length === refused.length) continue;
    if (rule.pattern.test(text) || (rule.code === "process_limit" && outcome.process_limit_hit))
      add(rule.code, rule.message(workspace, limits));
  }
  if (outcome.signal === "SIGXFSZ" || /File size limit exceeded/.test(text)) {
    add(
      "file_size_limit",
      `the sandbox's file size limit (${Math.min(limits.max_file_bytes, limits.max_write_bytes)} bytes per file) stopped a write`,
    );
  }
  if (r.memory_limit_hit || OUT_OF_MEMORY.test(text)) {
    add(
      "memory_limit",
      `the sandbox's memory limit (${formatBytes(limits.max_memory_bytes)} for the whole command, files in /tmp and HOME included) stopped it${r.memory_limit_hit ? ": the kernel killed a process that needed more" : ""}`,
    );
  }
  if (r.cpu_limit_hit || outcome.signal === "SIGXCPU" || /CPU time limit exceeded/.test(text)) {
    add(
      "cpu_limit",
      `the sandbox's CPU limit (${limits.max_cpu_seconds} CPU-second${limits.max_cpu_seconds === 1 ? "" : "s"} for the whole command, all processes together) stopped it`,
    );
  }
  if (r.disk_limit_hit) {
    add(
      "disk_limit",
      `the command wrote more than the sandbox allows to the workspace in one call (${formatBytes(limits.max_write_bytes)}; about ${formatBytes(r.written_bytes)} seen) and was stopped; write less per call or clean up first`,
    );
  } else if (/No space left on device/.test(text)) {
    add(
      "disk_limit",
      `a write found no space left: /tmp and HOME are tmpfs mounts of ${formatBytes(limits.max_tmp_bytes)} each (and the workspace's disk may be full); keep large files in the workspace`,
    );
  }
  return found;
}
