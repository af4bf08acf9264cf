/**
 * `createGateway`: the runtime boundary (every call passes validation and grant before it
 * takes effect). `call` reads like the pipeline of ARCHITECTURE.md:
 * resolve → validate → grant → rate → approve (A3) → settle (A2/A3) → execute → shape → audit.
 * Each stage lives in its own module and returns data or a `Refusal`; only this file renders
 * refusals and writes the audit record. A write's part of the line (its key, approve, settle around execute, shape)
 * is `gateway-write.ts`, which renders through this file's `fail`.
 */
import { AUTHORITY, type CallerCapability, type ToolContext, type ToolSpec } from "../core/tool.js";
import { ToolgateError } from "../core/errors.js";
import { assertStore } from "../idempotency/store.js";
import { createCapabilityAuthority } from "../capability/authority.js";
import { renderError, type Rendered, type RenderOptions } from "../observation/observation-text.js";
import { createRedactor } from "../observation/redact.js";
import { createContinuationCache } from "../observation/continuations.js";
import { READ_MORE, readMoreTool } from "./read-more.js";
import { createAuditSink } from "./audit.js";
import { readTraceContext } from "./trace-context.js";
import { APPROVE_VIA, channelsOf, createApprovalsApi, DEFAULT_APPROVAL_TTL_MS } from "./approvals.js";
import { CallState, isRefusal, isThenable, refuse, type Refusal } from "./call.js";
import { CallAbort, ExecutionAborted } from "./execute.js";
import { CallContext } from "./call-context.js";
import { unrenderableRefusal } from "./failures.js";
import { grant } from "./grant.js";
import { rateLimit } from "./rate-limit.js";
import { visibleTools } from "./visible.js";
import { resolve } from "./resolve.js";
import { shape } from "./shape.js";
import { createValidator, runCheck, validateSchema } from "./validate.js";
import { budgetFor, checkBudgets, keySecrets } from "./config.js";
import { type CallOptions, type Gateway, type Proposal } from "./types.js";
import type { Observation } from "../core/observation.js";
import type { JsonValue } from "../core/json.js";
import { InFlight } from "../core/in-flight.js";
import { logRelay, progressRelay, type LogRelay, type ProgressRelay } from "./progress.js";
import { DEFAULT_TIMEOUT_MS, SETTLE_AFTER_ABORT_MS, type GatewayOptions } from "./gateway-options.js";
import { readRecorder, writeAudit } from "./gateway-audit.js";
import { executeSafe, narrowBound } from "./gateway-run.js";
import { writePath } from "./gateway-write.js";

// Kept importable from here, where it has always been.
export type { GatewayOptions } from "./gateway-options.js";

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

  const renderOptsOf = (tool: ToolSpec | null, name: string): RenderOptions => ({
    budget_tokens: budgetFor(tool, name, options.budgets),
    redactor,
    ...(more ? { continuations: { cache: more, tool: READ_MORE } } : {}),
  });
  // A catalog tool's options are the same on every call: made once per tool (an unknown name's, per call).
  const toolRenderOpts = new Map<ToolSpec, RenderOptions>();
  const renderOpts = (tool: ToolSpec | null, name: string): RenderOptions => {
    if (tool === null || tool.name !== name) return renderOptsOf(tool, name);
    let opts = toolRenderOpts.get(tool);
    if (opts === undefined) toolRenderOpts.set(tool, (opts = renderOptsOf(tool, name)));
    return opts;
  };
  const write = writePath({ options, store, clock, redactor, channels, ttl_ms, renderOpts, fail });

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
    const ctx: ToolContext = new CallContext(
      abort,
      p,
      clock,
      budgetFor(tool, tool.name, options.budgets),
      () =>
        (caller ??= authority && p.capability !== undefined ? authority.caller(p.capability) : Promise.resolve(null)),
      (name, value) => {
        (c.notes ??= {})[name] = value;
      },
    );
    if (c.trace.trace) ctx.trace = c.trace.trace;
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
    const checked = (schema: { value: JsonValue }, found: Refusal | null) => {
      if (found === null) return schema;
      if (c.authority === "A0" || c.authority === "A1") return found;
      checkRefusal = found;
      return schema;
    };
    // A tool without a semantic check, or with a synchronous one, is validated synchronously: no promise.
    const validating = c.stage("validate", () => {
      const schema = validateSchema(validator, tool, p.arguments);
      if (isRefusal(schema) || !tool.check) return schema;
      const found = runCheck(tool, schema.value, ctx);
      return isThenable(found) ? found.then((f) => checked(schema, f)) : checked(schema, found);
    });
    const valid = isThenable(validating) ? await validating : validating;
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

    return write({ c, tool, args, ctx, abort, principal, abandoned, checkRefusal, refuseChecked });
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
      writeAudit(sink, c, rendered);
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
    recordRead: readRecorder(sink, clock),
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
