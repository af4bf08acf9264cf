/**
 * What the proxy does when an upstream says `notifications/tools/list_changed`: read the catalog
 * again — one re-list in flight per upstream, and every notification that arrives meanwhile
 * folded into one more after it (`coalesced`), so a storm of them costs at most two — then hold
 * every served tool whose definition is no longer the one served or that is no longer listed
 * (`relisted`). The gateway's catalog is fixed when it is built (`runtime/resolve.ts` resolves
 * a name in it), so nothing is replaced while the proxy runs: a held tool is left out of
 * tools/list (`ToolSpec.mcp.hidden`) and its calls are refused by its `check`, and a tool that
 * appeared is served after a restart. When the held set grows, the proxy's `ChangeSignal` tells
 * the connected clients their list changed (`server/server.ts` → each session, each listen stream).
 */
import type { Client, Tool } from "@modelcontextprotocol/client";
import { definitionHash, pinnedDefinition } from "../../idempotency/pins.js";
import { listAllTools } from "./upstream.js";
import { boundedText } from "./upstream-notices.js";

/** The catalog read again after a list_changed; null (said in the operator's log) when listing failed. */
export async function relist(client: Client, who: string, log: (line: string) => void): Promise<Tool[] | null> {
  try {
    return await listAllTools(client);
  } catch (err) {
    log(
      `toolgate proxy: ${who} said its tools changed, but listing them failed: ${boundedText((err as Error).message, 500)}`,
    );
    return null;
  }
}

/** The least time between the starts of two re-lists of one upstream, ms. */
export const RELIST_GAP_MS = 1_000;

export interface CoalescedOptions {
  /** The least time between the starts of two runs, ms (default `RELIST_GAP_MS`). */
  gapMs?: number;
  /** Waits `ms` (replaced in tests). */
  sleep?: (ms: number) => Promise<void>;
  now?: () => number;
}

/**
 * A trigger that runs `work` at most once at a time; triggers during a run make one more run after
 * it, started no sooner than `gapMs` after the last one started. An upstream that answers every
 * re-list with another list_changed is re-listed once a second, not as fast as it can answer.
 */
export function coalesced(work: () => Promise<void>, options: CoalescedOptions = {}): () => void {
  const gapMs = options.gapMs ?? RELIST_GAP_MS;
  const sleep = options.sleep ?? ((ms: number) => new Promise<void>((r) => setTimeout(r, ms).unref()));
  const now = options.now ?? (() => performance.now());
  let running = false;
  let again = false;
  let lastStart = -Infinity;
  const run = async (): Promise<void> => {
    running = true;
    try {
      do {
        again = false;
        const wait = lastStart + gapMs - now();
        if (wait > 0) await sleep(wait);
        lastStart = now();
        await work().catch(() => {});
      } while (again);
    } finally {
      running = false;
    }
  };
  return () => {
    if (running) again = true;
    else void run();
  };
}

/** A served tool held after a re-list: why, and (when still listed) its new definition. */
export interface NewlyHeld {
  tool: string;
  why: "changed" | "gone";
  now?: Tool;
}

/**
 * A re-listed catalog against the tools served (name → hash of the definition served): holds each
 * served tool not yet held whose definition changed or that is gone, tells `held` of each and
 * `added` of the names newly listed, and answers whether a tool was newly held.
 */
export function holdRelisted(
  listed: readonly Tool[],
  served: ReadonlyMap<string, string>,
  held: Set<string>,
  say: { held(h: NewlyHeld): void; added(names: string[]): void },
): boolean {
  const byName = new Map(listed.map((t) => [t.name, t]));
  let grew = false;
  for (const [name, hash] of served) {
    if (held.has(name)) continue;
    const now = byName.get(name);
    if (now && definitionHash(pinnedDefinition(now)) === hash) continue;
    held.add(name);
    grew = true;
    say.held(now ? { tool: name, why: "changed", now } : { tool: name, why: "gone" });
  }
  const added = listed.filter((t) => !served.has(t.name)).map((t) => t.name);
  if (added.length > 0) say.added(added);
  return grew;
}

/** Lint findings of a changed definition, one operator-log line each. */
export function findingLines(
  findings: ReadonlyArray<{ severity: string; rule: string; pointer: string; message: string }>,
): string[] {
  return findings.map((f) => `  ${f.severity} ${f.rule} ${f.pointer || "/"}: ${f.message}`);
}
