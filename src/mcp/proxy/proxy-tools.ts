/**
 * A foreign MCP tool as a ToolSpec, so the gateway treats it like its own: the upstream's input
 * schema is validated by toolgate before the upstream sees anything, the effect comes from the
 * upstream's annotations, and the handler is the upstream's `tools/call`.
 *
 * Effect from annotations (the side-effect annotation decides the authority level), with MCP's
 * defaults for what is missing (not read-only, destructive):
 * readOnlyHint → read (A0); destructiveHint (default true) → destructive (A3);
 * idempotentHint → idempotent (A1); otherwise write (A2).
 */
import { LOG_LEVEL_META_KEY, type CallToolResult, type Client, type Tool } from "@modelcontextprotocol/client";
import type { Effect, GrantRequest, ToolContext, ToolSpec } from "../../core/tool.js";
import type { JsonValue } from "../../core/json.js";
import { toolResult } from "../../core/tool.js";
import { NoEffectError } from "../../core/errors.js";
import { readUpstreamContent, upstreamResultSchema } from "./upstream-content.js";
import { checkedIcons } from "./upstream-bounds.js";
import { upstreamProgress, type UpstreamNotices } from "./upstream-notices.js";
import { callAsUpstreamTask, upstreamRunsTasks } from "./upstream-task.js";
import { inputRelay } from "./upstream-input.js";
import { ProxyClient } from "./upstream-call.js";
import { followUpstreamTask, orTaskAnswer, taskAnswer, UpstreamTaskError } from "./upstream-tasks.js";

export function effectFromAnnotations(a: Tool["annotations"]): Effect {
  if (a?.readOnlyHint === true) return "read";
  if (a?.destructiveHint !== false) return "destructive";
  return a?.idempotentHint === true ? "idempotent" : "write";
}

/**
 * The capability request of a proxied call: op from the effect; target the `path` argument
 * when it is an absolute path (`path:/…`, so path-scoped capabilities apply to file servers),
 * otherwise the tool itself (`tool:NAME`).
 */
export function proxyGrant(name: string, effect: Effect, args: Record<string, unknown>): GrantRequest {
  const op = effect === "read" ? "read" : "write";
  const path = args.path;
  if (typeof path === "string" && path.startsWith("/")) return { op, target: `path:${path}`, cost: 1 };
  return { op, target: `tool:${name}`, cost: 1 };
}

/** A failed upstream call: the message a model reads, from the upstream's own text. */
export class UpstreamError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "UpstreamError";
  }
}

/** A proxied tool's time limit when the operator sets none, ms (the gateway's own default). */
export const DEFAULT_PROXY_TIMEOUT_MS = 60_000;
/** The bound of a call the upstream runs as a task when the operator sets none, ms (an hour). */
export const DEFAULT_PROXY_TASK_TIMEOUT_MS = 3_600_000;
/** The SDK's bound on one upstream request lies past the gateway's, which aborts the call first. */
const SDK_TIMEOUT_MARGIN_MS = 5_000;

export interface ProxyToolOptions {
  /** The call's time limit, ms; default DEFAULT_PROXY_TIMEOUT_MS. */
  timeout_ms?: number;
  /** How the operator raises it, said in the text of a call (or, with a task bound, a request) cut at the limit. */
  timeout_hint?: string;
  /** Told about each icon of the tool left out (not https: or data:image, or past the bounds). */
  log?: (line: string) => void;
  /** The upstream's log messages, passed to the caller of the one call in flight (`upstream-notices.ts`). */
  notices?: UpstreamNotices;
  /**
   * The bound of a call the upstream runs as a task, ms, in place of `timeout_ms` (which still
   * bounds each request: the call itself when the upstream answers it inline, each tasks/get).
   * Applies to a tool with `execution.taskSupport` and, with `upstream_tasks`, to every tool.
   * Absent: `timeout_ms` bounds the whole call, task or not.
   */
  task_timeout_ms?: number;
  /** The upstream declared the 2026-07-28 tasks extension: any of its calls may come back as a task. */
  upstream_tasks?: boolean;
  /** The upstream's name as the operator knows it (escaped): a question its task asks says who asks. */
  upstream_name?: string;
}

/** The upstream a proxied tool calls: a fixed client, or a link that reconnects (`UpstreamLink`). */
export type UpstreamClient = Client | { get(tool: string): Client | Promise<Client> };

