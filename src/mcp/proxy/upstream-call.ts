/**
 * The proxy's upstream client (`ProxyClient`), and its one lean path: a proxied tools/call over a
 * transport without per-request streams (stdio) sent beside the SDK's request funnel. That funnel
 * does, for every call, what the proxy does again or not at all: a second zod parse of the
 * response envelope (`_onresponse`), and on 2026-07-28 a zod parse of the whole CallToolResult —
 * every content block — before the result schema the proxy passes (`upstreamResultProblem`), which
 * checks the same fields the proxy reads (the 2025-11-25 funnel already skips the first: its codec
 * parses nothing). The direct call checks each result once, with that schema, and keeps the rest of
 * the funnel's contract: the era's `_meta` envelope on the request, the request's bound (an
 * `SdkError` REQUEST_TIMEOUT), a cancel (the signal) sent on as notifications/cancelled, "Not
 * connected" when the transport is gone, "Connection closed" to every call in flight when it
 * closes, a JSON-RPC error as the SDK's `ProtocolError`, a 2026-07-28 task answer as the tasks
 * client hands it on (`upstream-tasks.ts`), and anything else a 2026-07-28 upstream may answer
 * (input_required, an invalid resultType) decoded and resolved by the SDK's own codec and seam.
 *
 * Its request ids are strings (`toolgate:N`, JSON-RPC allows either), so they never meet the SDK's
 * numeric ones; a call asked for progress, or bounded differently from its tool, goes through the
 * SDK's funnel (`proxy-tools.ts` decides).
 */
import { ProtocolError, SdkError, SdkErrorCode } from "@modelcontextprotocol/client";
import type {
  ConnectOptions,
  JSONRPCErrorResponse,
  JSONRPCMessage,
  JSONRPCResponse,
  JSONRPCResultResponse,
  MessageExtraInfo,
  StandardSchemaV1,
  Transport,
} from "@modelcontextprotocol/client";
import { isPlainObject } from "../../core/json.js";
import { TasksClient, taskAnswerResult } from "./upstream-tasks.js";

/** Where a direct call's request ids start: never a number, so never one of the SDK's. */
export const DIRECT_ID_PREFIX = "toolgate:";
const METHOD = "tools/call";

interface Pending {
  settle(): void;
  resolve(value: unknown): void;
  reject(error: unknown): void;
  params: Record<string, unknown>;
  schema: StandardSchemaV1<unknown, unknown>;
  options: DirectCallOptions;
  startedAt: number;
}

export interface DirectCallOptions {
  /** The call's abort (the gateway's signal): sent on as notifications/cancelled. */
  signal: AbortSignal;
  /** The request's bound, ms (the SDK's REQUEST_TIMEOUT when it passes). */
  timeout: number;
  /**
   * The signal's owner ends the call before `timeout` passes (the gateway, whose bound a proxied
   * call's `timeout` lies past: `proxy-tools.ts`), so the call keeps no timer of its own; `timeout`
   * still bounds each request the SDK sends for it (a 2026-07-28 input_required's legs).
   */
  signalBounds?: boolean;
}

/**
 * A direct call's answer with a result, its envelope as the SDK's JSONRPCResultResponseSchema has
 * it: exactly the keys jsonrpc "2.0", a `toolgate:` id and a plain-object result whose `_meta`, if
 * any, is an object (the one field of a result that schema reads).
 */
export function isDirectAnswer(value: unknown): value is JSONRPCResultResponse & { id: string } {
  if (!isPlainObject(value) || value.jsonrpc !== "2.0" || !isPlainObject(value.result)) return false;
  if (typeof value.id !== "string" || !value.id.startsWith(DIRECT_ID_PREFIX)) return false;
  const meta = value.result._meta;
  if (meta !== undefined && !isPlainObject(meta)) return false;
  for (const key in value) if (key !== "jsonrpc" && key !== "id" && key !== "result") return false;
  return true;
}

export class ProxyClient extends TasksClient {
  private readonly direct = new Map<string, Pending>();
  private nextDirect = 0;
  private envelopeOf:
    { version: string | undefined; envelope: Readonly<Record<string, unknown>> | undefined } | undefined;

  /**
   * The SDK's connect, then a direct call's answer (`isDirectAnswer`, one this client waits for)
   * handed straight to `_onresponse`: the SDK's dispatch would parse its envelope with zod again
   * (as a result response, then as an error response) before it called the same method. Any other
   * message goes to the SDK's dispatch as before.
   */
  override async connect(transport: Transport, options?: ConnectOptions): Promise<void> {
    await super.connect(transport, options);
    const dispatch = transport.onmessage;
    if (dispatch === undefined) return;
    transport.onmessage = (message: JSONRPCMessage, extra?: MessageExtraInfo) => {
      if (isDirectAnswer(message) && this.direct.has(message.id)) this._onresponse(message);
      else dispatch(message, extra);
    };
  }

  /** Whether `callDirect` may carry a call now: connected over a transport without per-request streams. */
  directReady(): boolean {
    const transport = this.transport as { hasPerRequestStream?: boolean } | undefined;
    return transport !== undefined && transport.hasPerRequestStream !== true;
  }

