/**
 * What an upstream says beside its answers, passed on bounded (every byte of it is the upstream's
 * choice): its log messages (`notifications/message`) and a call's progress.
 *
 * Logs. A log message carries no sign of the request it belongs to (the SDK's client hands a
 * notification over without one, and over stdio the protocol has none), so the rule is: a log
 * message is a caller's only when it cannot be anyone else's — exactly one call to this upstream
 * is in flight — and then it goes to that call's caller as part of that request (its stream over
 * HTTP), at or above the level the caller asked for. With no call in flight, or several, it is
 * unsolicited: it goes to the operator's log, never to a client, since another session (on a
 * multi-tenant HTTP endpoint, another tenant) may be connected. Every message counts against the
 * upstream's rate (`LOGS_PER_SECOND`; what is over it is dropped and counted in the operator's
 * log), a call passes on at most `LOGS_PER_CALL`, and each message is cut to `LOG_DATA_MAX_CHARS`
 * with control, bidi and invisible characters shown (`escapeUntrusted`); its logger names the upstream.
 * A 2025-11-25 upstream that declares `logging` is asked once per connection for `info` and above;
 * a 2026-07-28 one is asked per call, at the caller's own level, in the request's `_meta`.
 *
 * Progress. A proxied call asked for progress sends its own progressToken upstream (the SDK's
 * `onprogress`), keeps only the latest upstream report, and the tools' one ticker
 * (`tools/progress.ts`) passes it on: once after the first second, then at most once a second, so
 * 10,000 upstream reports cost 10,000 assignments and a handful of notifications.
 */
import type { Client } from "@modelcontextprotocol/client";
import { isLogLevel, logReaches, type CallLog, type LogLevel, type ProgressUpdate } from "../../core/tool.js";
import { escapeUntrusted } from "../../observation/escape.js";
import { progressTicker, seconds } from "../../tools/progress.js";

/** One log message's text, at most (characters, after escaping). */
export const LOG_DATA_MAX_CHARS = 2_000;
/** The upstream's own logger name, at most (characters), after the server's name. */
export const LOGGER_MAX_CHARS = 64;
/** Log messages passed on per upstream per second (to callers and the operator together). */
export const LOGS_PER_SECOND = 20;
/** Log messages one call passes on to its caller, at most. */
export const LOGS_PER_CALL = 100;
/** An upstream progress message, at most (characters, after escaping). */
export const PROGRESS_MESSAGE_MAX_CHARS = 200;
/** What a 2025-11-25 upstream is asked to send (`logging/setLevel`, once per connection). */
export const UPSTREAM_LOG_LEVEL: LogLevel = "info";

const RATE_WINDOW_MS = 1_000;

/** `text` cut to `max` characters (with how much more there was), its unsafe characters shown. */
export function boundedText(text: string, max: number): string {
  const shown = escapeUntrusted(text.length > max ? text.slice(0, max) : text);
  const cut = shown.length > max ? shown.slice(0, max) : shown;
  return cut.length < text.length || shown.length > max
    ? `${cut}… (${text.length} characters in all, cut to ${max})`
    : cut;
}

/** A log message's data as text: a string as it is, anything else as JSON. */
function dataText(data: unknown): string {
  if (typeof data === "string") return data;
  try {
    return JSON.stringify(data) ?? String(data);
  } catch {
    return "(a value JSON cannot show)";
  }
}

/** One call to the upstream in flight: where its logs go and how many it has passed on. */
interface CallSink {
  log: CallLog | undefined;
  sent: number;
}

/** The log messages of one upstream: attributed, filtered, bounded and rate-limited (see above). */
export class UpstreamNotices {
  private readonly calls = new Set<CallSink>();
  private windowStart = -Infinity;
  private inWindow = 0;
  private dropped = 0;

  constructor(
    /** The upstream as a log message names it (the server's name: the operator's, or its own, escaped). */
    private readonly name: string,
    private readonly operatorLog: (line: string) => void,
    private readonly now: () => number = () => performance.now(),
  ) {}

  /** Hears a newly connected client's log messages, and asks a 2025-11-25 upstream for them. */
  listen(client: Client): void {
    client.setNotificationHandler("notifications/message", (n) => this.heard(n.params));
    const modern = client.getNegotiatedProtocolVersion() === "2026-07-28";
    if (client.getServerCapabilities()?.logging && !modern)
      client
        .setLoggingLevel(UPSTREAM_LOG_LEVEL)
        .catch((err: Error) =>
          this.operatorLog(
            `toolgate proxy: ${this.name} declares logging but refused logging/setLevel: ${boundedText(err.message, 200)}`,
          ),
        );
  }

  /** A call to this upstream starts (its caller's log, when it asked for one); the answer ends it. */
  enter(log: CallLog | undefined): () => void {
    const sink: CallSink = { log, sent: 0 };
    this.calls.add(sink);
    return () => void this.calls.delete(sink);
  }

