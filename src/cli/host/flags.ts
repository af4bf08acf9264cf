/**
 * Flags `toolgate serve` and `toolgate proxy` share, registered once and parsed to the gateway's
 * settings and the server's run options, with errors that name the flag, the value and an
 * example.
 */
import type { Command } from "commander";
import { MIN_BUDGET_TOKENS } from "../../observation/budget.js";
import { ToolgateError } from "../../core/errors.js";
import { wholeNumber } from "../whole-number.js";
import { stateDirHelp } from "../store.js";
import { keysConfigured, type GatewaySettings } from "./gateway-settings.js";
import { parseHttpFlags, type HttpFlags } from "./http-flags.js";
import { parseSessionIdle } from "./ms-flag.js";
import { listenFlagOptions, parseListenFlags, type ListenFlags } from "./listen-flags.js";
import { DEFAULT_TASK_AFTER_MS } from "../../runtime/tasks.js";
import { DEFAULT_APPROVAL_TIMEOUT_MS } from "../../mcp/server/approval.js";

export interface GatewayFlags extends HttpFlags, ListenFlags {
  stateDir?: string;
  store?: string;
  keys?: string;
  capability?: string;
  audit?: string;
  budgetTokens?: string;
  http?: string;
  sessionIdleMs?: string;
  maxTasksPerOwner?: string;
  taskAfterMs?: string;
  approvalTimeoutMs?: string;
}

/**
 * Adds `--state-dir`, `--store`, `--keys`, `--capability`, `--audit`, `--budget-tokens`,
 * `--http`, the task flags and the listen flags (`listen-flags.ts`) to `cmd`; `where` is what the state and keys stay outside of ("workspace" for serve,
 * "current folder" for proxy). The HTTP flags come from `httpFlagOptions`, after the command's own.
 */
export function gatewayFlagOptions(cmd: Command, where: string): Command {
  const shared = cmd
    .option("--state-dir <dir>", stateDirHelp(where))
    .option(
      "--store <url>",
      "idempotency/approval store: sqlite: (default, state.db in the state folder), sqlite:PATH, memory:, redis://…, postgres://…",
    )
    .option(
      "--keys <file>",
      `capability key file, outside the ${where} (e.g. ~/.config/toolgate/keys.json); calls then need a capability (default: TOOLGATE_KEYS when set, else none)`,
    )
    .option("--capability <token>", "capability for calls that carry none in _meta or an Authorization header")
    .option("--audit <file>", "audit trail JSONL (default audit.jsonl in the state folder)")
    .option("--budget-tokens <n>", "default observation budget in o200k tokens (default 2000)")
    .option("--http <host:port>", "serve MCP Streamable HTTP on this address (loopback by default) instead of stdio")
    .option(
      "--max-tasks-per-owner <n>",
      `MCP tasks one owner (a capability's holder, or a peer) may have running in this process at once (default 128, at most ${MAX_TASKS_PER_OWNER}); one more is refused until one ends`,
    )
    .option(
      "--task-after-ms <ms>",
      `2026-07-28 tasks extension: a call of a tool that may run as a task is answered in its request when it ends within this time, else it goes on as a task (default ${DEFAULT_TASK_AFTER_MS}, at most ${MAX_TASK_AFTER_MS}; 0: a task at once; a call waiting for an approval is one at once)`,
    )
    .option(
      "--approval-timeout-ms <ms>",
      `how long a person has to answer an approval or a question the client is asked, and a 2026-07-28 call held for its client's retry waits for it, before the approval stays pending or the held call ends (default ${DEFAULT_APPROVAL_TIMEOUT_MS}, ten minutes; ${MIN_APPROVAL_TIMEOUT_MS} to ${MAX_TIMER_MS})`,
      givenOnce("--approval-timeout-ms", `--approval-timeout-ms ${DEFAULT_APPROVAL_TIMEOUT_MS}`),
    );
  return listenFlagOptions(shared);
}

/**
 * A flag's value that may be given once: a second refused naming both (the last would silently
 * win, and which one the operator meant is theirs to say).
 */
export function givenOnce(flag: string, example: string) {
  return (value: string, previous: string | undefined): string => {
    if (previous !== undefined)
      throw new ToolgateError(
        "bad_flag",
        `${flag} may be given once; received ${JSON.stringify(previous)}, then ${JSON.stringify(value)}; give the one you mean, e.g. ${example}`,
      );
    return value;
  };
}

/** Shorter than this, nobody could answer in time: a wait this low is a typo. */
export const MIN_APPROVAL_TIMEOUT_MS = 1000;
/** The longest wait a Node.js timer keeps (a longer one fires at once). */
export const MAX_TIMER_MS = 2_147_483_647;

/** `--approval-timeout-ms MS`: whole milliseconds from MIN_APPROVAL_TIMEOUT_MS to MAX_TIMER_MS, or undefined when absent. */
export function parseApprovalTimeout(text: string | undefined): number | undefined {
  return wholeInRange(
    text,
    MIN_APPROVAL_TIMEOUT_MS,
    MAX_TIMER_MS,
    `--approval-timeout-ms must be a whole number of milliseconds from ${MIN_APPROVAL_TIMEOUT_MS} to ${MAX_TIMER_MS} (how long a person has to answer an approval or a question, and a held call waits for its client's retry)`,
    `--approval-timeout-ms ${DEFAULT_APPROVAL_TIMEOUT_MS}`,
  );
}

/** The most `--task-after-ms` may be: a call waits at most this long in its request before it becomes a task. */
export const MAX_TASK_AFTER_MS = 600_000;

