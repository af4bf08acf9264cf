/** The in-process guard store: the reference semantics of `guard-store.ts`, not shared between processes. */
import type { GuardStore, PinRecord } from "../guard-store.js";
import { currentWindow, orderedWindows, windowFull, type WindowState } from "./guard-rows.js";

export function createMemoryGuardStore(): GuardStore {
  const pins = new Map<string, PinRecord>();
  const windows = new Map<string, WindowState>();
  const id = (server: string, tool: string) => JSON.stringify([server, tool]);
  const copy = (p: PinRecord): PinRecord => structuredClone(p);
  return {
    kind: "memory",
    capabilities: { shared: false, durable: false },
    pins: {
      async observe(server, tool, hash, definition, now) {
        const pin = pins.get(id(server, tool));
        if (pin === undefined) {
          const fresh: PinRecord = {
            server,
            tool,
            hash,
            definition: structuredClone(definition),
            pinned_at: now,
            pending: null,
          };
          pins.set(id(server, tool), fresh);
          return copy(fresh);
        }
        if (pin.hash !== hash) pin.pending = { hash, definition: structuredClone(definition), seen_at: now };
        return copy(pin);
      },
      async list(server) {
        return [...pins.values()]
          .filter((p) => p.server === server)
          .sort((a, b) => (a.tool < b.tool ? -1 : a.tool > b.tool ? 1 : 0))
          .map(copy);
      },
      async accept(server, tool, hash, now) {
        const pin = pins.get(id(server, tool));
        if (pin?.pending?.hash !== hash) return null;
        Object.assign(pin, { hash, definition: pin.pending.definition, pinned_at: now, pending: null });
        return copy(pin);
      },
    },
    rates: {
      async take(asked, now) {
        const ordered = orderedWindows(asked);
        const states = ordered.map((w) => currentWindow(windows.get(w.key), w, now));
        const full = ordered.findIndex((w, i) => states[i]!.count >= w.limit);
        if (full >= 0) return windowFull(ordered[full]!, states[full]!, now);
        ordered.forEach((w, i) =>
          windows.set(w.key, { started_at: states[i]!.started_at, count: states[i]!.count + 1 }),
        );
        return { ok: true };
      },
    },
    async close() {},
  };
}
