/**
 * `createGateway`: the runtime boundary (every call passes validation and grant before it
 * takes effect). `call` reads like the pipeline of ARCHITECTURE.md:
 * resolve → validate → grant → rate → approve (A3) → settle (A2/A3) → execute → shape → audit.
 * Each stage lives in its own module and returns data or a `Refusal`; only this file renders
 * refusals and writes the audit record.
 */
import { AUTHORITY, type CallerCapability, type ToolContext, type ToolSpec } from "../core/tool.js";
import { type JsonValue } from "../core/json.js";
import { NoEffectError, ToolgateError } from "../core/errors.js";
import { assertStore, type Store } from "../idempotency/store.js";
import { createCapabilityAuthority, type CapabilityAuthority } from "../capability/authority.js";
import type { KeyRing } from "../capability/keys.js";
import { clientRecordKey, deriveIdempotencyKey, deriveKeyAndFingerprint, fingerprint } from "../canonical/key.js";
import { renderError, type Rendered, type RenderOptions } from "../observation/observation-text.js";
import { createRedactor } from "../observation/redact.js";
import { createContinuationCache, type ContinuationOptions } from "../observation/continuations.js";
import { READ_MORE, readMoreTool } from "./read-more.js";
import { auditTimestamp, createAuditSink, type AuditSink, type PendingAudit } from "./audit.js";
import { readTraceContext } from "./trace-context.js";
import {
  APPROVE_VIA,
  channelsOf,
  createApprovalsApi,
  DEFAULT_APPROVAL_TTL_MS,
  requesterCapability,
  type ApprovalBinding,
  type ApproveVia,
} from "./approvals.js";
import {
  approvalGate,
  auditedApproval,
  RecentRuns,
  REPLAY_ONLY,
  refuseRun,
  spendApproval,
  type Passed,
} from "./approval-gate.js";
import { CallState, isRefusal, isThenable, refuse, type Refusal } from "./call.js";
import { CallAbort, ExecutionAborted, execute, executeNow, type Executed } from "./execute.js";
import { thrownRefusal, unrenderableRefusal } from "./failures.js";
import { grant } from "./grant.js";
import { rateLimit, type RateLimits } from "./rate-limit.js";
import { visibleTools } from "./visible.js";
import { resolve } from "./resolve.js";
import { settleStage } from "./settle.js";
import { shape } from "./shape.js";
import { createValidator, runCheck, validateSchema } from "./validate.js";
import { budgetFor, checkBudgets, keySecrets, type Budgets } from "./config.js";
import { READ_REASON_CHARS, type CallOptions, type Gateway, type Proposal } from "./types.js";
import type { Observation } from "../core/observation.js";
import { InFlight } from "../core/in-flight.js";
import { logRelay, progressRelay, type LogRelay, type ProgressRelay } from "./progress.js";

export interface GatewayOptions {
  /** The catalog; names must be unique. */
  tools: ToolSpec[];
  /** Idempotency records and approvals (and the authority's revocations and budgets). */
  store: Store;
  /** Capability root keys: when set (or `authority` is), every call needs a capability. */
  keys?: KeyRing;
  /** A ready authority (overrides `keys`). */
  authority?: CapabilityAuthority;
  /** Observation budgets in o200k tokens: per tool > gateway default > the tool's own `budget_tokens` > 2,000 (see
   * `Budgets`). */
  budgets?: Budgets;
  /** Audit sink: a JSONL path (default `audit.jsonl` in the current directory's state folder, outside it:
   * `createAuditSink`), a sink, or false for none. */
  audit?: string | AuditSink | false;
  /** Epoch ms, for approvals, leases and timestamps. Default `Date.now`. */
  clock?: () => number;
  /** Secret values redacted from every observation (e.g. API keys from the environment); ≥ 6 characters each. */
  secrets?: string[];
  /** Idempotency lease for A2/A3, ms; always at least the tool's timeout plus 5 s. Default 60,000. */
  lease_ms?: number;
  /** Lifetime of an A3 approval request, ms. Default 15 minutes. */
  approval_ttl_ms?: number;
  /**
   * Which channels' approvals run an A3 call: `cli` (`toolgate approvals`, or your own code through
   * `gateway.approvals`), `elicitation` (a person an MCP client asked), or `both` (default).
   */
  approve_via?: ApproveVia;
  /** HMAC secret for derived idempotency keys (docs/idempotency.md: when keys must not be guessable). */
  key_secret?: string | Uint8Array;
  /** Time bound for tools that set no `timeout_ms`, ms; null = unbounded. Default 60,000. */
  timeout_ms?: number | null;
  /**
   * Keep the part a budget cut removes behind a cursor and add the built-in `read_more` tool that
   * pages through it (in process memory; default off, so the catalog is exactly `tools`).
   */
  continuations?: boolean | Omit<ContinuationOptions, "now">;
  /** Calls per window, per tool, server or grant holder, counted in a guard store (`runtime/rate-limit.ts`). */
  rate_limits?: RateLimits;
}

