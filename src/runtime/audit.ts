/**
 * The audit trail (issue 5, "Audit and stats"): one JSON line per call with every stage's
 * outcome. Writes are buffered and flushed after the current tick, so the call path never waits
 * on the disk; token counts are computed at flush time, off the call path. `close()` and process
 * exit flush synchronously, so no line is lost.
 */
import { closeSync, mkdirSync, openSync, writeSync } from "node:fs";
import { dirname } from "node:path";
import { countTokens } from "../observation/tokens.js";
import type { AuditRecord } from "./types.js";

/** Default location, relative to the working directory. */
export const DEFAULT_AUDIT_PATH = ".toolgate/audit.jsonl";

/**
 * A record whose token counts may be filled in later: when `argument_tokens` or
 * `observation_tokens` is null, the sink counts the matching text when it writes.
 */
export interface PendingAudit {
  record: Omit<AuditRecord, "argument_tokens" | "observation_tokens"> & { argument_tokens: number | null; observation_tokens: number | null };
  /** The call's arguments; serialised and counted when the line is written. */
  arguments: unknown;
  observation_text: string;
}

/** Where audit records go. Implement it to send records elsewhere (a queue, a log shipper). */
export interface AuditSink {
  write(entry: PendingAudit): void;
  /** Writes everything buffered. */
  flush(): void;
  /** Flushes and releases the file. Idempotent. */
  close(): Promise<void>;
}

/** Fills in lazily counted token figures. */
export function completeRecord(entry: PendingAudit): AuditRecord {
  const r = entry.record;
  return {
    ...r,
    argument_tokens: r.argument_tokens ?? countTokens(JSON.stringify(entry.arguments) ?? ""),
    observation_tokens: r.observation_tokens ?? countTokens(entry.observation_text),
  };
}

/** A JSON-lines file sink; the folder is created on first write. */
export function createAuditSink(path: string = DEFAULT_AUDIT_PATH): AuditSink {
  let fd: number | null = null;
  let buffer: PendingAudit[] = [];
  let scheduled = false;
  let closed = false;

  const flush = () => {
    scheduled = false;
    if (buffer.length === 0) return;
    const batch = buffer;
    buffer = [];
    if (fd === null) {
      mkdirSync(dirname(path), { recursive: true });
      fd = openSync(path, "a");
    }
    writeSync(fd, batch.map((e) => JSON.stringify(completeRecord(e)) + "\n").join(""));
  };
  // A process that exits without closing the gateway still gets its last lines written.
  const onExit = () => flush();
  process.on("exit", onExit);

  return {
    write(entry) {
      if (closed) throw new Error(`audit sink ${path} is closed; create a new gateway to keep auditing`);
      buffer.push(entry);
      if (!scheduled) {
        scheduled = true;
        setImmediate(flush);
      }
    },
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

/** An in-memory sink (tests, embedding): keeps completed records in `records`. */
export function createMemoryAuditSink(): AuditSink & { readonly records: AuditRecord[] } {
  const records: AuditRecord[] = [];
  return {
    records,
    write: (entry) => void records.push(completeRecord(entry)),
    flush: () => {},
    close: async () => {},
  };
}
