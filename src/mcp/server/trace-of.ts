/** Where a request's trace context arrives over MCP (a tools/call's, a pass-through read's). */
import { TRACEPARENT_META_KEY, TRACESTATE_META_KEY, type ServerContext } from "@modelcontextprotocol/server";
import type { TraceContextInput } from "../../runtime/trace-context.js";

/**
 * The caller's W3C trace context as it arrived, unchecked (the gateway checks it and writes it to
 * the audit record): `traceparent` and `tracestate` in the request's `_meta`, where both revisions
 * carry them, else over HTTP the W3C headers of the request.
 */
export function traceOf(meta: Record<string, unknown> | undefined, ctx: ServerContext): TraceContextInput | undefined {
  const sent = traceOfMeta(meta);
  if (sent !== undefined) return sent;
  const headers = ctx.http?.req?.headers;
  const header = headers?.get("traceparent") ?? undefined;
  if (header === undefined) return undefined;
  return { traceparent: header, tracestate: headers?.get("tracestate") ?? undefined };
}

/** The trace context a request's `_meta` carries, unchecked; undefined when it carries none. */
export function traceOfMeta(meta: Record<string, unknown> | undefined): TraceContextInput | undefined {
  const traceparent = meta?.[TRACEPARENT_META_KEY];
  if (traceparent === undefined && meta?.[TRACESTATE_META_KEY] === undefined) return undefined;
  return { traceparent, tracestate: meta?.[TRACESTATE_META_KEY] };
}
