/**
 * The gateway's pipeline past the grant and the rate for a write (A2/A3): the call's idempotency key, the approval
 * gate (A3), settle around the run, then shape — `gateway.ts` runs it for a call whose authority records (`writePath`).
 * When identical A3 calls last started (`RecentRuns`) and which A3 keys settle in this process (`inTurn`) are kept
 * here, one set per gateway.
 */
import { NoEffectError } from "../core/errors.js";
import type { ToolContext, ToolSpec } from "../core/tool.js";
import type { JsonValue } from "../core/json.js";
import { deriveIdempotencyKey } from "../canonical/key.js";
import type { Store } from "../idempotency/store.js";
import type { Rendered, RenderOptions } from "../observation/observation-text.js";
import type { Redactor } from "../observation/redact.js";
import { requesterCapability, type ApprovalBinding, type ApprovalChannel } from "./approvals.js";
import { approvalGate, RecentRuns, REPLAY_ONLY, refuseRun, spendApproval, type Passed } from "./approval-gate.js";
import { isRefusal, type CallState, type Refusal } from "./call.js";
import { executeNow, type CallAbort, type Executed } from "./execute.js";
import { DEFAULT_LEASE_MS, LEASE_MARGIN_MS, type GatewayOptions } from "./gateway-options.js";
import { idempotency } from "./gateway-keys.js";
import { inTurn } from "./gateway-run.js";
import { settleStage } from "./settle.js";
import { shape } from "./shape.js";
import type { CallOptions } from "./types.js";

/** What the write path reads of its gateway, given once. */
export interface WriteDeps {
  options: GatewayOptions;
  store: Store;
  clock: () => number;
  redactor: Redactor;
  channels: readonly ApprovalChannel[];
  ttl_ms: number;
  renderOpts: (tool: ToolSpec | null, name: string) => RenderOptions;
  fail: (c: CallState, r: Refusal) => Rendered;
}

/** One write call as the pipeline hands it over: resolved, validated, granted and rated. */
export interface WriteCall extends Pick<CallOptions, "principal" | "abandoned"> {
  c: CallState;
  tool: ToolSpec;
  args: JsonValue;
  ctx: ToolContext;
  abort: CallAbort;
  /** The check's refusal held back until the call's record is read (ARCHITECTURE.md, gateway.ts's comment). */
  checkRefusal: Refusal | null;
  refuseChecked: (r: Refusal) => Rendered;
}

