/**
 * `toolgate/stores`: each store backend's factory (`openStore` in the root picks one by URL),
 * the store contract's types for writing or wrapping a store, and the records in code — what
 * `toolgate records` lists, shows and settles. An explicit list, documented in docs/api.md.
 */
export { createMemoryStore } from "../idempotency/stores/memory.js";
export type { MemoryStoreOptions } from "../idempotency/stores/memory.js";
export { createSqliteStore } from "../idempotency/stores/sqlite.js";
export type { SqliteStoreOptions } from "../idempotency/stores/sqlite.js";
export { createRedisStore } from "../idempotency/stores/redis.js";
export type { RedisStoreOptions } from "../idempotency/stores/redis.js";
export { createPostgresStore } from "../idempotency/stores/postgres.js";
export type { PostgresStoreOptions } from "../idempotency/stores/postgres.js";
export type {
  Store,
  StoreCapabilities,
  RecordStore,
  RevocationStore,
  BudgetStore,
  ApprovalStore,
  RecordState,
  IdempotencyRecord,
  ClaimInput,
  ClaimOutcome,
  RecordPatch,
  ApprovalState,
  ApprovalRecord,
} from "../idempotency/store.js";
export type { TaskStore, TaskRecord, TaskStatus, TaskPatch, TaskFence } from "../idempotency/tasks.js";
export { listRecordViews, showRecord } from "../idempotency/inspect.js";
export type { RecordView, ListRecordViewsQuery } from "../idempotency/inspect.js";
export { resolveInDoubt } from "../idempotency/resolve-in-doubt.js";
export type { ManualOutcome, ResolveInDoubtOptions, ResolveInDoubtResult } from "../idempotency/resolve-in-doubt.js";
export { ResolveInDoubtError } from "../idempotency/errors.js";
