/**
 * A change signal: whoever serves a list (the MCP server's sessions) subscribes, and whoever
 * changes what the list holds (a proxy holding a tool whose upstream definition changed) emits.
 * A listener that throws is skipped; the others are still told.
 */

/** What a list's servers subscribe to; `subscribe` returns the function that unsubscribes. */
export interface ChangeFeed {
  subscribe(listener: () => void): () => void;
}

export class ChangeSignal implements ChangeFeed {
  private readonly listeners = new Set<() => void>();

  subscribe(listener: () => void): () => void {
    // A wrapper per subscription, so one listener subscribed twice is told twice and unsubscribed once.
    const own = () => listener();
    this.listeners.add(own);
    return () => void this.listeners.delete(own);
  }

  emit(): void {
    for (const listener of [...this.listeners]) {
      try {
        listener();
      } catch {
        // One failing listener does not keep the others from hearing it.
      }
    }
  }

  /** Listeners subscribed now. */
  get size(): number {
    return this.listeners.size;
  }
}