/** The write path of one gateway. */
export function writePath(deps: WriteDeps): (call: WriteCall) => Promise<Rendered> {
  const { options, store, clock, redactor, channels, ttl_ms, renderOpts, fail } = deps;
  // When identical A3 calls last started: a later approval request says so.
  const recentRuns = new RecentRuns();
  // A3 calls settling in this process, by key: a re-proposal of the same logical call waits for
  // the run it repeats and then reads its record (a replay) instead of meeting it in flight.
  const settling = new Map<string, Promise<void>>();
  const deriveKey = (input: Parameters<typeof deriveIdempotencyKey>[0]) =>
    deriveIdempotencyKey(input, options.key_secret ? { secret: options.key_secret } : {});

  return async function write({
    c,
    tool,
    args,
    ctx,
    abort,
    principal,
    abandoned,
    checkRefusal,
    refuseChecked,
  }: WriteCall): Promise<Rendered> {
    const p = c.proposal;
    const keyed = idempotency(options.key_secret, tool, args, p, c.granted?.holder ?? principal ?? null);
    if (isRefusal(keyed)) return checkRefusal ? refuseChecked(checkRefusal) : fail(c, keyed);
    c.key = keyed.key;
    if (checkRefusal && c.authority === "A2" && (await store.records.get(keyed.key, clock()))?.state !== "COMPLETED")
      return refuseChecked(checkRefusal);

    let key = keyed.key;
    let gate: Passed | null = null;
    let binding: ApprovalBinding | null = null;
    if (c.authority === "A3") {
      const b = (binding = {
        tool: tool.name,
        args_hash: keyed.fingerprint,
        capability_id: requesterCapability(c.granted),
        trajectory_id: p.trajectory_id,
      });
      // A proposal without ids of its own is the logical call its approval was asked for, keyed by it.
      const joins = p.call_id_assigned === true && p.idempotency_key === undefined;
      const keyFor = (approvalId: string) =>
        deriveKey({
          trajectory_id: p.trajectory_id,
          turn: 0,
          call_id: `approval ${approvalId}`,
          tool: tool.name,
          args,
        });
      // The record keeps the arguments as the model may see them (a configured secret redacted);
      // the binding's hash is of the real arguments, so the approval covers exactly this call.
      const passed = await c.stage("approve", () =>
        approvalGate(store, {
          binding: b,
          arguments: redactor.json(args),
          approval_id: p.approval_id,
          channels,
          key,
          joins,
          keyFor,
          abandoned,
          last_run_at: recentRuns.last(b),
          now: clock(),
          ttl_ms,
          refused: checkRefusal,
        }),
      );
      if (isRefusal(passed)) {
        c.approval = passed.approval ?? null;
        if (passed.key !== undefined) c.key = passed.key;
        // With a check refusal, every refusal of the gate is that refusal.
        return checkRefusal ? refuseChecked(passed) : fail(c, passed);
      }
      c.approval = passed.approval;
      c.key = key = passed.key;
      gate = passed;
    }

    // What the run did with the approval: it could not spend it (the answer is this, not a tool failure), or started
    // at.
    const spending: { refused: Refusal | null; started_at: number | null } = { refused: null, started_at: null };
    const run = async (): Promise<Executed> => {
      if (gate?.pass === REPLAY_ONLY) return refuseRun(tool.name);
      abort.throwIfCancelled(); // before an approval is spent on a call whose caller has gone

      if (gate?.pass === "run") {
        // Spent only now that this run holds the key's record: a re-proposal racing it finds the record, not a second
        // approval.
        const spent = await spendApproval(store, gate.approval, tool.name);
        if (isRefusal(spent)) {
          spending.refused = spent;
          throw new NoEffectError(spent.message, spent.code);
        }
        c.approval = spent;
        spending.started_at = clock();
      }
      // A synchronous handler's result as a value: `run` is the promise around it.
      return c.stage("execute", () => executeNow(tool, args, ctx, abort));
    };
    ctx.idempotency_key = key;
    const lease_ms = Math.max(options.lease_ms ?? DEFAULT_LEASE_MS, (abort.timeout_ms ?? 0) + LEASE_MARGIN_MS);
    const settle = () =>
      settleStage({
        store,
        tool,
        args,
        ctx,
        key,
        fingerprint: keyed.fingerprint,
        lease_ms,
        now: clock,
        redactor,
        run,
        ...(p.idempotency_key !== undefined ? { client_key: p.idempotency_key } : {}),
      });
    // Only A3 settles take turns (a re-proposal waits for the run it repeats); an A2 repeat meets the record in flight.
    const settled = await c.stage("settle", () =>
      c.authority === "A3" ? inTurn(settling, key, lease_ms, settle) : settle(),
    );
    c.record_state = settled.record_state;
    if (spending.refused) {
      c.stages.settle = { ...c.stages.settle!, outcome: spending.refused.code };
      return fail(c, spending.refused);
    }
    if (spending.started_at !== null && settled.record_state !== null) recentRuns.note(binding!, spending.started_at);
    if (isRefusal(settled)) return fail(c, settled);
    c.replay = settled.replay;
    return c.stage("shape", () =>
      shape(
        {
          tool: tool.name,
          call_id: p.call_id,
          authority: c.authority!,
          result: settled.result,
          replay: settled.replay,
        },
        renderOpts(tool, tool.name),
      ),
    );
  };
}