const DEFAULT_LEASE_MS = 60_000;
const DEFAULT_TIMEOUT_MS = 60_000;
const LEASE_MARGIN_MS = 5_000;
/** After the grace period: how long aborted calls get to record IN_DOUBT and answer (store writes are bounded by the
 * store's own timeouts). */
const SETTLE_AFTER_ABORT_MS = 5_000;

export function createGateway(options: GatewayOptions): Gateway {
  const tools = new Map<string, ToolSpec>();
  for (const t of options.tools) {
    if (tools.has(t.name))
      throw new ToolgateError(
        "invalid_config",
        `tools: two tools are named ${JSON.stringify(t.name)}; tool names must be unique`,
      );
    tools.set(t.name, t);
  }
  const { store } = options;
  assertStore(store, "store");
  const clock = options.clock ?? Date.now;
  const more = options.continuations
    ? createContinuationCache({ ...(options.continuations === true ? {} : options.continuations), now: clock })
    : null;
  if (more) {
    if (tools.has(READ_MORE))
      throw new ToolgateError(
        "invalid_config",
        `continuations: the built-in tool ${READ_MORE} would replace a catalog tool of that name; rename that tool or turn continuations off`,
      );
    tools.set(READ_MORE, readMoreTool(more, budgetFor(null, READ_MORE, options.budgets)));
  }
  checkBudgets(options.budgets, tools);
  const validator = createValidator();
  // Compile every schema now: a schema Ajv cannot use fails at startup, not on the first call.
  for (const t of tools.values()) validator.compile({ name: t.name, inputSchema: t.inputSchema });
  const redactor = createRedactor([...(options.secrets ?? []), ...keySecrets(options.keys)]);
  const authority =
    options.authority ?? (options.keys ? createCapabilityAuthority({ keys: options.keys, store, now: clock }) : null);
  // Last: every check above has passed, so a refused configuration leaves no open file behind.
  const sink =
    options.audit === false ? null : typeof options.audit === "object" ? options.audit : createAuditSink(options.audit);
  const ttl_ms = options.approval_ttl_ms ?? DEFAULT_APPROVAL_TTL_MS;
  const approveVia = options.approve_via ?? "both";
  if (!APPROVE_VIA.includes(approveVia))
    throw new ToolgateError(
      "invalid_config",
      `approve_via must be one of ${APPROVE_VIA.join(", ")}; received ${JSON.stringify(approveVia)}`,
    );
  const channels = channelsOf(approveVia);
  // Calls in flight, and who waits for them to end (close).
  const active = new InFlight<CallState>();
  let closed = false;
  // Set when close() gives up waiting: calls still running are aborted with it.
  let shutdown: ExecutionAborted | null = null;
  // When identical A3 calls last started: a later approval request says so.
  const recentRuns = new RecentRuns();
  // A3 calls settling in this process, by key: a re-proposal of the same logical call waits for
  // the run it repeats and then reads its record (a replay) instead of meeting it in flight.
  const settling = new Map<string, Promise<void>>();

  const renderOpts = (tool: ToolSpec | null, name: string): RenderOptions => ({
    budget_tokens: budgetFor(tool, name, options.budgets),
    redactor,
    ...(more ? { continuations: { cache: more, tool: READ_MORE } } : {}),
  });

  async function pipeline(
    c: CallState,
    { signal, abandoned, principal, ask }: CallOptions,
    relay: ProgressRelay | null,
    logs: LogRelay | null,
  ): Promise<Rendered> {
    const p = c.proposal;
    const tool = c.stageNow("resolve", () => resolve(tools, p));
    if (isRefusal(tool)) return fail(c, tool);
    c.tool = tool;
    c.authority = AUTHORITY[tool.effect];
    const abort = (c.abort = new CallAbort(
      tool.timeout_ms ?? (options.timeout_ms === undefined ? DEFAULT_TIMEOUT_MS : options.timeout_ms),
      signal,
    ));
    if (shutdown) abort.cancel(shutdown);
    let caller: Promise<CallerCapability | null> | undefined;
    const ctx: ToolContext = {
      get signal() {
        return abort.signal;
      },
      trajectory_id: p.trajectory_id,
      turn: p.turn,
      call_id: p.call_id,
      now: clock,
      budget_tokens: budgetFor(tool, tool.name, options.budgets),
      caller: () =>
        (caller ??= authority && p.capability !== undefined ? authority.caller(p.capability) : Promise.resolve(null)),
      note: (name, value) => {
        (c.notes ??= {})[name] = value;
      },
      ...(c.trace.trace ? { trace: c.trace.trace } : {}),
    };
    if (relay) ctx.progress = relay.report; // set only when asked for: the common call builds no spread
    if (logs) ctx.log = logs.log;
    if (ask) ctx.ask = ask;
    c.ctx = ctx;

    // A2/A3: a refusal of the check waits until the call's record is read. A repeat of a call that
    // ran is answered from its record, whatever the check finds now (its own effect may be what
    // the check refuses: a refund that used up the balance); any other call gets the refusal.
    let checkRefusal: Refusal | null = null;
    const refuseChecked = (r: Refusal) => {
      c.validation_codes = (r.issues ?? []).map((i) => i.code);
      return fail(c, r);
    };
    // A tool without a semantic check is validated synchronously: no promise for the common call.
    const valid = !tool.check
      ? c.stageNow("validate", () => validateSchema(validator, tool, p.arguments))
      : await c.stage("validate", async () => {
          const schema = validateSchema(validator, tool, p.arguments);
          if (isRefusal(schema)) return schema;
          const checked = await runCheck(tool, schema.value, ctx);
          if (checked === null) return schema;
          if (c.authority === "A0" || c.authority === "A1") return checked;
          checkRefusal = checked;
          return schema;
        });
    if (isRefusal(valid)) return refuseChecked(valid);
    const args = (c.args = valid.value);
    if (tool.timeoutFor) narrowBound(abort, tool, args);

    if (authority) {
      const granted = await c.stage("grant", () => grant(authority, tool, args, p.capability, ctx));
      if (isRefusal(granted)) {
        if (checkRefusal) return refuseChecked(checkRefusal);
        c.grant_code = String(granted.detail?.code ?? granted.code);
        return fail(c, granted);
      }
      c.grant_id = granted.grant_id;
      c.granted = granted;
      c.grant_code = "allowed";
      const token = p.capability!;
      ctx.authorizeAlso = async (request) => {
        const d = await authority.authorize(token, { ...request, tool: tool.name, args });
        return d.allowed ? null : `${d.reason} (${d.code})`;
      };
    }

    const limits = options.rate_limits;
    if (limits) {
      const holder = async () =>
        authority && p.capability !== undefined ? ((await authority.holder(p.capability))?.key ?? null) : null;
      const limited = await c.stage("rate", () => rateLimit(limits, tool.name, holder, clock()));
      if (limited) return fail(c, limited);
    }

    if (c.authority === "A0" || c.authority === "A1") {
      // A synchronous handler's result is taken as it comes, without a promise or an await.
      const ran = c.stage("execute", () => executeSafe(tool, args, ctx, abort));
      const result = isThenable(ran) ? await ran : ran;
      if (isRefusal(result)) return fail(c, result);
      try {
        return c.stage("shape", () =>
          shape(
            { tool: tool.name, call_id: p.call_id, authority: c.authority!, result, replay: false },
            renderOpts(tool, tool.name),
          ),
        );
      } catch (err) {
        // Rendering threw on the tool's own result (A2/A3 results are checked by settle before they are stored).
        return fail(c, unrenderableRefusal(tool, err));
      }
    }

    const keyed = idempotency(tool, args, p, c.granted?.holder ?? principal ?? null);
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
      return c.stage("execute", () => execute(tool, args, ctx, abort));
    };
    ctx.idempotency_key = key;
    const lease_ms = Math.max(options.lease_ms ?? DEFAULT_LEASE_MS, (abort.timeout_ms ?? 0) + LEASE_MARGIN_MS);
    const settled = await c.stage("settle", () =>
      inTurn(c.authority === "A3" ? key : null, lease_ms, () =>
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
        }),
      ),
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
  }

  /**
   * Runs `work` after the settle of the same `key` still running in this process (waiting at most
   * `ms`: then settle meets it in flight and says so); null runs it at once.
   */
  async function inTurn<T>(key: string | null, ms: number, work: () => Promise<T>): Promise<T> {
    if (key === null) return work();
    const ahead = settling.get(key);
    const mine = (ahead ? waitAtMost(ahead, ms) : Promise.resolve()).then(work);
    const done = mine.then(
      () => {},
      () => {},
    );
    settling.set(key, done);
    try {
      return await mine;
    } finally {
      if (settling.get(key) === done) settling.delete(key);
    }
  }

  const deriveKey = (input: Parameters<typeof deriveIdempotencyKey>[0]) =>
    deriveIdempotencyKey(input, options.key_secret ? { secret: options.key_secret } : {});

  /**
   * The call's idempotency key: the client's (checked, and scoped to the tool and `holder`) or derived
   * from the trajectory (docs/idempotency.md).
   */
  function idempotency(
    tool: ToolSpec,
    args: JsonValue,
    p: Proposal,
    holder: string | null,
  ): { key: string; fingerprint: string } | Refusal {
    const secret = options.key_secret ? { secret: options.key_secret } : {};
    let key: string;
    try {
      // A derived key: one canonical text of the arguments for both the key and the fingerprint.
      if (p.idempotency_key === undefined)
        return deriveKeyAndFingerprint(
          { trajectory_id: p.trajectory_id, turn: p.turn, call_id: p.call_id, tool: tool.name, args },
          secret,
        );
      key = clientRecordKey({ tool: tool.name, holder, key: p.idempotency_key }, secret);
    } catch (err) {
      return refuse(
        "invalid_proposal",
        `${(err as Error).message}. Fix the call envelope and send it again; nothing was executed.`,
      );
    }
    return { key, fingerprint: fingerprint(args) };
  }

  function fail(c: CallState, r: Refusal): Rendered {
    return renderError(
      {
        tool: c.proposal.tool ?? "(none)",
        call_id: c.proposal.call_id ?? "(none)",
        ...(c.authority ? { authority: c.authority } : {}),
        code: r.code,
        message: r.message,
        ...(r.issues ? { issues: r.issues } : {}),
        ...(r.detail ? { detail: r.detail } : {}),
        ...(r.untrusted !== undefined ? { untrusted: r.untrusted } : {}),
      },
      renderOpts(c.tool, String(c.proposal.tool)),
    );
  }

  function audit(c: CallState, rendered: Rendered): void {
    if (!sink) return;
    try {
      sink.write(auditEntry(c, rendered));
    } catch (err) {
      // A call that outlived close() must still answer; its line is reported instead of thrown.
      process.stderr.write(
        `toolgate: audit line for call ${String(c.proposal.call_id)} not written: ${(err as Error).message}\n`,
      );
    }
  }

  function auditEntry(c: CallState, rendered: Rendered): PendingAudit {
    const o = rendered.observation;
    return {
      record: {
        ts: auditTimestamp(c.arrived),
        trajectory_id: String(c.proposal.trajectory_id),
        turn: c.proposal.turn,
        call_id: String(c.proposal.call_id),
        tool: typeof c.proposal.tool === "string" ? c.proposal.tool : "(none)",
        authority: c.authority,
        outcome: o.ok ? "ok" : (o.error?.code ?? "error"),
        stages: c.stages,
        validation_codes: c.validation_codes,
        grant_code: c.grant_code,
        key: c.key,
        record_state: c.record_state,
        replay: c.replay,
        approval: auditedApproval(c.approval),
        argument_tokens: null,
        observation_tokens: rendered.tokens,
        truncated: o.truncated !== undefined,
        latency_ms: c.elapsed(),
        ...(c.notes ? { notes: c.notes } : {}),
        ...(c.trace.trace ? { trace: c.trace.trace } : {}),
        ...(c.trace.ignored !== null ? { trace_ignored: c.trace.ignored } : {}),
      },
      arguments: c.args !== undefined ? c.args : (c.proposal.arguments as JsonValue),
      observation_text: o.text,
    };
  }

  async function run(proposal: Proposal, callOptions: CallOptions): Promise<Observation> {
    const c = new CallState(proposal, clock());
    if (callOptions.trace !== undefined) c.trace = readTraceContext(callOptions.trace);
    active.add(c);
    const relay = callOptions.progress ? progressRelay(callOptions.progress) : null;
    const logs = callOptions.log ? logRelay(callOptions.log) : null;
    try {
      let rendered: Rendered;
      try {
        rendered = await pipeline(c, callOptions, relay, logs);
      } catch (err) {
        // A bug or a failing store outside settle: still an observation, never a throw across the boundary.
        rendered = fail(
          c,
          refuse(
            "internal_error",
            `toolgate could not complete this call (${(err as Error)?.message ?? String(err)}). ${c.key ? "Whether it took effect is unknown; check the state with a read-only tool before retrying." : "Nothing was executed; retry later."}`,
          ),
        );
      }
      audit(c, rendered);
      return rendered.observation;
    } finally {
      relay?.end();
      logs?.end();
      active.delete(c);
    }
  }

  return {
    tools,
    requiresCapability: authority !== null,
    holder: (capability) => (authority ? authority.holder(capability) : Promise.resolve(null)),
    visible: (capability) => (authority ? visibleTools(authority, tools.values(), capability) : Promise.resolve(null)),
    approvals: createApprovalsApi(store.approvals, clock),
    recordRead(read) {
      if (!sink?.writeRead) return;
      const { trace: given, reason, ...rest } = read;
      const trace = given === undefined ? null : readTraceContext(given);
      try {
        sink.writeRead({
          ts: auditTimestamp(clock() - read.latency_ms),
          kind: "read",
          ...rest,
          ...(reason !== undefined ? { reason: reason.slice(0, READ_REASON_CHARS) } : {}),
          ...(trace?.trace ? { trace: trace.trace } : {}),
          ...(trace && trace.ignored !== null ? { trace_ignored: trace.ignored } : {}),
        });
      } catch (err) {
        // As for a call's line: a read answered after close() still answers; its line is reported instead.
        process.stderr.write(`toolgate: audit line for ${read.operation} not written: ${(err as Error).message}\n`);
      }
    },
    call(proposal, callOptions) {
      if (closed) {
        return Promise.resolve(
          fail(
            new CallState(proposal, clock()),
            refuse("internal_error", "This gateway is closed; nothing was executed. Reconnect to a running toolgate."),
          ).observation,
        );
      }
      return run(proposal, callOptions ?? {});
    },
    async close(closeOptions = {}) {
      if (closed) return;
      closed = true;
      const grace = closeOptions.grace_ms ?? 5_000;
      if (!(await active.idle(grace))) {
        // Grace is over: abort what still runs through its signal (an A2/A3 call whose handler
        // started ends IN_DOUBT; one not yet started is released) and let each call settle its
        // record, answer and write its audit line before the sink and the store close.
        shutdown = new ExecutionAborted("shutdown", null);
        for (const c of active) c.abort?.cancel(shutdown);
        await active.idle(SETTLE_AFTER_ABORT_MS);
      }
      await sink?.close();
      await store.close();
    },
  };
}

