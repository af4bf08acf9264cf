/**
 * `memory:` — the reference semantics of the Store contract (`../store.ts`), in one process.
 * Every operation runs synchronously inside its promise, so each is atomic with respect to
 * every other caller in the process. Values are copied in and out, as a real store would.
 */
import { approvalBinding, isLiveAt } from "./approval-binding.js";
import type {
  ApprovalRecord,
  ApprovalState,
  ApprovalStore,
  BudgetStore,
  ClaimInput,
  ClaimOutcome,
  IdempotencyRecord,
  RecordPatch,
  RecordState,
  RecordStore,
  RevocationStore,
  Store,
} from "../store.js";
import { claimedRecord, completedExpired } from "./rows.js";
import { applyPatch } from "../record.js";
import { memoryTasks } from "./tasks-memory.js";

export interface MemoryStoreOptions {
  /** Default page size of `records.list` when the query gives none. Default 100. */
  defaultListLimit?: number;
}

/** The fast copy met something that is not plain JSON-shaped data. */
const NOT_PLAIN = Symbol("not plain");
/** Deeper than this, the fast copy gives way (a cycle, or data no store would keep). */
const MAX_PLAIN_DEPTH = 64;

/**
 * Deep copy of plain JSON-shaped data (what records and approvals hold): several times cheaper
 * than structuredClone, which was most of a memory-store operation. Anything else (a Date, a
 * class instance, a sparse array, a `__proto__` key, a cycle) returns NOT_PLAIN and the whole
 * value goes through structuredClone as before.
 */
function plainCopy(value: unknown, depth: number): unknown {
  if (typeof value !== "object" || value === null)
    return typeof value === "function" || typeof value === "symbol" ? NOT_PLAIN : value;
  if (depth > MAX_PLAIN_DEPTH) return NOT_PLAIN;
  const proto: unknown = Object.getPrototypeOf(value);
  if (proto === Array.prototype) {
    const list = value as unknown[];
    if (Object.keys(list).length !== list.length) return NOT_PLAIN; // holes or extra properties
    const out = new Array<unknown>(list.length);
    for (let i = 0; i < list.length; i++) {
      const item = plainCopy(list[i], depth + 1);
      if (item === NOT_PLAIN) return NOT_PLAIN;
      out[i] = item;
    }
    return out;
  }
  if (proto !== Object.prototype) return NOT_PLAIN;
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(value)) {
    if (key === "__proto__") return NOT_PLAIN;
    const item = plainCopy((value as Record<string, unknown>)[key], depth + 1);
    if (item === NOT_PLAIN) return NOT_PLAIN;
    out[key] = item;
  }
  return out;
}

const copy = <T>(value: T): T => {
  const out = plainCopy(value, 0);
  return out === NOT_PLAIN ? structuredClone(value) : (out as T);
};

/** A COMPLETED record past its TTL is treated as absent everywhere. */
const expired = (r: IdempotencyRecord, now: number): boolean => completedExpired(r.state, r.expires_at, now);

function memoryRecords(open: () => void, defaultLimit: number): RecordStore {
  const records = new Map<string, IdempotencyRecord>();
  const live = (key: string, now: number): IdempotencyRecord | undefined => {
    const r = records.get(key);
    if (r && expired(r, now)) {
      records.delete(key);
      return undefined;
    }
    return r;
  };
  return {
    async claim(key: string, input: ClaimInput): Promise<ClaimOutcome> {
      open();
      const existing = live(key, input.now);
      if (existing) return { claimed: false, record: copy(existing) };
      const record = claimedRecord(key, input);
      records.set(key, record);
      return { claimed: true, record: copy(record) };
    },
    async get(key: string, now: number) {
      open();
      const r = live(key, now);
      return r ? copy(r) : null;
    },
    async transition(key: string, owner: string, from: RecordState, patch: RecordPatch) {
      open();
      const r = live(key, patch.now);
      if (!r || r.owner !== owner || r.state !== from) return false;
      // The reference semantics of a fenced write are `applyPatch` itself; the result is copied so the caller cannot
      // change it later.
      records.set(key, applyPatch(r, patch.result === undefined ? patch : { ...patch, result: copy(patch.result) }));
      return true;
    },
    async release(key: string, owner: string, from: RecordState) {
      open();
      const r = records.get(key);
      if (!r || r.owner !== owner || r.state !== from) return false;
      return records.delete(key);
    },
    async list(query) {
      open();
      const limit = query.limit ?? defaultLimit;
      const out: IdempotencyRecord[] = [];
      // Code-unit order, the same order the SQL stores give with a binary ("C") collation.
      for (const key of [...records.keys()].sort()) {
        if (out.length >= limit) break;
        if (query.after !== undefined && key <= query.after) continue;
        const r = live(key, query.now);
        if (r && (query.state === undefined || r.state === query.state)) out.push(copy(r));
      }
      return out;
    },
  };
}