/** A tools/call result of either era, or a 2026-07-28 task answer: built once, not per call. */
const MODERN_RESULT = orTaskAnswer(upstreamResultSchema(true));
const LEGACY_RESULT = orTaskAnswer(upstreamResultSchema(false));

/**
 * The `_meta` of a proxied call's request, or undefined when it carries none: the caller's trace
 * (so the upstream's spans join it), and the caller's log level when the upstream's logs are heard
 * (a 2026-07-28 upstream logs for a request only at the level its `_meta` names).
 */
function requestMeta(trace: ToolContext["trace"], log: ToolContext["log"]): Record<string, unknown> | undefined {
  if (!trace && !log) return undefined;
  const meta: Record<string, unknown> = trace ? { traceparent: trace.traceparent } : {};
  if (trace?.tracestate) meta.tracestate = trace.tracestate;
  if (log) meta[LOG_LEVEL_META_KEY] = log.level;
  return meta;
}

/** The SDK's answer to a request made while its transport is closed: it was never sent. */
const NOT_CONNECTED = "Not connected";

/**
 * ToolSpec for one upstream tool. A request that never left the proxy (the upstream is down)
 * throws `NoEffectError`, so its key is released and the model reads that it did not run.
 * An upstream `isError` result is the tool's answer (`failed`): an A2/A3 call is recorded
 * COMPLETED with it and a repeat replays it. Any other failure — a disconnect while the call was
 * in flight, a timeout — is a normal failure to the gateway, which marks an A2/A3 call IN_DOUBT
 * rather than release its key: the upstream may have acted before it failed, or its answer was lost.
 */