/**
 * An A0/A1 execution whose throw or rejection is the refusal that says so (nothing to settle):
 * synchronous when the handler is.
 */
function executeSafe(
  tool: ToolSpec,
  args: JsonValue,
  ctx: ToolContext,
  abort: CallAbort,
): Executed | Refusal | Promise<Executed | Refusal> {
  const refused = (err: unknown) => thrownRefusal(tool, err, { effect: "safe" });
  try {
    const ran = executeNow(tool, args, ctx, abort);
    return isThenable(ran) ? ran.catch(refused) : ran;
  } catch (err) {
    return refused(err);
  }
}

/** Resolves when `p` settles or after `ms`, whichever is first. */
function waitAtMost(p: Promise<void>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([p, new Promise<void>((resolve) => (timer = setTimeout(resolve, ms).unref()))]).finally(() =>
    clearTimeout(timer),
  );
}

/** Applies a tool's per-call bound; a `timeoutFor` that throws or answers nonsense leaves the tool's own bound. */
function narrowBound(abort: CallAbort, tool: ToolSpec, args: JsonValue): void {
  try {
    const ms = tool.timeoutFor!(args as Record<string, unknown>);
    if (typeof ms === "number") abort.narrow(ms);
  } catch {
    // The tool's own timeout_ms still bounds the call.
  }
}