  /** A tools/call sent beside the SDK's funnel (see the top); its result checked by `schema`, once. */
  callDirect<T>(
    params: Record<string, unknown>,
    schema: StandardSchemaV1<unknown, T>,
    options: DirectCallOptions,
  ): Promise<T> {
    const transport = this.transport;
    if (!transport) return Promise.reject(new Error("Not connected"));
    if (options.signal.aborted) return Promise.reject(asSdkError(options.signal.reason));
    const id = `${DIRECT_ID_PREFIX}${this.nextDirect++}`;
    return new Promise<T>((resolve, reject) => {
      const settle = () => {
        this.direct.delete(id);
        if (timer !== undefined) clearTimeout(timer);
        options.signal.removeEventListener("abort", onAbort);
      };
      const cancel = (reason: unknown) => {
        settle();
        transport
          .send(
            this.enveloped({
              jsonrpc: "2.0" as const,
              method: "notifications/cancelled",
              params: { requestId: id, reason: String(reason) },
            }),
          )
          .catch((error: unknown) => this.onerror?.(new Error(`Failed to send cancellation: ${String(error)}`)));
        reject(asSdkError(reason));
      };
      const onAbort = () => cancel(options.signal.reason);
      const timer = options.signalBounds
        ? undefined
        : setTimeout(
            () => cancel(new SdkError(SdkErrorCode.RequestTimeout, "Request timed out", { timeout: options.timeout })),
            options.timeout,
          );
      this.direct.set(id, {
        settle,
        resolve: resolve as (value: unknown) => void,
        reject,
        params,
        schema,
        options,
        startedAt: Date.now(),
      });
      options.signal.addEventListener("abort", onAbort, { once: true });
      transport
        .send(this.enveloped({ jsonrpc: "2.0" as const, id, method: METHOD, params }))
        .catch((error: unknown) => {
          settle();
          reject(error);
        });
    });
  }

  protected override _onresponse(response: JSONRPCResponse | JSONRPCErrorResponse): void {
    const pending = typeof response.id === "string" ? this.direct.get(response.id) : undefined;
    if (pending === undefined) return super._onresponse(response);
    pending.settle();
    if (!("result" in response)) {
      const { code, message, data } = response.error;
      return pending.reject(ProtocolError.fromError(code, message, data));
    }
    this.decoded(pending, response.result);
  }

  protected override _onclose(): void {
    const pending = [...this.direct.values()];
    this.direct.clear();
    try {
      super._onclose();
    } finally {
      const closed = new SdkError(SdkErrorCode.ConnectionClosed, "Connection closed");
      for (const p of pending) {
        p.settle();
        p.reject(closed);
      }
    }
  }

  /** The answer as the era's codec reads it; a complete result (or a task) without the SDK's zod parse. */
  private decoded(pending: Pending, raw: unknown): void {
    const modern = this.getProtocolEra() === "modern";
    let result = raw;
    if (isPlainObject(raw) && "resultType" in raw) {
      if (modern && raw.resultType === "task") return pending.resolve(taskAnswerResult(raw));
      if (!modern || raw.resultType === "complete") {
        const { resultType: _decoded, ...rest } = raw;
        result = rest;
      } else return this.nonComplete(pending, raw);
    } else if (modern) return this.nonComplete(pending, raw);
    const checked = pending.schema["~standard"].validate(result);
    if (checked instanceof Promise)
      return pending.reject(new TypeError("callDirect takes a synchronous result schema"));
    if (checked.issues) {
      const problem = checked.issues.map((issue) => issue.message).join(", ");
      return pending.reject(new SdkError(SdkErrorCode.InvalidResult, `Invalid result for ${METHOD}: ${problem}`));
    }
    pending.resolve(checked.value);
  }

  /** What is not a complete result on 2026-07-28: the SDK's codec decodes it, its seam resolves an input_required. */
  private nonComplete(pending: Pending, raw: unknown): void {
    const codec = this._wireCodec();
    const decoded = codec.decodeResult(METHOD, raw);
    if (decoded.kind === "invalid") return pending.reject(decoded.error);
    if (decoded.kind === "complete") return this.decoded(pending, { ...decoded.result, resultType: "complete" });
    const request = { method: METHOD, params: pending.params };
    pending.resolve(
      this._resolveNonCompleteResult(
        decoded as never,
        {
          codec,
          request,
          resultSchema: pending.schema,
          options: pending.options,
          flowStartedAt: pending.startedAt,
          retry: (params: Record<string, unknown> | undefined, legOptions: DirectCallOptions) =>
            this.request(
              { method: METHOD, ...(params === undefined ? {} : { params }) } as never,
              pending.schema,
              legOptions,
            ),
        } as never,
      ),
    );
  }

  /**
   * The SDK's `_outboundMetaEnvelope`, built once per negotiated version: it is made of the
   * version, the client's info and its capabilities, none of which changes once connected.
   */
  private envelope(): Readonly<Record<string, unknown>> | undefined {
    const version = this.getNegotiatedProtocolVersion();
    const built = this.envelopeOf;
    if (built !== undefined && built.version === version) return built.envelope;
    // Frozen: a message without `_meta` of its own is sent with this object itself (`enveloped`).
    const made = this._outboundMetaEnvelope();
    const envelope = made === undefined ? undefined : Object.freeze(made);
    this.envelopeOf = { version, envelope };
    return envelope;
  }

  /**
   * The era's `_meta` envelope on an outgoing message, the message's own keys winning (as the SDK's
   * funnel does); the envelope itself when the message has no `_meta`, not a copy of it per call.
   */
  private enveloped<M extends { params?: Record<string, unknown> }>(message: M): M {
    const envelope = this.envelope();
    if (envelope === undefined) return message;
    const params = message.params ?? {};
    const own = params._meta as object | undefined;
    return { ...message, params: { ...params, _meta: own === undefined ? envelope : { ...envelope, ...own } } };
  }
}

const asSdkError = (reason: unknown) =>
  reason instanceof SdkError ? reason : new SdkError(SdkErrorCode.RequestTimeout, String(reason));
