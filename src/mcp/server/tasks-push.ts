/**
 * The tasks extension's optional status push: a 2026-07-28 client that opens `subscriptions/listen`
 * with `notifications.taskIds` hears `notifications/tasks` (the task as tasks/get answers it) each
 * time one of those tasks changes status, until it is final. The transport owns the stream; this
 * file reads the filter and watches the tasks.
 *
 * The watch reads the store, not the runner's in-process status callbacks: a task started through
 * another replica on the same store is heard like one running here, within one poll interval (the
 * task's own `pollIntervalMs`, at least `MIN_WATCH_MS`). The cost is bounded: at most
 * `MAX_LISTEN_TASK_IDS` ids per stream (and the transport bounds streams per principal), one read
 * per id not yet final per interval, and an id that names no task of the listener's (unknown,
 * expired, another principal's) is read once and then dropped. The acknowledgement echoes every
 * well-formed id asked for, owned or not, so it tells nobody whether another principal's task exists.
 */
import {
  CLIENT_CAPABILITIES_META_KEY,
  ProtocolErrorCode,
  type ClientCapabilities,
  type ProtocolError,
} from "@modelcontextprotocol/server";
import { isFinalStatus, type TaskRecord } from "../../idempotency/tasks.js";
import type { TaskRunner } from "../../runtime/tasks.js";
import { requireTasksExtension } from "./tasks-ext.js";

/** At most this many task ids in one listen filter. */
export const MAX_LISTEN_TASK_IDS = 32;
/** A task id is at most this long (as for tasks/get). */
const MAX_TASK_ID = 256;
/** The watch reads the store at most this often, ms. */
export const MIN_WATCH_MS = 50;
/** ... and at least this often. */
const MAX_WATCH_MS = 10_000;

export type TaskListen =
  | { kind: "none" }
  | { kind: "tasks"; ids: string[]; capabilities: ClientCapabilities | undefined }
  | { kind: "refused"; code: number; message: string; data?: Record<string, unknown> };

const FIELD = "subscriptions/listen params.notifications.taskIds";

/**
 * The task ids a `subscriptions/listen` request's filter asks to hear of (deduplicated), or why it
 * is refused: -32602 for a taskIds that is not an array of at most 32 task ids, -32021 when its
 * client did not declare the tasks extension on this request (as the extension prescribes).
 */
export function readTaskListen(params: unknown): TaskListen {
  const p = (typeof params === "object" && params !== null ? params : {}) as Record<string, unknown>;
  const filter = p.notifications;
  if (typeof filter !== "object" || filter === null || !("taskIds" in filter)) return { kind: "none" };
  const ids = (filter as { taskIds?: unknown }).taskIds;
  if (!Array.isArray(ids))
    return refuse(`${FIELD} must be an array of task ids (the taskId a tools/call answered); received ${typeof ids}`);
  if (ids.length > MAX_LISTEN_TASK_IDS)
    return refuse(
      `${FIELD} holds ${ids.length} ids; at most ${MAX_LISTEN_TASK_IDS} are heard on one stream: name only the tasks still running, or open another subscriptions/listen for the rest`,
    );
  const bad = ids.findIndex((id) => typeof id !== "string" || id === "" || id.length > MAX_TASK_ID);
  if (bad >= 0) {
    const id: unknown = ids[bad];
    return refuse(
      `${FIELD}[${bad}] must be a task id (a non-empty string of at most ${MAX_TASK_ID} characters); received ${typeof id === "string" ? `a string of ${id.length} characters` : typeof id}`,
    );
  }
  const meta = (p._meta ?? {}) as Record<string, unknown>;
  const capabilities = meta[CLIENT_CAPABILITIES_META_KEY] as ClientCapabilities | undefined;
  try {
    requireTasksExtension(capabilities, FIELD);
  } catch (err) {
    const e = err as ProtocolError;
    return { kind: "refused", code: e.code, message: e.message, data: e.data as Record<string, unknown> };
  }
  return { kind: "tasks", ids: [...new Set(ids as string[])], capabilities };
}

function refuse(message: string): TaskListen {
  return { kind: "refused", code: ProtocolErrorCode.InvalidParams, message };
}

export interface TaskWatch {
  runner: TaskRunner;
  /** The listener: only its own tasks are heard. */
  owner: string;
  ids: readonly string[];
  /** The task as tasks/get answers it (DetailedTask). */
  detail: (t: TaskRecord) => Promise<Record<string, unknown>>;
  /** Sends one `notifications/tasks` params. */
  send: (params: Record<string, unknown>) => void;
  /** Told once, when no id is left to watch (each final, or not the owner's). */
  done: () => void;
  /** A store read that failed (tried again at the next interval). */
  onError?: (error: Error) => void;
}

/**
 * Reads each id at once and then once an interval; sends the task when the status it shows differs
 * from the last one sent (so the first read sends its current status), and stops watching it once it
 * is final. Returns the function that stops the watch.
 */
export function watchTasks(w: TaskWatch): () => void {
  const last = new Map<string, string | null>(w.ids.map((id) => [id, null]));
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let interval = MIN_WATCH_MS;
  const tick = async () => {
    for (const [id, seen] of [...last]) {
      if (stopped) return;
      try {
        const t = await w.runner.get(id, w.owner);
        if (t === null) {
          last.delete(id);
          continue;
        }
        interval = Math.max(MIN_WATCH_MS, Math.min(t.poll_ms, MAX_WATCH_MS));
        // Compared as the client sees it (a task waiting for an approval nobody can ask it for reads working).
        const shown = await w.detail(t);
        if (shown.status !== seen && !stopped) {
          w.send(shown);
          last.set(id, String(shown.status));
        }
        if (isFinalStatus(t.status)) last.delete(id);
      } catch (err) {
        w.onError?.(err as Error);
      }
    }
    if (stopped) return;
    if (last.size === 0) {
      stopped = true;
      w.done();
      return;
    }
    timer = setTimeout(() => void tick(), interval);
  };
  void tick();
  return () => {
    stopped = true;
    if (timer) clearTimeout(timer);
  };
}
