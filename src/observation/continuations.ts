/**
 * Cursors for the part of an observation the budget cut (docs/observations.md: a marker says how much
 * was cut and exactly how to get the rest). When a tool has no continuation of its own, the
 * gateway keeps the cut text here and the built-in `read_more` tool pages through it in order.
 *
 * Held in process memory, bounded in entries and age: a cursor is a convenience for the next
 * few turns, not state to share between replicas (a replica without it says so and how to narrow).
 */
import { randomBytes } from "node:crypto";
import { ToolgateError } from "../core/errors.js";
import { LruCache } from "../core/lru.js";

export interface ContinuationOptions {
  /** Most cursors kept (a whole number ≥ 1); the least recently made or read is dropped first. Default 256. */
  max_entries?: number;
  /** A cursor expires this long after it was made, ms. Default 15 minutes. */
  ttl_ms?: number;
  /** Epoch ms. Default `Date.now`. */
  now?: () => number;
}

/** What a cursor leads back to. */
export interface Continuation {
  /** The tool and call whose output this is the rest of (provenance for the fence). */
  tool: string;
  call_id: string;
  text: string;
}

export interface ContinuationCache {
  /** A fresh cursor id, reserved so a marker can name it before the cut is known. */
  reserve(): string;
  put(cursor: string, value: Continuation): void;
  /** The text behind a cursor, or null when unknown or expired. A cursor may be read again. */
  get(cursor: string): Continuation | null;
}

export const CURSOR_PATTERN = "^m_[A-Za-z0-9_-]{16}$";

export function createContinuationCache(options: ContinuationOptions = {}): ContinuationCache {
  const max = options.max_entries ?? 256;
  if (!Number.isSafeInteger(max) || max < 1) {
    throw new ToolgateError(
      "invalid_config",
      `continuations.max_entries must be a whole number of cursors ≥ 1; received ${JSON.stringify(max) ?? String(max)}; e.g. 256`,
    );
  }
  const ttl = options.ttl_ms ?? 15 * 60_000;
  const now = options.now ?? Date.now;
  const entries = new LruCache<string, Continuation & { expires_at: number }>(max);
  return {
    reserve: () => `m_${randomBytes(12).toString("base64url")}`,
    put(cursor, value) {
      entries.set(cursor, { ...value, expires_at: now() + ttl });
    },
    get(cursor) {
      const e = entries.get(cursor);
      if (!e) return null;
      if (now() >= e.expires_at) {
        entries.delete(cursor);
        return null;
      }
      return { tool: e.tool, call_id: e.call_id, text: e.text };
    },
  };
}
