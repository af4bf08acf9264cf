/**
 * bash_execute: `bash -c` inside the isolation envelope (docs/envelope.md,
 * the threat model). Refuses when the envelope cannot start, unless the
 * operator opted out explicitly; the observation carries exit status, signal, duration and both
 * streams bounded, and says when the sandbox, not the command, caused the failure.
 */
import { NoEffectError } from "../core/errors.js";
import { toolResult, type ToolContext, type ToolResult } from "../core/tool.js";
import { type JsonValue } from "../core/json.js";
import { sandboxDenials, type SandboxDenial } from "./sandbox/denial.js";
import type { EnvelopeLimits, SandboxLauncher } from "./sandbox/launcher.js";
import { runInEnvelope, type RunOutcome } from "./sandbox/run.js";
import { createUnsandboxed } from "./sandbox/unsandboxed.js";
import { textBudget } from "./budget.js";
import { MARKER_TOKENS } from "./sandbox/capture.js";
import { egressDenials, egressNote, openEgress, withoutSecrets, type EgressRun } from "./sandbox/egress/call.js";
import type { EgressPolicy } from "./sandbox/egress/policy.js";

export interface BashArgs {
  command: string;
  timeout_ms?: number;
}

export interface BashLimits extends EnvelopeLimits {
  /** Bytes kept per stream while reading (head + tail). Default 256 KiB. */
  output_bytes: number;
  /** o200k tokens of each stream in the observation (head + tail). Default 2000. */
  output_tokens: number;
  /** bash_execute calls running at once per catalog; one more is refused at once (too_many_calls). Default 4. */
  max_concurrent: number;
}

/**
 * Defaults sized for real builds on one machine: 512 processes, 1 GiB per file, 4 GiB of memory,
 * ten CPU-minutes and 4 GiB written to the workspace per call, 1 GiB each for /tmp and HOME,
 * and 4 calls at once (4 × 4 GiB of memory at most).
 */
export const DEFAULT_BASH_LIMITS: BashLimits = {
  max_processes: 512,
  max_file_bytes: 1024 ** 3,
  max_memory_bytes: 4 * 1024 ** 3,
  max_cpu_seconds: 600,
  max_write_bytes: 4 * 1024 ** 3,
  max_tmp_bytes: 1024 ** 3,
  output_bytes: 256 * 1024,
  output_tokens: 2000,
  max_concurrent: 4,
};
export const DEFAULT_TIMEOUT_MS = 30_000;

const WHOLE = new Set(["max_processes", "max_concurrent", "output_bytes", "output_tokens"]);

/**
 * The bash limits an operator gave, merged over the defaults; throws an Error naming the field,
 * what it must be and what arrived, for an unknown field or a value that is not a positive number.
 */
export function bashLimits(given: Partial<BashLimits> = {}): BashLimits {
  return checkedLimits("bash", DEFAULT_BASH_LIMITS, given, WHOLE);
}

/**
 * `given` merged over `defaults` (the tool's `limits.<tool>`), each field checked: known, and a
 * positive number (an integer when in `whole`) where the default is a number, a non-empty string
 * where it is a string. Throws an Error naming the field, what it must be and what arrived.
 */
export function checkedLimits<T extends object>(
  tool: string,
  defaults: T,
  given: Partial<T>,
  whole: ReadonlySet<string>,
): T {
  const known = Object.keys(defaults);
  for (const [key, value] of Object.entries(given)) {
    if (!known.includes(key))
      throw new Error(`limits.${tool}.${key} is not a ${tool} limit; the limits are ${known.join(", ")}`);
    const example = defaults[key as keyof T];
    if (typeof example === "string") {
      if (typeof value !== "string" || value === "")
        throw new Error(
          `limits.${tool}.${key} must be a non-empty string; received ${JSON.stringify(value)}; example ${JSON.stringify(example)} (the default)`,
        );
      continue;
    }
    const isWhole = whole.has(key);
    if (typeof value !== "number" || !Number.isFinite(value) || value <= 0 || (isWhole && !Number.isInteger(value))) {
      throw new Error(
        `limits.${tool}.${key} must be a positive ${isWhole ? "integer" : "number"}; received ${JSON.stringify(value)}; example ${String(example)} (the default)`,
      );
    }
  }
  return { ...defaults, ...given };
}

/** Picks the launcher once per catalog: the envelope, or the explicit opt-out when it cannot start. */
export function launcherChooser(launcher: SandboxLauncher, allowUnsandboxed: boolean): () => Promise<SandboxLauncher> {
  let chosen: Promise<SandboxLauncher> | undefined;
  return () =>
    (chosen ??= launcher.probe().then((problem) => {
      if (problem === null) return launcher;
      if (allowUnsandboxed) return createUnsandboxed();
      chosen = undefined; // the operator may install it; look again next call
      throw new NoEffectError(
        `${problem}. Nothing was run. (The operator can opt out of the sandbox explicitly with allowUnsandboxed, at the risk of running commands on the host.)`,
        "sandbox_unavailable",
      );
    }));
}

