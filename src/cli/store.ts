import { openStore } from "../idempotency/open.js";
import type { Store } from "../idempotency/store.js";

/**
 * Opens the store at `url` for a command that works on what is already recorded, runs `run`,
 * and always closes it. A missing SQLite file is refused, never created: a mistyped `--store`
 * must not read as an empty store.
 */
export async function withExistingStore<T>(url: string, run: (store: Store) => Promise<T>): Promise<T> {
  const store = await openStore(url, { mustExist: true });
  try {
    return await run(store);
  } finally {
    await store.close();
  }
}
