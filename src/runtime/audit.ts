/**
 * The audit trail: one JSON line per call with every stage's
 * outcome, and one per read answered beside the pipeline (`ReadAuditRecord`, `kind: "read"`). A line's token counts
 * take bounded work whatever the call's text (`countTokensBounded`: a huge argument is counted as far as one step
 * reads and the rest estimated, and the record says so). It is written at once unless another
 * line was written less than `FLUSH_DELAY_MS` before; then it joins a batch written at most
 * `FLUSH_DELAY_MS` later, or as soon as `FLUSH_BATCH` lines wait — a busy server pays one write
 * per batch, an idle one has each line on disk before its answer leaves. The arguments are counted when the call
 * ends (a handler still running past its bound may change the object it was given); a line that joins a batch has
 * its observation counted and is serialised when the batch is written, after its answer has left, so a busy
 * server's answers do not wait for their audit lines. `close()`, `flush()` and process exit write what waits
 * (completing it then), so no line is lost; the lines keep the order their calls ended in.
 */
import { closeSync, writeSync } from "node:fs";
import { dirname, join } from "node:path";
import { LruCache } from "../core/lru.js";
import { countTokensBounded, type BoundedCount } from "../observation/tokens.js";
import { AUDIT_FILE, defaultStateDir } from "../state/location.js";
import { ensurePrivateDir, openPrivateAppend } from "../state/private.js";
import type { AuditRecord, ReadAuditRecord } from "./types.js";

/** Longest a buffered line waits before it is written, ms (a reader of a live trail lags by this much). */
export const FLUSH_DELAY_MS = 25;
/** Lines that trigger a flush on the next turn of the event loop instead of waiting for the delay. */
export const FLUSH_BATCH = 256;

/**
 * A record whose token counts may be filled in later: when `argument_tokens` or
 * `observation_tokens` is null, the sink counts the matching text when it writes. A sink may complete and serialise
 * `record` after `write` returned (the file sink does, for a line that joins a batch): nothing in it may change then.
 */
export interface PendingAudit {
  record: Omit<AuditRecord, "argument_tokens" | "observation_tokens"> & {
    argument_tokens: number | null;
    observation_tokens: number | null;
  };
  /** The call's arguments; serialised and counted when the sink receives the entry (the call's end). */
  arguments: unknown;
  observation_text: string;
}

/** Where audit records go. Implement it to send records elsewhere (a queue, a log shipper). */
export interface AuditSink {
  write(entry: PendingAudit): void;
  /**
   * Takes the line of a read answered beside the pipeline (`gateway.recordRead`: what a proxy
   * passes through), complete as given. A sink without it gets no such lines.
   */
  writeRead?(record: ReadAuditRecord): void;
  /** Writes everything buffered. */
  flush(): void;
  /** Flushes and releases the file. Idempotent. */
  close(): Promise<void>;
}

// Agents repeat arguments (`{}`, the same id, the same path) far more than observations: exact
// counts of recent argument texts are kept, keyed by the text itself, so a repeat costs a lookup.
const ARGUMENT_COUNTS_MAX = 1024;
const argumentCounts = new LruCache<string, number>(ARGUMENT_COUNTS_MAX);

/** Values a nesting measure visits at most; past it the depth it reports is a lower bound. */
const DEPTH_VISITS = 1_000_000;

/** How deep `value` nests (each array or object a level), read without recursion. */
function nestingDepth(value: unknown): { depth: number; complete: boolean } {
  let depth = 0;
  let visits = 0;
  const stack: Array<[unknown, number]> = [[value, 1]];
  while (stack.length > 0) {
    if (++visits > DEPTH_VISITS) return { depth, complete: false };
    const [v, d] = stack.pop()!;
    if (typeof v !== "object" || v === null) continue;
    if (d > depth) depth = d;
    for (const child of Array.isArray(v) ? v : Object.values(v)) stack.push([child, d + 1]);
  }
  return { depth, complete: true };
}

/** Why `args` could not be serialised (`err`, what JSON.stringify threw), in a bounded sentence. */
function unrecordedReason(args: unknown, err: unknown): string {
  const thrown = (err instanceof Error ? err.message : String(err)).replace(/\s+/g, " ").slice(0, 200);
  if (err instanceof RangeError) {
    try {
      const { depth, complete } = nestingDepth(args);
      return `arguments nested ${complete ? "" : "at least "}${depth} levels deep, deeper than the audit serialises (JSON.stringify: ${thrown})`;
    } catch {
      // A getter or proxy that throws: the reason stays the serialiser's.
    }
  }
  return `arguments could not be serialised as JSON (JSON.stringify: ${thrown})`;
}

/** An argument count, and why the arguments were not recorded when they could not be serialised. */
type ArgumentCount = BoundedCount & { unrecorded?: string };

function argumentTokens(args: unknown): ArgumentCount {
  let text: string;
  try {
    text = JSON.stringify(args) ?? "";
  } catch (err) {
    return { tokens: 0, exact: true, unrecorded: unrecordedReason(args, err) };
  }
  const known = argumentCounts.get(text);
  if (known !== undefined) return { tokens: known, exact: true };
  const n = countTokensBounded(text);
  if (n.exact && text.length <= 4096) {
    argumentCounts.set(text, n.tokens);
  }
  return n;
}

// The last timestamp written: calls that arrive in the same millisecond (several do on a busy
// server) share its text instead of formatting it again.
let lastTsMs = Number.NaN;
let lastTs = "";

