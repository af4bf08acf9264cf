/**
 * `toolgate approvals`: a person decides A3 calls (docs/authority.md, "Approvals for A3
 * calls"). Approvals live in the store, so this works against the same store the
 * gateway (or its replicas) use.
 *   toolgate approvals list [--state S] [--limit N] [--store URL] [--json]
 *   toolgate approvals approve ID [--approver NAME] [--note TEXT] [--store URL] [--json]
 *   toolgate approvals deny ID --reason TEXT [--approver NAME] [--store URL] [--json]
 * `--store` defaults to `sqlite:`, the store toolgate serve keeps for the workspace (the current
 * folder, or `--workspace DIR`; `--state-dir DIR` as serve had it).
 * The decision is recorded as `cli:<OS user (uid N)>`; `--approver NAME` adds an unverified label.
 * Exit 0; 2 for bad input, an unknown or already decided id, a store that does not answer, or a SQLite
 * file that does not exist (list, approve and deny never create one).
 */
import type { Command } from "commander";
import { userInfo } from "node:os";
import { storeFlags, withExistingStore, type StateFlags } from "../store.js";
import type { ApprovalRecord, ApprovalState } from "../../idempotency/store.js";
import { createApprovalsApi } from "../../runtime/approvals.js";
import type { ApprovalsApi } from "../../runtime/types.js";
import { CliError, printJson } from "../io.js";
import { wholeNumber } from "../whole-number.js";
import { escapeUntrusted, jsonForDisplay } from "../../observation/escape.js";

const STATES: ApprovalState[] = ["pending", "approved", "denied", "consumed"];

interface Common extends StateFlags {
  store: string;
  json?: boolean;
}

/** Listing and deciding need approvals that exist: a missing SQLite file is refused, never created. */
function withApprovals<T>(url: string, flags: StateFlags, run: (api: ApprovalsApi) => Promise<T>): Promise<T> {
  return withExistingStore(url, flags, (store) => run(createApprovalsApi(store.approvals, Date.now)));
}

/**
 * Who runs this command, as the OS knows it (the user of the real uid, not `$USER`, which any
 * caller can set): the approver recorded for the `cli` channel. `--approver` adds a label.
 */
export function osPrincipal(): string {
  const uid = typeof process.getuid === "function" ? process.getuid() : null;
  try {
    const name = userInfo().username;
    return uid === null ? name : `${name} (uid ${uid})`;
  } catch {
    return uid === null ? "unknown user" : `uid ${uid}`;
  }
}

/** The decider of `approve`/`deny`: the OS user, with `--approver NAME` as an unverified label. */
function decider(label: string | undefined): { approver: string; channel: "cli"; label?: string } {
  return { approver: osPrincipal(), channel: "cli", ...(label !== undefined ? { label } : {}) };
}

/**
 * One approval as a few lines an operator reads before deciding. Every field but the times came
 * from a client, a model or a store anyone with access could write: each is shown escaped, one
 * line each, so none can end its line early, forge the next one or hide the arguments.
 */
export function renderApproval(a: ApprovalRecord, now: number): string {
  const e = (text: string) => escapeUntrusted(text);
  const expired = a.state === "pending" && now >= a.expires_at ? " (expired)" : "";
  const lines = [
    `${e(a.id)}  ${a.state}${expired}  ${e(a.tool)}  trajectory ${e(a.trajectory_id)}`,
    `  arguments: ${jsonForDisplay(a.arguments)}`,
    `  requested ${new Date(a.created_at).toISOString()}, expires ${new Date(a.expires_at).toISOString()}${a.capability_id ? `, capability ${e(a.capability_id)}` : ""}`,
  ];
  if (a.decided_at !== null)
    lines.push(
      `  decided ${new Date(a.decided_at).toISOString()}${a.approver ? ` by ${e(a.approver)}` : ""}${a.note ? `: ${e(a.note)}` : ""}`,
    );
  return lines.join("\n");
}

function print(value: ApprovalRecord | ApprovalRecord[], json: boolean | undefined): void {
  if (json) return printJson(value);
  const list = Array.isArray(value) ? value : [value];
  const now = Date.now();
  process.stdout.write(list.length ? list.map((a) => renderApproval(a, now)).join("\n") + "\n" : "no approvals\n");
}

export function register(program: Command): void {
  const cmd = program
    .command("approvals")
    .description("list, approve and deny A3 (destructive) calls waiting for a person");
  const storeOption = storeFlags;

  storeOption(cmd.command("list").description("approvals, newest first"))
    .option("--state <state>", `only this state: ${STATES.join(", ")}`)
    .option("--limit <n>", "at most this many", "50")
    .action(async (opts: Common & { state?: string; limit: string }) => {
      if (opts.state !== undefined && !STATES.includes(opts.state as ApprovalState)) {
        throw new CliError(`--state must be one of ${STATES.join(", ")}; received ${JSON.stringify(opts.state)}`);
      }
      const limit = wholeNumber(opts.limit, 1);
      if (limit === null)
        throw new CliError(`--limit must be a positive integer; received ${JSON.stringify(opts.limit)}`);
      const list = await withApprovals(opts.store, opts, (api) =>
        api.list({ ...(opts.state ? { state: opts.state as ApprovalState } : {}), limit }),
      );
      print(list, opts.json);
    });

  storeOption(cmd.command("approve <id>").description("let the call run once, with exactly the arguments shown"))
    .option("--approver <name>", "a name to record beside the OS user who runs this (kept as an unverified label)")
    .option("--note <text>", "why")
    .action(async (id: string, opts: Common & { approver?: string; note?: string }) => {
      const record = await withApprovals(opts.store, opts, (api) =>
        api.approve(id, { ...decider(opts.approver), ...(opts.note !== undefined ? { note: opts.note } : {}) }),
      );
      print(record, opts.json);
    });

  storeOption(cmd.command("deny <id>").description("refuse the call; the agent is told the reason"))
    .requiredOption("--reason <text>", "why (shown to the agent)")
    .option("--approver <name>", "a name to record beside the OS user who runs this (kept as an unverified label)")
    .action(async (id: string, opts: Common & { reason: string; approver?: string }) => {
      const record = await withApprovals(opts.store, opts, (api) =>
        api.deny(id, { reason: opts.reason, ...decider(opts.approver) }),
      );
      print(record, opts.json);
    });
}