  private heard(params: unknown): void {
    const p = (typeof params === "object" && params !== null ? params : {}) as Record<string, unknown>;
    if (!isLogLevel(p.level)) return;
    const only = this.calls.size === 1 ? this.calls.values().next().value : undefined;
    // What nobody wants is dropped before it counts; what is wanted takes from the rate before it
    // is rendered, so a flood costs a counter per message.
    const log = only?.log;
    if (only && (!log || !logReaches(p.level, log.level) || only.sent > LOGS_PER_CALL)) return;
    if (!this.take()) return;
    const logger =
      typeof p.logger === "string" && p.logger !== ""
        ? `${this.name}/${boundedText(p.logger, LOGGER_MAX_CHARS)}`
        : this.name;
    if (!only || !log) {
      this.operatorLog(`toolgate proxy: ${logger} ${p.level}: ${boundedText(dataText(p.data), LOG_DATA_MAX_CHARS)}`);
      return;
    }
    only.sent += 1;
    if (only.sent > LOGS_PER_CALL) {
      log.send({
        level: "warning",
        logger: this.name,
        data: `toolgate proxy: this call passed on ${LOGS_PER_CALL} log messages of ${this.name}; the rest of this call's are dropped`,
      });
      return;
    }
    log.send({ level: p.level, logger, data: boundedText(dataText(p.data), LOG_DATA_MAX_CHARS) });
  }

  /** Whether one more message fits this second's window; the drops of a window are reported once, when it ends. */
  private take(): boolean {
    const t = this.now();
    if (t - this.windowStart >= RATE_WINDOW_MS) {
      this.reportDropped();
      this.windowStart = t;
      this.inWindow = 0;
    }
    if (this.inWindow >= LOGS_PER_SECOND) {
      // The count is told when the window ends, whether or not the upstream sends anything after.
      if (this.dropped++ === 0) setTimeout(() => this.reportDropped(), RATE_WINDOW_MS - (t - this.windowStart)).unref();
      return false;
    }
    this.inWindow += 1;
    return true;
  }

  private reportDropped(): void {
    if (this.dropped === 0) return;
    this.operatorLog(
      `toolgate proxy: ${this.name} sent ${this.dropped} log messages more than the ${LOGS_PER_SECOND} a second passed on; they were dropped`,
    );
    this.dropped = 0;
  }
}

/** An upstream progress report as the SDK hands it over (checked here: it is the upstream's). */
interface UpstreamReport {
  progress: number;
  total?: number;
  message?: string;
}

/** What a call whose caller asked for no progress gets: nothing to report, nothing to stop (one, shared). */
const NO_PROGRESS: ReturnType<typeof upstreamProgress> = Object.freeze({ stop: () => {} });

/**
 * A proxied call's progress: `onprogress` for the SDK request (present only when the caller asked
 * for progress) keeps the latest valid report; `taskStatus` the latest status of the upstream task
 * the call became (`upstream-tasks.ts`); the ticker passes them on; `stop` when the call answers.
 */
export function upstreamProgress(report: ((update: ProgressUpdate) => void) | undefined): {
  onprogress?: (p: { progress: unknown; total?: unknown; message?: unknown }) => void;
  taskStatus?: (status: string, message: string | undefined) => void;
  stop: () => void;
} {
  if (!report) return NO_PROGRESS;
  let latest: UpstreamReport | null = null;
  let task: string | null = null;
  const stop = progressTicker(report, (elapsed) => {
    const sample = progressSample(latest, elapsed);
    return task === null ? sample : { ...sample, message: `${sample.message}; its task is ${task}` };
  });
  return {
    taskStatus: (status, message) => {
      task = message === undefined ? status : `${status}: ${boundedText(message, PROGRESS_MESSAGE_MAX_CHARS)}`;
    },
    onprogress: (p) => {
      if (typeof p.progress !== "number" || !Number.isFinite(p.progress)) return;
      latest = {
        progress: p.progress,
        ...(typeof p.total === "number" && Number.isFinite(p.total) ? { total: p.total } : {}),
        ...(typeof p.message === "string" && p.message !== "" ? { message: p.message } : {}),
      };
    },
    stop,
  };
}

function progressSample(latest: UpstreamReport | null, elapsed_ms: number): Omit<ProgressUpdate, "elapsed_ms"> {
  if (!latest)
    return { message: `running for ${seconds(elapsed_ms)}; the upstream has reported no progress yet`, counts: {} };
  const of = latest.total !== undefined ? ` of ${latest.total}` : "";
  const said = latest.message !== undefined ? `: ${boundedText(latest.message, PROGRESS_MESSAGE_MAX_CHARS)}` : "";
  return {
    message: `running for ${seconds(elapsed_ms)}; the upstream reports ${latest.progress}${of}${said}`,
    counts: {
      upstream_progress: latest.progress,
      ...(latest.total !== undefined ? { upstream_total: latest.total } : {}),
    },
  };
}