function memoryRevocations(open: () => void): RevocationStore {
  const revoked = new Map<string, { id: string; reason: string | null; revoked_at: number; until: number | null }>();
  // A revocation past `until` guards a grant that has expired anyway: forget it.
  const forget = (now: number) => {
    for (const [id, r] of revoked) if (r.until !== null && r.until <= now) revoked.delete(id);
  };
  return {
    async revoke(id, input) {
      open();
      const prior = revoked.get(id);
      revoked.set(id, { id, reason: input.reason, revoked_at: prior?.revoked_at ?? input.now, until: input.until });
    },
    async firstRevoked(ids, now) {
      open();
      forget(now);
      return ids.find((id) => revoked.has(id)) ?? null;
    },
    async list(now) {
      open();
      forget(now);
      return [...revoked.values()].map(copy);
    },
  };
}

function memoryBudgets(open: () => void): BudgetStore {
  const spent = new Map<string, number>();
  return {
    async spend(id, amount, limit) {
      open();
      const current = spent.get(id) ?? 0;
      if (current + amount > limit) return { ok: false, remaining: limit - current };
      spent.set(id, current + amount);
      return { ok: true, remaining: limit - current - amount };
    },
    async spent(id) {
      open();
      return spent.get(id) ?? 0;
    },
  };
}

function memoryApprovals(open: () => void): ApprovalStore {
  const approvals = new Map<string, ApprovalRecord>();
  /** approvalBinding → id of the newest approval created pending with it. */
  const latest = new Map<string, string>();
  const create = (record: ApprovalRecord) => {
    if (approvals.has(record.id)) throw new Error(`approval ${record.id} already exists; approval ids are single-use`);
    approvals.set(record.id, copy(record));
    if (record.state === "pending") latest.set(approvalBinding(record), record.id);
  };
  return {
    async create(record) {
      open();
      create(record);
    },
    async createOrReuse(record, now) {
      open();
      const current = approvals.get(latest.get(approvalBinding(record)) ?? "");
      if (current && isLiveAt(current, now)) return copy(current);
      create(record);
      return copy(record);
    },
    async get(id) {
      open();
      const r = approvals.get(id);
      return r ? copy(r) : null;
    },
    async update(id: string, from: ApprovalState, patch) {
      open();
      const r = approvals.get(id);
      if (!r || r.state !== from) return null;
      Object.assign(r, copy(patch));
      return copy(r);
    },
    async list(query) {
      open();
      return [...approvals.values()]
        .filter((r) => query.state === undefined || r.state === query.state)
        .sort((a, b) => b.created_at - a.created_at || (a.id < b.id ? 1 : -1))
        .slice(0, query.limit ?? Infinity)
        .map(copy);
    },
  };
}

/** A fresh, empty in-process store: not shared, not durable. */
export function createMemoryStore(options: MemoryStoreOptions = {}): Store {
  let closed = false;
  // A closed store fails like a store that went away, so callers' error paths can be tested.
  const open = () => {
    if (closed) throw new Error("the memory store is closed");
  };
  return {
    kind: "memory",
    capabilities: { shared: false, durable: false },
    records: memoryRecords(open, options.defaultListLimit ?? 100),
    revocations: memoryRevocations(open),
    budgets: memoryBudgets(open),
    approvals: memoryApprovals(open),
    tasks: memoryTasks(open),
    async close() {
      closed = true;
    },
  };
}
