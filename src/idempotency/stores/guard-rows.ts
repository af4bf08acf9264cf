/**
 * What the guard store's backends share: a pin as SQL and Redis keep it (JSON as text), and the
 * one rule of a rate window, which the SQL statements and the Lua script repeat inside their
 * atomic step (the conformance suite pins that all agree at the window's edge).
 */
import type { JsonValue } from "../../core/json.js";
import type { PinRecord, RateDecision, RateWindow } from "../guard-store.js";

export interface PinRow {
  server: string;
  tool: string;
  hash: string;
  definition: string;
  pinned_at: number | string;
  pending_hash: string | null;
  pending_definition: string | null;
  pending_seen: number | string | null;
}

export function pinFromRow(row: PinRow): PinRecord {
  return {
    server: row.server,
    tool: row.tool,
    hash: row.hash,
    definition: JSON.parse(row.definition) as JsonValue,
    pinned_at: Number(row.pinned_at),
    pending:
      row.pending_hash === null || row.pending_definition === null
        ? null
        : {
            hash: row.pending_hash,
            definition: JSON.parse(row.pending_definition) as JsonValue,
            seen_at: Number(row.pending_seen),
          },
  };
}

/** A window's state: when it began and how many calls it has counted. */
export interface WindowState {
  started_at: number;
  count: number;
}

/**
 * The window a call at `now` counts in: the stored one while it lasts (`now < started_at +
 * window_ms`), else a fresh one beginning now.
 */
export function currentWindow(stored: WindowState | undefined, window: RateWindow, now: number): WindowState {
  return stored !== undefined && now < stored.started_at + window.window_ms ? stored : { started_at: now, count: 0 };
}

/** The refusal for a full window. */
export function windowFull(window: RateWindow, state: WindowState, now: number): RateDecision {
  return {
    ok: false,
    key: window.key,
    limit: window.limit,
    window_ms: window.window_ms,
    retry_after_ms: Math.max(1, state.started_at + window.window_ms - now),
  };
}

/**
 * The windows in one order (by key), each key once with its smallest limit: SQL takes row locks
 * in this order, so two takers of overlapping windows never wait on each other in a cycle.
 */
export function orderedWindows(windows: readonly RateWindow[]): RateWindow[] {
  const byKey = new Map<string, RateWindow>();
  for (const w of windows) {
    const seen = byKey.get(w.key);
    if (seen === undefined || w.limit < seen.limit) byKey.set(w.key, w);
  }
  return [...byKey.values()].sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
}
