import { ToolgateError } from "../core/errors.js";
import { shapeOf } from "../core/describe.js";
import type { JsonValue } from "../core/json.js";
import type { TaskStore } from "./tasks.js";

/**
 * The one persistence interface of toolgate. Every backend (`stores/memory.ts`,
 * `stores/sqlite.ts`, `stores/redis.ts`, `stores/postgres.ts`) implements all of it, and one
 * conformance suite (`test/idempotency/store.conformance.ts`) runs against each.
 *
 * Times are epoch milliseconds, always passed in by the caller (the clock is injectable);
 * a store never reads the wall clock to decide a transition, except where a backend-native
 * TTL (Redis PX, a PostgreSQL `expires_at` filter) is documented below as equivalent.
 *
 * Shared code never checks a backend's name: differences are declared in `capabilities`.
 */
export interface Store {
  /** `memory`, `sqlite`, `redis`, `postgres`: for messages and the CLI only. */
  readonly kind: string;
  readonly capabilities: StoreCapabilities;
  readonly records: RecordStore;
  readonly revocations: RevocationStore;
  readonly budgets: BudgetStore;
  readonly approvals: ApprovalStore;
  /** Calls that run on after their request (`tasks.ts`): status, result, owner, expiry. */
  readonly tasks: TaskStore;
  /** Releases connections and file handles. Idempotent. */
  close(): Promise<void>;
}

export interface StoreCapabilities {
  /** Several processes (replicas) may share this store safely. False for `memory:`. */
  shared: boolean;
  /** State survives a restart of the process. */
  durable: boolean;
}

/** The stored states of the endpoint record (docs/idempotency.md); "unseen" is the absence of a record. */
export type RecordState = "IN_FLIGHT" | "COMPLETED" | "IN_DOUBT";

export interface IdempotencyRecord {
  key: string;
  state: RecordState;
  /** Owner token of the claim that created the record; fences every later transition. */
  owner: string;
  /** SHA-256 hex of the canonical arguments (RFC 8785); a repeat with another fingerprint is refused. */
  fingerprint: string | null;
  /** Tool name, for listing and operators. */
  tool: string | null;
  /** While IN_FLIGHT: the claim is void after this instant and the record reads as IN_DOUBT (`record.ts`
   * `effectiveState`). */
  lease_until: number;
  /** COMPLETED: the stored result every repeat receives. */
  result: JsonValue | null;
  /** IN_DOUBT: why the effect is unknown (the executor's error, "lease expired", …). */
  error: string | null;
  /** COMPLETED records expire at this instant (TTL); null = never. IN_DOUBT records never expire. */
  expires_at: number | null;
  created_at: number;
  updated_at: number;
}

export interface ClaimInput {
  owner: string;
  lease_until: number;
  fingerprint: string | null;
  tool: string | null;
  now: number;
}

export type ClaimOutcome = { claimed: true; record: IdempotencyRecord } | { claimed: false; record: IdempotencyRecord };

/** The changes a transition may make. */
export interface RecordPatch {
  state: RecordState;
  /** Replaces the owner token (used by a probe or an operator that takes over a record). */
  owner?: string;
  lease_until?: number;
  result?: JsonValue | null;
  error?: string | null;
  expires_at?: number | null;
  now: number;
}

export interface RecordStore {
  /**
   * Atomic set-if-absent. Claims `key` when no record exists, or when the only record is a
   * COMPLETED one whose `expires_at` has passed (`input.now`). Otherwise returns the existing
   * record unchanged. Exactly one of any number of concurrent claimers wins, across processes
   * for a `shared` store.
   */
  claim(key: string, input: ClaimInput): Promise<ClaimOutcome>;
  /** The record, or null when unseen or a COMPLETED record expired (compared with `now`). */
  get(key: string, now: number): Promise<IdempotencyRecord | null>;
  /**
   * Compare-and-set fenced by owner and state: applies `patch` only when the record exists,
   * its owner equals `owner` and its state equals `from`. Returns whether it applied; false
   * when the fence did not hold (someone else settled it; nothing changed). One write and
   * nothing read back: the caller fenced on a record it holds, and the fence holding means
   * that record plus `patch` is what is stored now (`applyPatch` in `record.ts`).
   */
  transition(key: string, owner: string, from: RecordState, patch: RecordPatch): Promise<boolean>;
  /**
   * Deletes the record when owner and state match (a no-effect failure, or a probe that
   * found the effect not applied). Returns whether it was deleted.
   */
  release(key: string, owner: string, from: RecordState): Promise<boolean>;
  /**
   * Records in key order, optionally filtered by state; `after` is the last key of the previous page.
   * Key order is code-unit (byte) order, e.g. a binary `COLLATE "C"` in SQL. COMPLETED records whose
   * `expires_at` has passed (`now`) are left out, as `get` treats them as absent. `limit` default: 100.
   */
  list(query: { state?: RecordState; limit?: number; after?: string; now: number }): Promise<IdempotencyRecord[]>;
}

