/**
 * Places the file tools treat apart (hidden state, read-only repository files), known two ways:
 * by path, on the path a walk built, and by identity (device and inode), so the same folder or
 * file reached under another name — a folder renamed or exchanged with one of them — is still
 * recognised. Identities are gathered from every look and kept: a name that once held a guarded
 * place stays suspect, which can refuse an innocent path after such a swap but never admits a
 * guarded one.
 */
import { lstatSync, type Stats } from "node:fs";
import { LruCache } from "../../core/lru.js";
import { identity } from "./sys.js";

/** Identities kept per guard set; past it the least recently seen are forgotten (each look adds at most one per place).
 * */
const MAX_IDENTITIES = 4096;

export class Guards {
  private readonly seen = new LruCache<string, string>(MAX_IDENTITIES);
  /** What the first look found: never forgotten. */
  private readonly first = new Map<string, string>();

  /** `places`: absolute paths (they may not exist yet). */
  constructor(readonly places: readonly string[]) {}

  /**
   * Records what is at each place now; missing places are skipped. Synchronous on purpose: a
   * few lstat calls of fixed paths take microseconds, less than one trip through the thread pool.
   */
  look(): void {
    this.record(this.places.map(lstatOrNull));
  }

  /** The first look, taken when the workspace opens, before any tool runs: never forgotten. */
  lookFirst(): void {
    this.places.forEach((p) => {
      const st = lstatOrNull(p);
      if (st !== null) this.first.set(identity(st), p);
    });
  }

  private record(stats: (Stats | null)[]): void {
    stats.forEach((st, i) => {
      if (st === null) return;
      this.seen.set(identity(st), this.places[i]!);
    });
  }

  /** The place a file or directory is, by identity. */
  placeOf(st: Pick<Stats, "dev" | "ino">): string | undefined {
    const id = identity(st);
    return this.first.get(id) ?? this.seen.get(id);
  }

  /** The place `path` is, or is under, by path: the innermost when places nest (`.git/hooks` rather than `.git`). */
  containing(path: string): string | undefined {
    let found: string | undefined;
    for (const p of this.places)
      if ((path === p || path.startsWith(p + "/")) && (found === undefined || p.length > found.length)) found = p;
    return found;
  }
}

function lstatOrNull(path: string): Stats | null {
  try {
    // throwIfNoEntry: a missing place (the usual case) costs no exception.
    return lstatSync(path, { throwIfNoEntry: false }) ?? null;
  } catch {
    return null;
  }
}
