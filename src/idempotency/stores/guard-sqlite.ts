/**
 * The guard store in SQLite: the same file as the idempotency store (its own tables), opened
 * the same way (`sqlite-open.ts`). A pin report is one upsert; a rate take is one IMMEDIATE
 * transaction over its windows, so SQLite's write lock makes it all-or-none across processes.
 */
import type { GuardStore, RateDecision } from "../guard-store.js";
import { currentWindow, orderedWindows, pinFromRow, windowFull, type PinRow, type WindowState } from "./guard-rows.js";
import { openSqliteDatabase } from "./sqlite-open.js";

const DDL = `
CREATE TABLE IF NOT EXISTS guard_pins (
  server TEXT NOT NULL,
  tool TEXT NOT NULL,
  hash TEXT NOT NULL,
  definition TEXT NOT NULL,
  pinned_at INTEGER NOT NULL,
  pending_hash TEXT,
  pending_definition TEXT,
  pending_seen INTEGER,
  PRIMARY KEY (server, tool)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS guard_rates (
  key TEXT PRIMARY KEY,
  started_at INTEGER NOT NULL,
  count INTEGER NOT NULL
) WITHOUT ROWID;
`;

/** A report with the pinned hash leaves the row alone; another hash becomes (or replaces) the pending one. */
const OBSERVE = `
INSERT INTO guard_pins (server, tool, hash, definition, pinned_at) VALUES (@server, @tool, @hash, @definition, @now)
ON CONFLICT (server, tool) DO UPDATE SET
  pending_hash = CASE WHEN hash = excluded.hash THEN pending_hash ELSE excluded.hash END,
  pending_definition = CASE WHEN hash = excluded.hash THEN pending_definition ELSE excluded.definition END,
  pending_seen = CASE WHEN hash = excluded.hash THEN pending_seen ELSE @now END
RETURNING *`;

const ACCEPT = `
UPDATE guard_pins SET hash = pending_hash, definition = pending_definition, pinned_at = @now,
  pending_hash = NULL, pending_definition = NULL, pending_seen = NULL
WHERE server = @server AND tool = @tool AND pending_hash = @hash
RETURNING *`;

export async function createSqliteGuardStore(options: { path: string; busyTimeoutMs?: number }): Promise<GuardStore> {
  const db = await openSqliteDatabase(options.path, options.busyTimeoutMs ?? 5000, DDL);
  const observe = db.prepare(OBSERVE);
  const accept = db.prepare(ACCEPT);
  const list = db.prepare("SELECT * FROM guard_pins WHERE server = ? ORDER BY tool");
  const readWindow = db.prepare("SELECT started_at, count FROM guard_rates WHERE key = ?");
  const writeWindow = db.prepare(
    "INSERT INTO guard_rates (key, started_at, count) VALUES (?, ?, ?) ON CONFLICT (key) DO UPDATE SET started_at = excluded.started_at, count = excluded.count",
  );
  const take = db.transaction((asked: Parameters<GuardStore["rates"]["take"]>[0], now: number): RateDecision => {
    const ordered = orderedWindows(asked);
    const states = ordered.map((w) => currentWindow(readWindow.get(w.key) as WindowState | undefined, w, now));
    const full = ordered.findIndex((w, i) => states[i]!.count >= w.limit);
    if (full >= 0) return windowFull(ordered[full]!, states[full]!, now);
    ordered.forEach((w, i) => writeWindow.run(w.key, states[i]!.started_at, states[i]!.count + 1));
    return { ok: true };
  });
  let closed = false;
  return {
    kind: "sqlite",
    capabilities: { shared: true, durable: options.path !== ":memory:" },
    pins: {
      async observe(server, tool, hash, definition, now) {
        return pinFromRow(observe.get({ server, tool, hash, definition: JSON.stringify(definition), now }) as PinRow);
      },
      async list(server) {
        return (list.all(server) as PinRow[]).map(pinFromRow);
      },
      async accept(server, tool, hash, now) {
        const row = accept.get({ server, tool, hash, now }) as PinRow | undefined;
        return row === undefined ? null : pinFromRow(row);
      },
    },
    rates: {
      // IMMEDIATE: the write lock is taken before the windows are read, so no other process reads them meanwhile.
      take: async (asked, now) => take.immediate(asked, now),
    },
    async close() {
      if (closed) return;
      closed = true;
      db.close();
    },
  };
}
