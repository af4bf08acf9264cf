/**
 * Recognises a command that failed because of the envelope rather than its own bug, so the
 * observation can say "the sandbox denied this" and the model does not retry blindly
 * (issue 6, "When a command fails because of the envelope").
 */
import type { EnvelopeLimits } from "./launcher.js";
import type { RunOutcome } from "./run.js";

export interface SandboxDenial {
  /** Stable code: read_only_filesystem · no_network · host_service_unreachable · process_limit · file_size_limit. */
  code: string;
  message: string;
}

interface Rule {
  code: string;
  pattern: RegExp;
  message: (workspace: string, limits: EnvelopeLimits) => string;
}

const RULES: Rule[] = [
  {
    code: "read_only_filesystem",
    pattern: /Read-only file system/i,
    message: (ws) => `the sandbox denied a write: only the workspace ${ws}, /tmp and HOME are writable (everything else is read-only, and /tmp and HOME are discarded after the call)`,
  },
  {
    code: "no_network",
    pattern: /Temporary failure in name resolution|Could not resolve host|Name or service not known|Network is unreachable|getaddrinfo|EAI_AGAIN|No address associated with hostname/i,
    message: () => "the sandbox has no network: name resolution and connections to other hosts fail here; retrying will not help",
  },
  {
    code: "host_service_unreachable",
    pattern: /Connection refused|ECONNREFUSED/i,
    message: () => "the sandbox has its own network namespace: services on the host (even at 127.0.0.1) are unreachable; only servers started inside the same command answer",
  },
  {
    code: "process_limit",
    pattern: /fork: (retry: )?Resource temporarily unavailable|Cannot fork|EAGAIN.*(spawn|fork)/i,
    message: (_ws, limits) => `the sandbox's process limit (${limits.max_processes} processes) refused to start more`,
  },
];

/** Every envelope denial visible in the outcome, most specific first; empty when none. */
export function sandboxDenials(outcome: RunOutcome, workspace: string, limits: EnvelopeLimits): SandboxDenial[] {
  const text = `${outcome.stderr.text}\n${outcome.stdout.text}`;
  const found = RULES.filter((r) => r.pattern.test(text) || (r.code === "process_limit" && outcome.process_limit_hit)).map((r) => ({ code: r.code, message: r.message(workspace, limits) }));
  if (outcome.signal === "SIGXFSZ" || /File size limit exceeded/.test(text)) {
    found.push({ code: "file_size_limit", message: `the sandbox's file size limit (${limits.max_file_bytes} bytes per file) stopped a write` });
  }
  return found;
}
