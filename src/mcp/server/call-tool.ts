/**
 * tools/call: one Proposal to the gateway, answered as its observation — or, when the call waits
 * for a person, by elicitation (2025-11-25) or an input-required result (2026-07-28); as a task
 * when the client asked (2025-11-25) or the runner decides (2026-07-28, the tasks extension).
 */
import {
  inputRequired,
  LOG_LEVEL_META_KEY,
  type CallToolResult,
  type ClientCapabilities,
  type InputRequiredResult,
  type Result,
  type ServerContext,
} from "@modelcontextprotocol/server";
import type { Observation } from "../../core/observation.js";
import { AUTHORITY, isLogLevel, type CallAsk, type CallLog, type ProgressUpdate } from "../../core/tool.js";
import { ToolgateError } from "../../core/errors.js";
import type { TaskRecord } from "../../idempotency/tasks.js";
import { shownValue } from "../../observation/escape.js";
import type { ApproveVia } from "../../runtime/approvals.js";
import { taskSupport } from "../../runtime/tasks.js";
import type { Gateway, Proposal } from "../../runtime/types.js";
import { approveByElicitation, DEFAULT_APPROVAL_TIMEOUT_MS, pendingApprovalId } from "./approval.js";
import { cannotAsk, legacyAsk } from "./call-ask.js";
import { HeldCalls, heldCallsOf, type Stop } from "./call-held.js";
import { metaRefusal, unknownTool, withCapabilityHint } from "./call-answers.js";
import { idsFromHeaders, withHeaderIds } from "./call-headers.js";
import { requireEnvelope, type Envelope } from "./envelope.js";
import { TaskAnswer, type CallToolParams, type GatewayServer } from "./gateway-server.js";
import { approveByInputRequired } from "./input-required.js";
import { bearerToken, idsFromMeta, META_KEYS, type SessionIds } from "./meta.js";
import { DEFAULT_LOG_LEVEL, type McpServerOptions } from "./options.js";
import { invalidParams } from "./protocol-error.js";
import { requestGone } from "./request-gone.js";
import { taskForbidden, taskRequired, tasksExtensionRequired } from "./task-support.js";
import { taskTtl, toMcpTask } from "./tasks.js";
import { createTaskResult, declaresTasks, TASKS_EXTENSION } from "./tasks-ext.js";
import { traceOf } from "./trace-of.js";

/** What a server's tools/call reads, made once per server by `createMcpServer`. */
export interface CallToolContext {
  server: GatewayServer;
  gateway: Gateway;
  options: Pick<
    McpServerOptions,
    "capability" | "capabilitiesIgnored" | "logging" | "approvalTimeoutMs" | "tasks" | "quota"
  >;
  session: SessionIds;
  warn: (line: string) => void;
  /** The tools/list entries, by name: which tools carry `execution` (may run as tasks). */
  listing: readonly { tool: { name: string; execution?: unknown } }[];
  /** The caller the transport authenticated; it scopes idempotency keys and owns tasks. */
  principal: string;
  via: ApproveVia;
  progressMs: number;
  callResult: (name: string, obs: Observation) => CallToolResult;
}

