/** A caller's W3C trace context, checked (`runtime/trace-context.ts` reads it from what arrived). */
export interface TraceContext {
  /** `version-traceid-parentid-flags`: the first 55 characters, the fields of version 00. */
  traceparent: string;
  /** The list-members in order, joined by `,` without spaces; at most 32 members and 512 characters. */
  tracestate?: string;
}