/** The concurrency cap of one catalog's tool (bash_execute, grep_search): `enter` refuses at once when `max` calls run.
 * */
export interface CallGate {
  enter(): () => void;
}

/** A cap of `max` calls of `tool` at once, set by the limit named `limit` (e.g. limits.bash.max_concurrent). */
export function callGate(max: number, tool = "bash_execute", limit = "limits.bash.max_concurrent"): CallGate {
  let running = 0;
  return {
    enter() {
      if (running >= max) {
        throw new NoEffectError(
          `too many ${tool} calls at once: ${max} are running, the most this server allows (${limit}); nothing was run. Wait for one to finish, then call again (the operator can raise ${limit})`,
          "too_many_calls",
        );
      }
      running++;
      let left = false;
      return () => {
        if (!left) running--;
        left = true;
      };
    },
  };
}

/** The paths of a workspace the envelope needs: its root, what it hides, what it keeps read-only. */
export interface EnvelopePaths {
  root: string;
  hidden?: readonly string[];
  readOnly?: readonly string[];
  /** More read-only paths, read at each call: what the repository's git config names (Workspace.gitNamed). */
  gitNamed?(): Promise<readonly string[]>;
}

/** Hidden and read-only paths of a workspace (none for a bare root path). */
export function envelopePaths(ws: string | EnvelopePaths): {
  root: string;
  hidden: readonly string[];
  readOnly: readonly string[];
} {
  if (typeof ws === "string") return { root: ws, hidden: [], readOnly: [] };
  return { root: ws.root, hidden: ws.hidden ?? [], readOnly: ws.readOnly ?? [] };
}

export async function executeBash(
  chooseLauncher: () => Promise<SandboxLauncher>,
  workspace: string | EnvelopePaths,
  args: BashArgs,
  limits: BashLimits,
  ctx?: Pick<ToolContext, "signal"> &
    Partial<Pick<ToolContext, "budget_tokens" | "call_id" | "authorizeAlso" | "note">>,
  gate?: CallGate,
  egress?: EgressPolicy,
): Promise<ToolResult<Record<string, JsonValue>>> {
  const leave = gate?.enter() ?? (() => {});
  let net: EgressRun | undefined;
  try {
    const launcher = await chooseLauncher();
    // Only an envelope has a network of its own to route; the unsandboxed opt-out has the host's.
    if (egress && launcher.isolated) net = await openEgress(egress, ctx?.authorizeAlso);
    const timeout = args.timeout_ms ?? DEFAULT_TIMEOUT_MS;
    const { root, hidden, readOnly: listed } = envelopePaths(workspace);
    const named = typeof workspace === "string" ? [] : ((await workspace.gitNamed?.()) ?? []);
    const readOnly = named.length > 0 ? [...listed, ...named] : listed;
    const outcome = await runInEnvelope(
      launcher,
      { command: args.command, workspace: root, hidden, readOnly, limits, ...(net ? { egress: net.proxy } : {}) },
      {
        timeout_ms: timeout,
        output_bytes: limits.output_bytes,
        output_tokens: limits.output_tokens,
        ...(ctx?.budget_tokens !== undefined
          ? { total_tokens: streamTokens(ctx.budget_tokens, ctx.call_id ?? "", limits) }
          : {}),
        ...(ctx?.signal ? { signal: ctx.signal } : {}),
      },
    );
    if (!outcome.ran && !outcome.aborted) throw notStarted(outcome);
    if (outcome.aborted) {
      // The command may have done part of its work: the gateway records the call as in doubt.
      throw new Error(
        `bash_execute was aborted by the caller after ${outcome.duration_ms} ms; its whole process tree was killed, and it may have done part of its work`,
      );
    }
    if (net) {
      await net.proxy.close();
      ctx?.note?.("egress", egressNote(net.session));
      outcome.stdout.text = withoutSecrets(egress!, outcome.stdout.text);
      outcome.stderr.text = withoutSecrets(egress!, outcome.stderr.text);
    }
    const denied = net
      ? withEgress(sandboxDenials(outcome, root, limits, readOnly), net)
      : sandboxDenials(outcome, root, limits, readOnly);
    const output: Record<string, JsonValue> = {
      exit_code: outcome.exit_code,
      signal: outcome.signal,
      timed_out: outcome.timed_out,
      duration_ms: outcome.duration_ms,
      sandbox: launcher.name,
      stdout: outcome.stdout.text,
      stderr: outcome.stderr.text,
      stdout_omitted_bytes: outcome.stdout.omitted_bytes,
      stderr_omitted_bytes: outcome.stderr.omitted_bytes,
      sandbox_denied: denied.map((d) => ({ ...d })),
    };
    const omitted = outcome.stdout.omitted_bytes + outcome.stderr.omitted_bytes;
    return toolResult(output, {
      text: render(outcome, launcher, timeout, denied),
      ...(omitted > 0 ? { truncated: { omitted, unit: omitted === 1 ? "byte" : "bytes" } } : {}),
    });
  } finally {
    await net?.proxy.close();
    leave();
  }
}

