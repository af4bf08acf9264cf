/**
 * Work in flight, and who waits for it to end: the gateway's running calls (`close` waits for
 * them, then aborts what is left) and an MCP server's tools/call handlers still preparing an
 * answer (a transport is closed only after them). Adding and ending work makes no promise; only
 * a waiter does.
 */
export class InFlight<T> {
  readonly #items = new Set<T>();
  #waiters: Array<() => void> = [];

  add(item: T): void {
    this.#items.add(item);
  }

  /** Ends `item`; when nothing is left in flight, every waiter wakes. */
  delete(item: T): void {
    this.#items.delete(item);
    if (this.#items.size === 0 && this.#waiters.length > 0) for (const wake of this.#waiters.splice(0)) wake();
  }

  get size(): number {
    return this.#items.size;
  }

  [Symbol.iterator](): IterableIterator<T> {
    return this.#items.values();
  }

  /** Resolves true once nothing is in flight (at once when nothing is), false when `ms` passes first. */
  async idle(ms: number): Promise<boolean> {
    if (this.#items.size === 0) return true;
    let timer: NodeJS.Timeout | undefined;
    let wake: () => void = () => {};
    const done = await new Promise<boolean>((resolve) => {
      wake = () => resolve(true);
      this.#waiters.push(wake);
      timer = setTimeout(() => resolve(false), ms);
    });
    clearTimeout(timer);
    const i = this.#waiters.indexOf(wake);
    if (i >= 0) this.#waiters.splice(i, 1);
    return done;
  }
}
