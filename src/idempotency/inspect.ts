/**
 * Reading records for operators (`toolgate records`): each record with the state it reads as
 * now, since an IN_FLIGHT record whose lease passed is IN_DOUBT in all but name.
 */
import { effectiveState } from "./record.js";
import type { IdempotencyRecord, RecordState, Store } from "./store.js";

/** A record plus the state it reads as at the time it was read. */
export interface RecordView extends IdempotencyRecord {
  reads_as: RecordState;
}

export interface ListRecordViewsQuery {
  /** Filter on the state a record reads as: an IN_FLIGHT record past its lease counts as IN_DOUBT, not IN_FLIGHT. */
  state?: RecordState;
  limit?: number;
  /** Last key of the previous page. */
  after?: string;
  now: number;
}

const view = (r: IdempotencyRecord, now: number): RecordView => ({ ...r, reads_as: effectiveState(r, now) });

/** Records that read as `state`, from one stored state, paging until `limit` matched or the store ran out. */
async function collect(
  store: Store,
  stored: RecordState,
  query: ListRecordViewsQuery & { limit: number },
): Promise<RecordView[]> {
  const out: RecordView[] = [];
  let after = query.after;
  for (;;) {
    const page = await store.records.list({
      state: stored,
      limit: query.limit,
      now: query.now,
      ...(after !== undefined ? { after } : {}),
    });
    for (const r of page) {
      const v = view(r, query.now);
      if (query.state === undefined || v.reads_as === query.state) out.push(v);
    }
    if (out.length >= query.limit || page.length < query.limit) return out.slice(0, query.limit);
    after = page[page.length - 1]!.key;
  }
}

/** One page of records in key order, each with `reads_as` (the store's own `records.list` returns them as stored). */
export async function listRecordViews(store: Store, query: ListRecordViewsQuery): Promise<RecordView[]> {
  const limit = query.limit ?? 100;
  if (query.state === undefined) {
    const page = await store.records.list({
      limit,
      now: query.now,
      ...(query.after !== undefined ? { after: query.after } : {}),
    });
    return page.map((r) => view(r, query.now));
  }
  const q = { ...query, limit };
  if (query.state === "COMPLETED") return collect(store, "COMPLETED", q);
  if (query.state === "IN_FLIGHT") return collect(store, "IN_FLIGHT", q);
  // IN_DOUBT: stored IN_DOUBT plus IN_FLIGHT past its lease, merged in key order.
  const merged = [...(await collect(store, "IN_DOUBT", q)), ...(await collect(store, "IN_FLIGHT", q))];
  return merged.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0)).slice(0, limit);
}

/** The record for `key` with `reads_as`, or null when unseen (or COMPLETED past its TTL). */
export async function showRecord(store: Store, key: string, now: number): Promise<RecordView | null> {
  const r = await store.records.get(key, now);
  return r ? view(r, now) : null;
}
