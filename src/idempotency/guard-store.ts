/**
 * The store of what guards a gateway in front of other servers: the pinned definition of every
 * upstream tool (a changed one is held until an operator accepts it) and the rate windows of
 * calls. One interface, four backends (`stores/guard-memory.ts`, `guard-sqlite.ts`,
 * `guard-redis.ts`, `guard-postgres.ts`), opened from the same URL as the idempotency store
 * (`openGuardStore`), so replicas sharing a store share pins and rate limits. One conformance
 * suite (`test/idempotency/guard-store.conformance.ts`) runs against each.
 *
 * Times are epoch milliseconds passed in by the caller, as in `store.ts`.
 */
import type { JsonValue } from "../core/json.js";
import type { StoreCapabilities } from "./store.js";

export interface GuardStore {
  readonly kind: string;
  readonly capabilities: StoreCapabilities;
  readonly pins: PinStore;
  readonly rates: RateStore;
  /** Releases connections and file handles. Idempotent. */
  close(): Promise<void>;
}

/** A definition seen but not accepted: it differs from the pin. */
export interface PendingDefinition {
  hash: string;
  definition: JsonValue;
  /** When this definition was last reported as different. */
  seen_at: number;
}

/** The pin of one upstream tool: the hash of its accepted definition, and a changed one waiting for review. */
export interface PinRecord {
  server: string;
  tool: string;
  /** SHA-256 hex of the accepted definition's canonical JSON. */
  hash: string;
  definition: JsonValue;
  pinned_at: number;
  pending: PendingDefinition | null;
}

export interface PinStore {
  /**
   * Reports that `server`'s tool `tool` now has this definition. Atomically: the first report
   * pins it (trust on first sight); a later one with the pinned hash changes nothing; one with
   * another hash is kept as `pending` (replacing an older pending one). Returns the pin as stored
   * after, so the caller compares `hash` with its own to know whether the tool is held. Exactly
   * one of concurrent first reports pins, across processes for a `shared` store.
   */
  observe(server: string, tool: string, hash: string, definition: JsonValue, now: number): Promise<PinRecord>;
  /** Every pin of `server`, by tool name. */
  list(server: string): Promise<PinRecord[]>;
  /**
   * Makes the pending definition of `tool` the pin, when its hash is `hash` (what the operator
   * reviewed: a definition that changed again since is not accepted blindly). Returns the new
   * pin, or null when nothing with that hash is pending.
   */
  accept(server: string, tool: string, hash: string, now: number): Promise<PinRecord | null>;
}

/** One window a call counts in: at most `limit` calls per `window_ms`, keyed (tool, server, grant). */
export interface RateWindow {
  key: string;
  limit: number;
  window_ms: number;
}

export type RateDecision =
  | { ok: true }
  | {
      ok: false;
      /** The window that is full. */
      key: string;
      limit: number;
      window_ms: number;
      /** When that window ends, from `now`. */
      retry_after_ms: number;
    };

export interface RateStore {
  /**
   * Counts one call in every window, all or none: when each has room (fewer than `limit` calls
   * since it began), each counts it; otherwise none does and the first full one is returned. A
   * window begins at the first call counted in it and lasts `window_ms`; the first call after it
   * ends begins the next. Concurrent takers, across processes for a `shared` store, never count
   * more than `limit` calls in one window.
   */
  take(windows: readonly RateWindow[], now: number): Promise<RateDecision>;
}
