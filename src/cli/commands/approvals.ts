/**
 * `toolgate approvals`: a person decides A3 calls (seed 003, exercise 2: "a proposed action plus
 * an approval boundary"). Approvals live in the store, so this works against the same store the
 * gateway (or its replicas) use.
 *   toolgate approvals list [--state S] [--limit N] [--store URL] [--json]
 *   toolgate approvals approve ID [--approver NAME] [--note TEXT] [--store URL] [--json]
 *   toolgate approvals deny ID --reason TEXT [--approver NAME] [--store URL] [--json]
 * `--store` defaults to `sqlite:`, the store toolgate serve keeps for the workspace (the current
 * folder, or `--workspace DIR`; `--state-dir DIR` as serve had it).
 * Exit 0; 2 for bad input, an unknown or already decided id, a store that does not answer, or a SQLite
 * file that does not exist (list, approve and deny never create one).
 */
import type { Command } from "commander";
import { userInfo } from "node:os";
import { stateFlags, withExistingStore, type StateFlags } from "../store.js";
import type { ApprovalRecord, ApprovalState } from "../../idempotency/store.js";
import { createApprovalsApi } from "../../runtime/approvals.js";
import type { ApprovalsApi } from "../../runtime/types.js";
import { CliError, printJson } from "../io.js";

const STATES: ApprovalState[] = ["pending", "approved", "denied", "consumed"];

interface Common extends StateFlags {
  store: string;
  json?: boolean;
}

/** Listing and deciding need approvals that exist: a missing SQLite file is refused, never created. */
function withApprovals<T>(url: string, flags: StateFlags, run: (api: ApprovalsApi) => Promise<T>): Promise<T> {
  return withExistingStore(url, flags, (store) => run(createApprovalsApi(store.approvals, Date.now)));
}

function defaultApprover(): string {
  try {
    return process.env.USER || userInfo().username;
  } catch {
    return "operator";
  }
}

/** One approval as a few lines an operator reads before deciding. */
export function renderApproval(a: ApprovalRecord, now: number): string {
  const expired = a.state === "pending" && now >= a.expires_at ? " (expired)" : "";
  const lines = [
    `${a.id}  ${a.state}${expired}  ${a.tool}  trajectory ${a.trajectory_id}`,
    `  arguments: ${JSON.stringify(a.arguments)}`,
    `  requested ${new Date(a.created_at).toISOString()}, expires ${new Date(a.expires_at).toISOString()}${a.capability_id ? `, capability ${a.capability_id}` : ""}`,
  ];
  if (a.decided_at !== null) lines.push(`  decided ${new Date(a.decided_at).toISOString()}${a.approver ? ` by ${a.approver}` : ""}${a.note ? `: ${a.note}` : ""}`);
  return lines.join("\n");
}

function print(value: ApprovalRecord | ApprovalRecord[], json: boolean | undefined): void {
  if (json) return printJson(value);
  const list = Array.isArray(value) ? value : [value];
  const now = Date.now();
  process.stdout.write(list.length ? list.map((a) => renderApproval(a, now)).join("\n") + "\n" : "no approvals\n");
}

export function register(program: Command): void {
  const cmd = program.command("approvals").description("list, approve and deny A3 (destructive) calls waiting for a person");
  const storeOption = (c: Command) =>
    stateFlags(c.option("--store <url>", "state store: sqlite: (toolgate serve's default: state.db in the workspace's state folder), sqlite:PATH, memory:, redis://…, postgres://…", "sqlite:")).option("--json", "print JSON");

  storeOption(cmd.command("list").description("approvals, newest first"))
    .option("--state <state>", `only this state: ${STATES.join(", ")}`)
    .option("--limit <n>", "at most this many", "50")
    .action(async (opts: Common & { state?: string; limit: string }) => {
      if (opts.state !== undefined && !STATES.includes(opts.state as ApprovalState)) {
        throw new CliError(`--state must be one of ${STATES.join(", ")}; received ${JSON.stringify(opts.state)}`);
      }
      const limit = Number(opts.limit);
      if (!Number.isInteger(limit) || limit < 1) throw new CliError(`--limit must be a positive integer; received ${JSON.stringify(opts.limit)}`);
      const list = await withApprovals(opts.store, opts, (api) => api.list({ ...(opts.state ? { state: opts.state as ApprovalState } : {}), limit }));
      print(list, opts.json);
    });

  storeOption(cmd.command("approve <id>").description("let the call run once, with exactly the arguments shown"))
    .option("--approver <name>", "who approves (default: the current user)")
    .option("--note <text>", "why")
    .action(async (id: string, opts: Common & { approver?: string; note?: string }) => {
      const approver = opts.approver ?? defaultApprover();
      const record = await withApprovals(opts.store, opts, (api) => api.approve(id, { approver, ...(opts.note !== undefined ? { note: opts.note } : {}) }));
      print(record, opts.json);
    });

  storeOption(cmd.command("deny <id>").description("refuse the call; the agent is told the reason"))
    .requiredOption("--reason <text>", "why (shown to the agent)")
    .option("--approver <name>", "who denies (default: the current user)")
    .action(async (id: string, opts: Common & { reason: string; approver?: string }) => {
      const approver = opts.approver ?? defaultApprover();
      const record = await withApprovals(opts.store, opts, (api) => api.deny(id, { reason: opts.reason, approver }));
      print(record, opts.json);
    });
}