/** `--task-after-ms MS`: whole milliseconds from 0 to MAX_TASK_AFTER_MS, or undefined when absent. */
export function parseTaskAfter(text: string | undefined): number | undefined {
  return wholeInRange(
    text,
    0,
    MAX_TASK_AFTER_MS,
    `--task-after-ms must be a whole number of milliseconds from 0 to ${MAX_TASK_AFTER_MS} (how long a call may answer in its request before it becomes a task)`,
    `--task-after-ms ${DEFAULT_TASK_AFTER_MS}`,
  );
}

/** The most `--max-tasks-per-owner` may be: each running task holds a call and a poll timer. */
export const MAX_TASKS_PER_OWNER = 100_000;

/** `--max-tasks-per-owner N`: a whole number from 1 to MAX_TASKS_PER_OWNER, or undefined when absent. */
export function parseMaxTasksPerOwner(text: string | undefined): number | undefined {
  return wholeInRange(
    text,
    1,
    MAX_TASKS_PER_OWNER,
    `--max-tasks-per-owner must be a whole number from 1 to ${MAX_TASKS_PER_OWNER}`,
    "--max-tasks-per-owner 128",
  );
}

/** `text` as a whole number from `min` to `max` (undefined when absent), else `rule`, the value and `example`. */
function wholeInRange(text: string | undefined, min: number, max: number, rule: string, example: string) {
  if (text === undefined) return undefined;
  const n = wholeNumber(text, min);
  if (n === null || n > max)
    throw new ToolgateError("bad_flag", `${rule}; received ${JSON.stringify(text)}; example ${example}`);
  return n;
}

/**
 * The shared flags parsed, each refused in this order: `--budget-tokens`, `--http`,
 * `--session-idle-ms`, `--max-tasks-per-owner`, `--task-after-ms`, `--approval-timeout-ms`, the HTTP and approval
 * flags, then the listen flags. `workspace`: serve's, when it has one.
 */
export function parseGatewayFlags(flags: GatewayFlags, workspace?: string) {
  const budgetTokens = parseBudget(flags.budgetTokens);
  const http = flags.http !== undefined ? parseListenAddress(flags.http) : undefined;
  const sessionIdleMs = parseSessionIdle(flags.sessionIdleMs, http !== undefined);
  const keys = keysConfigured(flags);
  const maxTasksPerOwner = parseMaxTasksPerOwner(flags.maxTasksPerOwner);
  const taskAfterMs = parseTaskAfter(flags.taskAfterMs);
  const approvalTimeoutMs = parseApprovalTimeout(flags.approvalTimeoutMs);
  const served = parseHttpFlags(flags, http, keys);
  const listens = parseListenFlags(flags);
  const settings: GatewaySettings = {
    ...(workspace !== undefined ? { workspace } : {}),
    ...(flags.stateDir !== undefined ? { stateDir: flags.stateDir } : {}),
    ...(flags.store !== undefined ? { store: flags.store } : {}),
    ...(flags.keys !== undefined ? { keys: flags.keys } : {}),
    ...(flags.audit !== undefined ? { audit: flags.audit } : {}),
    ...(budgetTokens !== undefined ? { budgetTokens } : {}),
    approveVia: served.approveVia,
  };
  // What runGatewayServer is given from these flags (the command adds its name, grace and start line).
  const run = {
    ...(http ? { http } : {}),
    ...served.http,
    ...listens,
    approveVia: served.approveVia,
    ...(approvalTimeoutMs !== undefined ? { approvalTimeoutMs } : {}),
    ...(sessionIdleMs !== undefined ? { sessionIdleMs } : {}),
    ...(flags.capability !== undefined ? { capability: flags.capability } : {}),
    capabilitiesIgnored: !keys,
  };
  // What createTaskRunner is given from these flags (beside the store).
  const tasks = {
    ...(maxTasksPerOwner !== undefined ? { max_live_per_owner: maxTasksPerOwner } : {}),
    ...(taskAfterMs !== undefined ? { task_after_ms: taskAfterMs } : {}),
  };
  return { settings, run, tasks };
}

/** `--budget-tokens N`: a whole number of at least MIN_BUDGET_TOKENS, or undefined when absent. */
export function parseBudget(text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  const n = wholeNumber(text, MIN_BUDGET_TOKENS);
  if (n === null) {
    throw new ToolgateError(
      "bad_flag",
      `--budget-tokens must be a whole number of o200k tokens, at least ${MIN_BUDGET_TOKENS} (a cut needs room for its marker); received ${JSON.stringify(text)}; example --budget-tokens 2000`,
    );
  }
  return n;
}

export interface ListenAddress {
  host: string;
  port: number;
}

/** Parses `HOST:PORT`, `:PORT` or `PORT` (host defaults to loopback), `[::1]:PORT` for IPv6. */
export function parseListenAddress(text: string): ListenAddress {
  const m = /^(?:(\[[0-9a-fA-F:.]+\]|[^:[\]]*):)?(\d{1,5})$/.exec(text.trim());
  const port = m ? Number(m[2]) : NaN;
  if (!m || port > 65535) {
    throw new ToolgateError(
      "bad_address",
      `--http must be HOST:PORT, :PORT or PORT with a port from 0 to 65535; received ${JSON.stringify(text)}; example 127.0.0.1:8765`,
    );
  }
  const host = m[1] ? m[1].replace(/^\[|\]$/g, "") : "127.0.0.1";
  return { host, port };
}
