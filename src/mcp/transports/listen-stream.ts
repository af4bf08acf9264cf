/**
 * A 2026-07-28 `subscriptions/listen` stream over Streamable HTTP as toolgate serves it around the
 * SDK's handler, which serves the listen request (its revision and header checks, the four change
 * types of the core filter) and knows neither `taskIds` nor a lifetime. This wraps its SSE answer:
 *
 * - with tasks (`server/tasks-push.ts`): the acknowledgement gets the `taskIds` the server agreed
 *   to, task notifications are written after it, stamped with the stream's subscription id. When
 *   the core filter asked for nothing the SDK ends the stream right after its acknowledgement; its
 *   closing result is then held back while tasks are still watched, and sent once none is left
 *   (each final), or at shutdown (`end`);
 * - with a lifetime (`maxMs`): once the stream has been open that long (up to a tenth less, at
 *   random: `listenCutoffMs`) it is ended with the
 *   graceful result (`listenEnded`, or the SDK's own when it is held), and the SDK's stream is let
 *   go, so its listen slot, its upstream subscriptions and its connection are freed.
 */
import type { Implementation, RequestId } from "@modelcontextprotocol/server";
import { ackWithTaskIds, listenCutoffMs, listenEnded } from "./listen-hold.js";

/** A comment frame this often while the SDK's stream (and its own keep-alive) has ended, ms. */
const KEEPALIVE_MS = 15_000;

export interface TaskStream {
  /** The task ids the acknowledgement names. */
  ids: readonly string[];
  /** Starts watching once the acknowledgement is out (`send` writes one whole message); returns the function that stops. */
  watch: (send: (message: object) => void, done: () => void) => () => void;
}

export interface ListenStream {
  /** The listen request's id: the stream's subscription id. */
  subscriptionId: RequestId;
  /** The tasks it hears of, when it names any. */
  tasks?: TaskStream;
  /** Ends it gracefully after this long open, ms; 0: never. */
  maxMs: number;
  /** The server, as the graceful end toolgate writes names it. */
  serverInfo: Implementation;
  /** Told once when the stream ends, whichever way. */
  ended: () => void;
}

/** The wrapped answer, and `end()`: the graceful end at shutdown (before the SDK handler's own close). */
export function withListenStream(sdk: Response, s: ListenStream): { response: Response; end: () => void } {
  const body = sdk.body;
  if (sdk.status !== 200 || body === null || !(sdk.headers.get("content-type") ?? "").includes("text/event-stream"))
    return { response: sdk, end: () => {} };
  const reader = body.getReader();
  const encoder = new TextEncoder();
  const decoder = new TextDecoder();
  let out!: ReadableStreamDefaultController<Uint8Array>;
  let closed = false;
  let watching = false;
  let stop = () => {};
  /** The SDK's closing result, held while tasks are watched. */
  let held: string | undefined;
  let keepalive: NodeJS.Timeout | undefined;
  let pending = "";
  /** The acknowledgement honored something of the core filter: the SDK's stream lives on its own. */
  let core = false;

  const write = (frame: string) => {
    if (closed) return;
    try {
      out.enqueue(encoder.encode(frame));
    } catch {
      closed = true;
    }
  };
  const finish = () => {
    if (closed) return;
    stop();
    s.ended();
    if (keepalive) clearInterval(keepalive);
    clearTimeout(lifetime);
    if (held !== undefined) write(held);
    closed = true;
    try {
      out.close();
    } catch {
      // Already closed by its reader.
    }
    void reader.cancel().catch(() => {});
  };
  const send = (message: object) => write(`event: message\ndata: ${JSON.stringify(message)}\n\n`);
  const done = () => {
    watching = false;
    if (held !== undefined) finish();
  };
  // Past its lifetime: the SDK's held result, else toolgate's, then the end.
  const lifetime =
    s.maxMs > 0
      ? setTimeout(() => {
          held ??= `event: message\ndata: ${JSON.stringify(listenEnded(s.subscriptionId, s.serverInfo))}\n\n`;
          finish();
        }, listenCutoffMs(s.maxMs)).unref()
      : undefined;

  /** One SSE frame of the SDK's, as it goes to the client. */
  const frame = (text: string) => {
    const data = /^data: (.*)$/m.exec(text)?.[1];
    let message: Record<string, unknown> | undefined;
    try {
      message = data === undefined ? undefined : (JSON.parse(data) as Record<string, unknown>);
    } catch {
      message = undefined;
    }
    if (message?.method === "notifications/subscriptions/acknowledged" && s.tasks) {
      const params = (message.params ?? {}) as { notifications?: Record<string, unknown> };
      core = Object.keys(params.notifications ?? {}).length > 0;
      send(ackWithTaskIds(message, s.tasks.ids));
      watching = true;
      stop = s.tasks.watch(send, done);
      return;
    }
    if (message !== undefined && "result" in message) {
      held = `${text}\n\n`;
      // Right after an acknowledgement that honored nothing of the core filter: tasks alone keep it open.
      if (!core && watching) {
        keepalive = setInterval(() => write(": keepalive\n\n"), KEEPALIVE_MS);
        return;
      }
      return finish();
    }
    write(`${text}\n\n`);
  };

  const response = new ReadableStream<Uint8Array>({
    start(controller) {
      out = controller;
      void (async () => {
        try {
          for (;;) {
            const { value, done: ended } = await reader.read();
            if (ended) break;
            pending += decoder.decode(value, { stream: true });
            let cut: number;
            while ((cut = pending.indexOf("\n\n")) >= 0) {
              frame(pending.slice(0, cut));
              pending = pending.slice(cut + 2);
            }
          }
        } catch {
          // The client went away, or the SDK's stream was torn down.
        }
        // The SDK's stream ended: unless its result is held for tasks still watched, the stream ends.
        if (held === undefined || !watching) finish();
      })();
    },
    cancel() {
      stop();
      if (!closed) s.ended();
      if (keepalive) clearInterval(keepalive);
      clearTimeout(lifetime);
      closed = true;
      void reader.cancel().catch(() => {});
    },
  });
  // At shutdown a stream the SDK still serves gets its closing result from the SDK (forwarded above).
  const end = () => {
    if (held !== undefined || (s.tasks && !core)) finish();
  };
  return { response: new Response(response, { status: 200, headers: sdk.headers }), end };
}