/** Revocation by grant id (capability issue). Revoking a grant revokes every grant attenuated from it. */
export interface RevocationStore {
  /** Marks `id` revoked. `until` (epoch ms) lets the store forget it once the grant has expired anyway; null = keep. */
  revoke(id: string, input: { reason: string | null; until: number | null; now: number }): Promise<void>;
  /** The first of `ids` that is revoked, or null. One round trip for a whole chain. */
  firstRevoked(ids: readonly string[], now: number): Promise<string | null>;
  list(now: number): Promise<Array<{ id: string; reason: string | null; revoked_at: number; until: number | null }>>;
}

/** Cumulative budgets spent atomically (capability predicate `budget`). */
export interface BudgetStore {
  /**
   * Atomically adds `amount` to the spend of `id` if the total stays ≤ `limit`.
   * Returns `{ ok: true, remaining }` or `{ ok: false, remaining }` (nothing spent).
   * Concurrent spenders, across processes for a `shared` store, never exceed `limit`.
   */
  spend(id: string, amount: number, limit: number): Promise<{ ok: boolean; remaining: number }>;
  /** Amount spent so far (0 when never spent). */
  spent(id: string): Promise<number>;
}

export type ApprovalState = "pending" | "approved" | "denied" | "consumed";

/** An approval for one A3 call, bound to the tool, the canonical-argument hash and the capability id. */
export interface ApprovalRecord {
  id: string;
  tool: string;
  /** SHA-256 hex of the canonical arguments. */
  args_hash: string;
  /** The arguments as proposed, so an approver sees exactly what will run. */
  arguments: JsonValue;
  capability_id: string | null;
  trajectory_id: string;
  state: ApprovalState;
  created_at: number;
  expires_at: number;
  decided_at: number | null;
  approver: string | null;
  note: string | null;
}

export interface ApprovalStore {
  create(record: ApprovalRecord): Promise<void>;
  /**
   * Creates `record` (a pending approval) unless an approval for the same call is still live:
   * same tool, args_hash, capability_id and trajectory_id, not denied (pending, approved, or
   * consumed by the call it ran) and `now < expires_at`. Then nothing is created and that
   * approval (the newest such) is returned, so a model that re-proposes a call does not add to
   * the operator's queue, and a re-proposal of a call approved or run meanwhile is recognised as
   * that call. Atomic: concurrent proposals of one call share one approval, across processes for
   * a `shared` store.
   */
  createOrReuse(record: ApprovalRecord, now: number): Promise<ApprovalRecord>;
  get(id: string): Promise<ApprovalRecord | null>;
  /**
   * Compare-and-set on state: applies only when the current state is `from`.
   * Returns the updated record, or null when the state had moved (approval already used,
   * decided or unknown). This is what makes an approval single-use across replicas.
   */
  update(
    id: string,
    from: ApprovalState,
    patch: Partial<Pick<ApprovalRecord, "state" | "decided_at" | "approver" | "note">>,
  ): Promise<ApprovalRecord | null>;
  /** Newest first; `state` filters. */
  list(query: { state?: ApprovalState; limit?: number }): Promise<ApprovalRecord[]>;
}

/**
 * Refuses what is not a store, by the option's name: a missing one, or an `openStore(…)` promise
 * not awaited, fails at construction with the fix instead of a TypeError on the first call.
 */
export function assertStore(store: unknown, option: string): asserts store is Store {
  const s = store as Partial<Store> | null | undefined;
  if (typeof s === "object" && s !== null && typeof s.records === "object" && typeof s.approvals === "object") return;
  const received =
    s === undefined
      ? "nothing"
      : s === null
        ? "null"
        : typeof (s as { then?: unknown }).then === "function"
          ? "a Promise (openStore is async: await it)"
          : shapeOf(s);
  throw new ToolgateError(
    "invalid_config",
    `${option}: expected a store, e.g. await openStore("sqlite:.toolgate/state.db") or createMemoryStore(); received ${received}`,
  );
}
