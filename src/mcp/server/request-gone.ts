/** When a tools/call's request goes away: the signals the gateway reads, and why each fires. */
import type { Server } from "@modelcontextprotocol/server";

/**
 * The signals for the gateway when the tools/call is gone, each reason saying how. The SDK aborts
 * a request's signal on notifications/cancelled, when an HTTP client drops the request and when
 * the connection closes, and on close it drops the transport right after: so the reason is
 * decided a microtask later. `abandoned` fires for every one; `cancelled` only when the client
 * cancelled: that one aborts the call, as a person pressing Esc expects. A 2026-07-28 request
 * (`stateless`) has no session to come back to, so its request going away is its cancel; a
 * 2025-11-25 connection that closed does not cut the call, so a client that reconnects and
 * repeats it with the same ids gets its result. Only an A3 call (`approvable`) reads `abandoned`
 * (an approval must not run a call whose caller has gone) and its reason: for any other call it
 * is the same signal as `cancelled`.
 */
export function requestGone(
  server: Server,
  signal: AbortSignal,
  stateless: boolean,
  approvable: boolean,
): { abandoned: AbortSignal; cancelled: AbortSignal } {
  // An AbortController costs microseconds to make, per call: a stateless call that asks for no
  // approval is cancelled by the request's own signal (nothing reads the reason of `cancelled`).
  if (stateless && !approvable) return { abandoned: signal, cancelled: signal };
  const gone = approvable ? new AbortController() : null;
  // Stateless, both fire together: one signal serves as both.
  const cancelled = stateless ? null : new AbortController();
  const onAbort = () =>
    queueMicrotask(() => {
      const closed = server.transport === undefined;
      if (!closed) cancelled?.abort("request cancelled");
      gone?.abort(closed ? "connection closed" : "request cancelled");
    });
  if (signal.aborted) onAbort();
  else signal.addEventListener("abort", onAbort, { once: true });
  const either = (gone ?? cancelled)!.signal;
  return { abandoned: gone?.signal ?? either, cancelled: cancelled?.signal ?? either };
}