export function proxyToolSpec(upstream: UpstreamClient, tool: Tool, options: ProxyToolOptions = {}): ToolSpec {
  const timeout_ms = options.timeout_ms ?? DEFAULT_PROXY_TIMEOUT_MS;
  const effect = effectFromAnnotations(tool.annotations);
  const title = tool.title ?? tool.annotations?.title;
  const icons = checkedIcons(tool.icons, (why) =>
    options.log?.(`toolgate proxy: tool ${JSON.stringify(tool.name)}: ${why}`),
  );
  const mcp = { ...(tool.annotations ? { declared: tool.annotations } : {}), ...(icons ? { icons } : {}) };
  const taskSupport = (tool as { execution?: { taskSupport?: unknown } }).execution?.taskSupport;
  const mayRunAsTask = taskSupport === "optional" || taskSupport === "required" || options.upstream_tasks === true;
  // A call that may become an upstream task is bounded by the task bound; its requests by timeout_ms.
  const bound =
    mayRunAsTask && options.task_timeout_ms !== undefined ? Math.max(timeout_ms, options.task_timeout_ms) : timeout_ms;
  // The definition the SDK client reads for this tool (header mirroring) without its outputSchema:
  // the MCP face checks structuredContent against that schema once, where an upstream's wrong
  // output becomes the tool's isError result; the client would check it again on every call.
  const { outputSchema: _checkedByTheGateway, ...definition } = tool;
  // A tool whose input schema declares `x-mcp-header` (SEP-2243) has arguments the SDK's callTool
  // mirrors into the headers of a 2026-07-28 HTTP request: it is called through callTool. Any other
  // is sent with the SDK's plain request, its result checked once by `upstreamResultSchema`
  // instead of the SDK's zod parse of every content block.
  const mirrored = JSON.stringify(tool.inputSchema ?? {}).includes('"x-mcp-header"');
  const spec: ToolSpec = {
    name: tool.name,
    description: tool.description ?? "",
    inputSchema: tool.inputSchema as Record<string, unknown>,
    effect,
    timeout_ms: bound,
    ...(options.timeout_hint !== undefined ? { timeout_hint: options.timeout_hint } : {}),
    ...(Object.keys(mcp).length > 0 ? { mcp } : {}),
    // A tool the upstream says may run long as a task may be one here too (toolgate's runner); "required"
    // is "optional" here: the gateway can hold a caller's request while the upstream runs the task
    // the handler calls it as (`upstream-task.ts`, `upstream-tasks.ts`). So may any tool of an
    // upstream that declared the 2026-07-28 tasks extension, which decides per call.
    ...(mayRunAsTask ? { runsAsTask: true } : {}),
    grant: (args) => proxyGrant(tool.name, effect, args),
    handler: async (args, ctx) => {
      const live = "get" in upstream ? upstream.get(tool.name) : upstream;
      const client = live instanceof Promise ? await live : live;
      let result: CallToolResult;
      // The upstream's progress for this call (its own token), and its log messages while it runs.
      const progress = upstreamProgress(ctx.progress);
      const leave = options.notices?.enter(ctx.log);
      try {
        const _meta = requestMeta(ctx.trace, options.notices ? ctx.log : undefined);
        const params = _meta ? { name: tool.name, arguments: args, _meta } : { name: tool.name, arguments: args };
        const sent = {
          signal: ctx.signal,
          // Past the gateway's own bound, which cuts the call first, unless the call's bound is a task's.
          timeout: bound === timeout_ms ? timeout_ms + SDK_TIMEOUT_MARGIN_MS : timeout_ms,
          ...(progress.onprogress ? { onprogress: progress.onprogress } : {}),
        };
        const schema = () => (client.getProtocolEra() === "modern" ? MODERN_RESULT : LEGACY_RESULT);
        // A tool the upstream runs only as a task is called as one (and its task cancelled with the call).
        result =
          taskSupport === "required" && upstreamRunsTasks(client)
            ? await callAsUpstreamTask(client, params, {
                signal: ctx.signal,
                timeout: bound + SDK_TIMEOUT_MARGIN_MS,
                ttl: bound + SDK_TIMEOUT_MARGIN_MS,
              })
            : mirrored
              ? ((await client.callTool(params, { ...sent, toolDefinition: definition })) as CallToolResult)
              : // Without progress, bounded as its tool is, over stdio: beside the SDK's funnel (upstream-call.ts).
                // The gateway ends it at `bound` (before `sent.timeout`), so it keeps no timer of its own.
                !sent.onprogress && bound === timeout_ms && client instanceof ProxyClient && client.directReady()
                ? await client.callDirect(params, schema(), {
                    signal: sent.signal,
                    timeout: sent.timeout,
                    signalBounds: true,
                  })
                : await client.request({ method: "tools/call", params }, schema(), sent);
        // A 2026-07-28 upstream answered with a task: followed to its end (and cancelled with the call).
        const task = taskAnswer(result);
        if (task !== undefined)
          result = await followUpstreamTask(client, task, {
            signal: ctx.signal,
            requestTimeout: timeout_ms,
            ...(progress.taskStatus ? { onStatus: progress.taskStatus } : {}),
            // Each tasks/get asks for the caller's log level, so the upstream's log messages go on reaching it.
            ...(options.notices ? { meta: requestMeta(undefined, ctx.log) ?? {} } : {}),
            // A caller that can be asked hears the task's questions, and the task its answers.
            ...(ctx.ask
              ? {
                  onInput: inputRelay(client, ctx.ask, {
                    signal: ctx.signal,
                    requestTimeout: timeout_ms,
                    ...(options.upstream_name !== undefined ? { upstream: options.upstream_name } : {}),
                  }),
                }
              : {}),
          });
      } catch (err) {
        const message = (err as Error).message;
        if (message === NOT_CONNECTED) {
          throw new NoEffectError(
            `the upstream MCP server is disconnected (it exited or closed the connection), so ${tool.name} was not sent and did not run; call again to start it again, or restart toolgate proxy`,
            "upstream_down",
          );
        }
        if (err instanceof UpstreamTaskError)
          throw new UpstreamError(`${tool.name} ran as a task of the upstream MCP server, and ${message}`);
        if (bound !== timeout_ms && (err as { code?: unknown }).code === "REQUEST_TIMEOUT")
          throw new UpstreamError(
            `the upstream MCP server did not answer a request of ${tool.name} within ${timeout_ms} ms${options.timeout_hint ? `. ${options.timeout_hint}` : ""}`,
          );
        throw new UpstreamError(`the upstream MCP server did not answer ${tool.name}: ${message}`);
      } finally {
        progress.stop();
        leave?.();
      }
      const { text, parts } = readUpstreamContent(result);
      // isError is the tool's definite answer (it ran and said it failed): stored and replayed, not in doubt.
      if (result.isError)
        return toolResult(text, { text, failed: true, ...(parts.length > 0 ? { content: parts } : {}) });
      const output: JsonValue = (result.structuredContent as JsonValue | undefined) ?? text;
      return toolResult(output, { text, ...(parts.length > 0 ? { content: parts } : {}) });
    },
  };
  if (title !== undefined) spec.title = title;
  if (tool.outputSchema) spec.outputSchema = tool.outputSchema as Record<string, unknown>;
  return spec;
}