/** The tools/call handler of one server. */
export function toolCall(context: CallToolContext): (params: CallToolParams, ctx: ServerContext) => Promise<Result> {
  const { server, gateway, options, session, warn, listing, principal, via, progressMs, callResult } = context;
  const runner = options.tasks;
  const approvalTimeout = options.approvalTimeoutMs ?? DEFAULT_APPROVAL_TIMEOUT_MS;
  let warnedIgnored = false;
  /** Whom the bounds count this caller as, when coarser than `principal` (`McpServerOptions.quota`). */
  const quota = options.quota !== undefined ? { quota: options.quota } : {};

  async function callTool(params: CallToolParams, ctx: ServerContext): Promise<Result> {
    const envelope = requireEnvelope(server, ctx, "tools/call");
    const { name, arguments: args, _meta } = params ?? {};
    if (typeof name !== "string" || name === "") {
      throw invalidParams(
        `tools/call params.name must be the name of a tool (a non-empty string); received ${shownValue(name)}; call tools/list for the names`,
      );
    }
    if (_meta !== undefined && (typeof _meta !== "object" || _meta === null || Array.isArray(_meta))) {
      throw invalidParams(
        `tools/call params._meta must be an object; received ${shownValue(_meta)}; e.g. {"toolgate/call_id": "c1"}`,
      );
    }
    const req = ctx.http?.req;
    const http = req !== undefined;
    const header = http ? bearerToken(req.headers.get("authorization") ?? undefined) : undefined;
    const bearer = header ?? options.capability;
    // Over HTTP, Idempotency-Key and Toolgate-Call-Id name the call for clients that cannot set _meta.
    const fromHeaders = http ? idsFromHeaders((h) => req.headers.get(h)) : null;
    if (fromHeaders && !fromHeaders.ok) return metaRefusal(name, fromHeaders.issue);
    const meta = fromHeaders
      ? withHeaderIds(_meta as Record<string, unknown> | undefined, fromHeaders.ids)
      : (_meta as Record<string, unknown> | undefined);
    const parsed = idsFromMeta(meta, session, bearer);
    if (!parsed.ok) return metaRefusal(name, parsed.issue);
    if (
      options.capabilitiesIgnored &&
      !warnedIgnored &&
      (header !== undefined || (_meta as Record<string, unknown> | undefined)?.[META_KEYS.capability] !== undefined)
    ) {
      warnedIgnored = true;
      warn(
        `toolgate: a call in session ${session.trajectory_id} carries a capability, but this server has no capability keys (--keys or TOOLGATE_KEYS), so capabilities are ignored and every call is allowed; this warning is printed once per session`,
      );
    }
    // MCP makes `arguments` optional: absent means a call without arguments.
    const proposal = { ...parsed.ids, tool: name, arguments: args === undefined ? {} : args };
    // A client's cancel aborts the call through its signal (a read stops, a shell command's tree
    // is killed, a started write is in doubt, and the observation says which); a connection that
    // closed only marks it `abandoned`: an A3 call is then not run on an approval that arrives
    // after its client gave up, and anything else settles and answers a retry with the same ids.
    const spec = gateway.tools.get(name);
    const approvable = spec !== undefined && AUTHORITY[spec.effect] === "A3";
    const { abandoned, cancelled } = requestGone(
      server,
      ctx.mcpReq.signal,
      envelope.protocolVersion !== undefined,
      approvable,
    );
    // A long call's progress (elapsed ms, which only grows, and the tool's line) for a request with a progressToken.
    const token = (_meta as Record<string, unknown> | undefined)?.progressToken;
    const progressOf =
      typeof token === "string" || typeof token === "number"
        ? (u: ProgressUpdate) =>
            void ctx.mcpReq
              .notify({
                method: "notifications/progress",
                params: { progressToken: token, progress: u.elapsed_ms, message: u.message },
              })
              .catch(() => {})
        : undefined;
    const trace = traceOf(_meta as Record<string, unknown> | undefined, ctx);
    const log = options.logging ? callLog(ctx, envelope) : undefined;
    // An unknown tool gets the same -32602 with or without a task (nothing is started for it).
    const support = runner && spec ? taskSupport(spec) : null;
    if (params.task !== undefined && spec) {
      if (runner && support === null && envelope.protocolVersion === undefined)
        throw taskForbidden(
          name,
          listing.filter(({ tool }) => tool.execution !== undefined).map(({ tool }) => tool.name),
        );
      return startTask(proposal, params.task, envelope, token);
    }
    const modern = envelope.protocolVersion !== undefined;
    // The server decides (2026-07-28): a call of a tool that may run as a task, from a client that
    // declared the extension, answers in its request when it ends within the runner's task_after_ms,
    // else as the task it goes on as; a tool that runs only as a task is one at once.
    const asTask = support !== null && modern && declaresTasks(envelope.clientCapabilities);
    if (support === "required" && !asTask) throw modern ? tasksExtensionRequired(name) : taskRequired(name);
    const ran = asTask
      ? await runner!
          .run(proposal, {
            owner: principal,
            ...quota,
            signal: cancelled,
            ...(support === "required" ? { task_after_ms: 0 } : {}),
            // A question the call asks (a proxied upstream task's) is held in the task for its client to answer.
            cannotAsk: (r) => cannotAsk(envelope.clientCapabilities, r.method, r.params.mode),
            ...(progressOf ? { progress: progressOf } : {}),
            ...(log ? { log } : {}),
            ...(trace ? { trace } : {}),
          })
          .catch((err: unknown) => refusedTask(err, "tools/call"))
      : undefined;
    if (ran && "task" in ran) throw new TaskAnswer(createTaskResult(ran.task));
    // A 2026-07-28 call of a tool that may run long (a proxied upstream task's), from a client
    // without tasks: its questions are asked with an input-required result, the call held until the
    // client's retry answers them (call-held.ts). An A3 one runs held too, so a call run on its
    // approval (the approval round's retry, or a repeat with the approval id) asks on the same way:
    // the approval and the questions after it are one held call.
    let obs: Observation;
    let heldApproval: ((approvalId: string) => Promise<Observation | InputRequiredResult>) | undefined;
    if (modern && !ran && spec?.runsAsTask) {
      const held = heldCallsOf(gateway, approvalTimeout);
      const bound = {
        principal,
        ...quota,
        tool: name,
        arguments: proposal.arguments,
        capability: proposal.capability,
      };
      const state = ctx.mcpReq.requestState();
      // This request's progressToken and log level, for what the call reports while it waits on it.
      const notices = { ...(progressOf ? { progress: progressOf } : {}), ...(log ? { log } : {}) };
      const begin = (p: Proposal) =>
        held.begin(bound, cancelled, notices, (signal, ask, reports) =>
          gateway.call(p, {
            abandoned: signal,
            principal,
            signal,
            // Given even when this request asked for neither: a retry may ask for what it did not.
            progress: reports.progress,
            ...(options.logging ? { log: reports.log } : {}),
            ...(trace ? { trace } : {}),
            ask: heldAsk(envelope.clientCapabilities, ask),
          }),
        );
      const stopped = (stop: Stop): Observation | InputRequiredResult =>
        "questions" in stop
          ? inputRequired({ inputRequests: stop.questions as never, requestState: stop.requestState })
          : withCapabilityHint(stop.observation, http);
      // An A3 call's approval round carries the approval id as its state (input-required.ts), not a held call's.
      const answered =
        state !== undefined && (!approvable || HeldCalls.names(state))
          ? stopped(
              await held.resume(
                String(state),
                bound,
                ctx.mcpReq.inputResponses,
                cancelled,
                notices,
                ctx.mcpReq.droppedInputResponseKeys,
              ),
            )
          : stopped(await begin(proposal));
      if ("resultType" in answered) return answered;
      obs = answered;
      if (approvable) heldApproval = (approvalId) => begin({ ...proposal, approval_id: approvalId }).then(stopped);
    } else {
      obs = withCapabilityHint(
        ran?.answer ??
          (await gateway.call(proposal, {
            abandoned,
            principal,
            signal: cancelled,
            ...(progressOf ? { progress: progressOf } : {}),
            ...(log ? { log } : {}),
            ...(trace ? { trace } : {}),
            // A 2025-11-25 client can be asked mid-call (a proxied upstream's question), on this request's stream.
            ...(modern
              ? {}
              : { ask: legacyAsk({ server, for: { requestId: ctx.mcpReq.id }, timeoutMs: approvalTimeout }) }),
          })),
        http,
      );
    }
    if (obs.error?.code === "unknown_tool") throw unknownTool(obs);
    if (pendingApprovalId(obs) === null) return callResult(name, obs);
    // A 2026-07-28 request declares its client's capabilities itself; a 2025-11-25 one did at initialize.
    const capabilities = envelope.protocolVersion ? envelope.clientCapabilities : server.getClientCapabilities();
    const elicit = via !== "cli" && capabilities?.elicitation !== undefined;
    if (envelope.protocolVersion) {
      const label = envelope.clientInfo?.name;
      const answered = await approveByInputRequired(
        {
          gateway,
          elicit,
          cli: via !== "elicitation",
          principal,
          label: typeof label === "string" ? label : undefined,
          inputResponses: ctx.mcpReq.inputResponses,
          requestState: ctx.mcpReq.requestState(),
          abandoned,
          cancelled,
          ...(trace ? { trace } : {}),
          ...(heldApproval ? { propose: heldApproval } : {}),
        },
        proposal,
        obs,
      );
      return "resultType" in answered ? answered : callResult(name, answered);
    }
    const progress =
      typeof token === "string" || typeof token === "number"
        ? (n: number, message: string) =>
            void ctx.mcpReq
              .notify({
                method: "notifications/progress",
                params: { progressToken: token, progress: n, message },
              })
              .catch(() => {})
        : null;
    const answered = await approveByElicitation(
      {
        server,
        gateway,
        requestId: ctx.mcpReq.id,
        timeoutMs: approvalTimeout,
        elicit,
        cli: via !== "elicitation",
        principal,
        abandoned,
        cancelled,
        ...(trace ? { trace } : {}),
        progress,
        progressMs,
      },
      proposal,
      obs,
    );
    return callResult(name, answered);
  }

  /**
   * Where a call's log messages go: this request's own stream (`mcpReq.log`, which checks the
   * level once more), at the level a 2026-07-28 request names in its `_meta` (none: no log for it)
   * or the one this 2025-11-25 connection set.
   */
  function callLog(ctx: ServerContext, envelope: Envelope): CallLog | undefined {
    const level = envelope.protocolVersion
      ? (ctx.mcpReq.envelope as Record<string, unknown> | undefined)?.[LOG_LEVEL_META_KEY]
      : (server.logLevel ?? DEFAULT_LOG_LEVEL);
    if (!isLogLevel(level)) return undefined;
    return { level, send: (entry) => void ctx.mcpReq.log(entry.level, entry.data, entry.logger).catch(() => {}) };
  }

  /**
   * A task-augmented tools/call (2025-11-25): the task as started; its answer comes from
   * tasks/result. While it runs, the session hears its status changes (notifications/tasks/status)
   * and, when the call carried a progressToken, its progress under that token, and is asked the
   * call's questions (naming the task); a session that has closed (HTTP: the task outlives it)
   * hears nothing, and a question then fails the call.
   */
  async function startTask(proposal: Proposal, task: unknown, envelope: Envelope, token: unknown): Promise<Result> {
    if (!runner || envelope.protocolVersion !== undefined)
      throw invalidParams(
        `tools/call params.task: this server runs no tasks${runner ? " on protocol revision " + envelope.protocolVersion + ` (there, declare the ${TASKS_EXTENSION} extension in the client capabilities of the request's _meta and the server runs the calls that may take long as tasks)` : " (its tools/list marks no tool with execution.taskSupport)"}; call without task`,
      );
    const ttl_ms = taskTtl(task);
    const tell = (method: string, params: Record<string, unknown>) => {
      if (server.transport !== undefined) void server.notification({ method, params } as never).catch(() => {});
    };
    const progress =
      typeof token === "string" || typeof token === "number"
        ? (u: ProgressUpdate) =>
            tell("notifications/progress", { progressToken: token, progress: u.elapsed_ms, message: u.message })
        : undefined;
    try {
      const started = await runner.start(proposal, {
        owner: principal,
        ...quota,
        ...(ttl_ms !== undefined ? { ttl_ms } : {}),
        onStatus: (t: TaskRecord) => tell("notifications/tasks/status", { ...toMcpTask(t) }),
        ...(progress ? { progress } : {}),
        // A question the call asks (a proxied upstream task's) goes to the client as a request of the
        // task, while the task is input_required; one it declared no capability for fails the call, saying so.
        ask: (t: TaskRecord) => {
          // Its questions wait until the client names the task back (a tasks/get or tasks/result of it).
          server.taskRoutes.created(t.id);
          return legacyAsk({ server, for: { taskId: t.id }, timeoutMs: approvalTimeout });
        },
      });
      return { task: toMcpTask(started) };
    } catch (err) {
      return refusedTask(err);
    }
  }

  /** The runner's refusal to start a task as a -32602, said of `where` (the request's `task`, or the call). */
  function refusedTask(err: unknown, where = "tools/call params.task"): never {
    if (err instanceof ToolgateError && err.code === "invalid_task") throw invalidParams(`${where}: ${err.message}`);
    throw err;
  }

  return callTool;
}

/** A held call's `ask`, refusing at once a question its client declared no capability for. */
function heldAsk(capabilities: ClientCapabilities | undefined, ask: CallAsk): CallAsk {
  return (requests, signal) => {
    for (const r of Object.values(requests)) {
      const why = cannotAsk(capabilities, r.method, r.params.mode);
      if (why !== null) return Promise.reject(new Error(`this client cannot be asked ${r.method}: ${why}`));
    }
    return ask(requests, signal);
  };
}