/**
 * With egress, the proxy's own refusals come first and say why; the "no network" reading of a
 * resolver error becomes how the way out works (a client that ignores the proxy variables).
 */
function withEgress(found: SandboxDenial[], net: EgressRun): SandboxDenial[] {
  const refused = egressDenials(net.session);
  const rest = found.filter((d) => d.code !== "no_network" && d.code !== "host_service_unreachable");
  const failed = net.session.events.find((e) => e.allowed && e.error && !e.error.startsWith("cut at"));
  if (failed) {
    // Allowed, but the proxy found nothing there: the host's answer, not the sandbox's.
    rest.push({
      code: "host_service_unreachable",
      message: `toolgate's proxy allowed ${failed.host}:${failed.port} but could not reach it (${failed.error}); the server there is down or not listening, which retrying the same call will not change`,
    });
  } else if (refused.length === 0 && rest.length < found.length) {
    rest.push({
      code: "no_network",
      message:
        "the sandbox reaches the network only through toolgate's proxy (HTTP_PROXY, HTTPS_PROXY and ALL_PROXY are set): a client that ignores them cannot resolve names or connect, and services on the host are not reachable directly; use a client that honours the proxy variables",
    });
  }
  return [...refused, ...rest];
}

/** The envelope's setup failed before the command started (cgroup join, uid switch, bwrap's mounts): nothing ran. */
function notStarted(o: RunOutcome): NoEffectError {
  const said = o.report.setup_error ?? (o.stderr.text.trim() || `exit status ${o.exit_code}`);
  const cgroup = /cgroup/.test(said)
    ? ' Fix: let toolgate\'s user write that cgroup folder (or remove it if an earlier run as root created it), or create the catalog with sandbox cgroups "off" to bound runs by ulimit alone.'
    : "";
  return new NoEffectError(
    `bash_execute's sandbox could not start the command: ${said}; nothing was run.${cgroup}`,
    "sandbox_unavailable",
  );
}

/** Room for the status line, the stream labels, a sandbox-denial and a timeout line. */
const TEXT_FRAME_TOKENS = 100;

/** Tokens both streams may take under the call's budget: the gateway's frame (as if replayed) and the text's own lines
 * left out. */
function streamTokens(budget_tokens: number, call_id: string, limits: BashLimits): number {
  const frame = {
    tool: "bash_execute",
    authority: "A2" as const,
    replay: true,
    tool_truncated: { omitted: 1e15, unit: "bytes" },
  };
  return Math.max(
    2 * MARKER_TOKENS,
    textBudget({ budget_tokens, call_id }, frame, 2 * (limits.output_tokens + MARKER_TOKENS)) - TEXT_FRAME_TOKENS,
  );
}

function render(o: RunOutcome, launcher: SandboxLauncher, timeout: number, denied: SandboxDenial[]): string {
  const status = o.timed_out
    ? `timed out after ${timeout} ms: the whole process tree was killed`
    : `exit_code ${o.exit_code}${o.signal ? ` (signal ${o.signal})` : ""}`;
  const parts = [
    `${status} · duration_ms ${o.duration_ms} · sandbox ${launcher.isolated ? launcher.name : "NONE (unsandboxed opt-out)"}`,
  ];
  parts.push(o.stdout.text ? `[stdout]\n${o.stdout.text.replace(/\n$/, "")}` : "[stdout empty]");
  if (o.stderr.text) parts.push(`[stderr]\n${o.stderr.text.replace(/\n$/, "")}`);
  const refusedNet = denied.filter((d) => d.code === "egress_denied").length;
  if (refusedNet > 0 && (o.exit_code !== 0 || o.signal))
    parts.push(
      `[the command failed after toolgate refused ${refusedNet} of its connection${refusedNet === 1 ? "" : "s"} (below): that refusal, not the command, is the likely cause]`,
    );
  for (const d of denied) parts.push(`[sandbox denied: ${d.message}]`);
  if (o.timed_out)
    parts.push(`[raise timeout_ms (up to 300000) or run a smaller step; background processes do not outlive the call]`);
  return parts.join("\n");
}