/** `new Date(ms).toISOString()`, the audit line's `ts`, formatted once per millisecond. */
export function auditTimestamp(ms: number): string {
  if (ms !== lastTsMs) {
    lastTs = new Date(ms).toISOString();
    lastTsMs = ms;
  }
  return lastTs;
}

/** `entry`'s argument count: the one it carries, else its arguments counted now. */
function countArguments(entry: PendingAudit): ArgumentCount {
  const given = entry.record.argument_tokens;
  return given === null ? argumentTokens(entry.arguments) : { tokens: given, exact: true };
}

/** Fills in lazily counted token figures (`args`: the arguments' count, when already made), and says which ones are
 * estimates. */
export function completeRecord(entry: PendingAudit, args: ArgumentCount = countArguments(entry)): AuditRecord {
  const r = entry.record;
  const obs =
    r.observation_tokens === null
      ? countTokensBounded(entry.observation_text)
      : { tokens: r.observation_tokens, exact: true };
  return {
    ...r,
    argument_tokens: args.tokens,
    observation_tokens: obs.tokens,
    ...("unrecorded" in args ? { arguments_unrecorded: args.unrecorded } : {}),
    ...(args.exact ? {} : { argument_tokens_estimated: true }),
    ...(obs.exact ? {} : { observation_tokens_estimated: true }),
  };
}

/** A call's line waiting in a file sink's batch: its arguments counted, the rest completed when it is written. */
interface Waiting {
  entry: PendingAudit;
  args: ArgumentCount;
}

/** The text of waiting line `w`; a record that cannot be serialised loses its line, said on stderr (as a call's line
 * whose write failed is, `gateway-audit.ts`), not the batch. */
function serialised(w: Waiting): string {
  try {
    return JSON.stringify(completeRecord(w.entry, w.args)) + "\n";
  } catch (err) {
    process.stderr.write(
      `toolgate: audit line for call ${String(w.entry.record.call_id)} not written: ${(err as Error).message}\n`,
    );
    return "";
  }
}

export interface AuditFileOptions {
  /** Open (and create) the file now, so a path that cannot be used fails here, not at the first call. Default false: on
   * first write. */
  openNow?: boolean;
}

/**
 * A JSON-lines file sink. Default path: `audit.jsonl` in the state folder of the current
 * directory (`defaultStateDir(process.cwd())`), outside it. The folder is created 0700 when
 * absent and must be ours alone; the file is 0600 and opened without following a link
 * (state/private.ts), so nothing that can write beside it can redirect the lines elsewhere.
 */
export function createAuditSink(
  path: string = join(defaultStateDir(process.cwd()), AUDIT_FILE),
  options: AuditFileOptions = {},
): AuditSink {
  let fd: number | null = null;
  const open = () => {
    ensurePrivateDir(dirname(path), "the audit trail's folder");
    return openPrivateAppend(path, "the audit trail");
  };
  if (options.openNow) fd = open();
  // Lines waiting for the next write: serialised, or a call's entry completed when written (`serialised`).
  let buffer: Array<string | Waiting> = [];
  let timer: NodeJS.Timeout | null = null;
  let immediate: NodeJS.Immediate | null = null;
  let lastWrite = -Infinity;
  let closed = false;

  const flush = () => {
    if (timer !== null) clearTimeout(timer);
    if (immediate !== null) clearImmediate(immediate);
    timer = immediate = null;
    if (buffer.length === 0) return;
    const batch = buffer;
    buffer = [];
    fd ??= open();
    let text = "";
    for (const line of batch) text += typeof line === "string" ? line : serialised(line);
    writeSync(fd, text);
    lastWrite = performance.now();
  };
  // From a timer, where a throw would end the process: a trail that cannot be opened (say, a
  // link planted at its name) loses that batch and says so on stderr. flush() and close() throw.
  const flushSoon = () => {
    try {
      flush();
    } catch (err) {
      process.stderr.write(`toolgate: audit lines not written to ${path}: ${(err as Error).message}\n`);
    }
  };
  // A process that exits without closing the gateway still gets its last lines written.
  const onExit = () => flushSoon();
  process.on("exit", onExit);

  /** Queues one line: written now on an idle trail, else with the next batch. */
  const push = (line: string | Waiting) => {
    if (closed) throw new Error(`audit sink ${path} is closed; create a new gateway to keep auditing`);
    buffer.push(line);
    if (performance.now() - lastWrite >= FLUSH_DELAY_MS && buffer.length === 1) flushSoon();
    else if (buffer.length >= FLUSH_BATCH) immediate ??= setImmediate(flushSoon);
    // Unreferenced: a pending line never keeps the process alive (exit and close flush it).
    else timer ??= setTimeout(flushSoon, FLUSH_DELAY_MS).unref();
  };

  return {
    // Counted now, then not held: a waiting line keeps only what its completion reads.
    write: (entry) => push({ entry: { ...entry, arguments: undefined }, args: countArguments(entry) }),
    writeRead: (record) => push(JSON.stringify(record) + "\n"),
    flush,
    async close() {
      if (closed) return;
      flush();
      closed = true;
      process.off("exit", onExit);
      if (fd !== null) closeSync(fd);
      fd = null;
    },
  };
}

/** An in-memory sink (tests, embedding): keeps completed call records in `records`, read records in `reads`. */
export function createMemoryAuditSink(): AuditSink & {
  readonly records: AuditRecord[];
  readonly reads: ReadAuditRecord[];
} {
  const records: AuditRecord[] = [];
  const reads: ReadAuditRecord[] = [];
  return {
    records,
    reads,
    write: (entry) => void records.push(completeRecord(entry)),
    writeRead: (record) => void reads.push(record),
    flush: () => {},
    close: async () => {},
  };
}
