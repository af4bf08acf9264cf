/**
 * The one reader of an audit trail (`AuditRecord`, one JSON object per line, as `audit.ts`
 * writes it), behind `toolgate stats` and the measured `breakeven`. A broken line never stops
 * the reading: it is kept with its 1-based line number and why, and the rest is used. Blank
 * lines are counted apart, and so are the lines of reads answered beside the pipeline (`kind:
 * "read"`, `ReadAuditRecord`), which are no call. What makes a parsed line a usable record is the caller's: each
 * reads the fields it needs and says, in its own words, what was wrong.
 */

/** A line that was not a usable audit record. */
export interface BrokenLine {
  /** 1-based line number in the trail. */
  line: number;
  reason: string;
}

/** How a caller reads one line: the record it needs from the parsed value, or why there is none. */
export interface AuditLineReader<T, R = never> {
  /** The record of one parsed line, or the reason it is not one. */
  record(value: unknown, line: number): T | string;
  /** The record of one read's line (`kind: "read"`), or the reason it is not one; absent: read lines are only counted. */
  read?(value: Record<string, unknown>, line: number): R | string;
  /** The reason for a line that is not JSON, from the parser's message. */
  notJson(parserMessage: string): string;
}

export interface AuditLines<T, R = never> {
  records: T[];
  /** The read lines' records, when the reader reads them (`AuditLineReader.read`). */
  readRecords: R[];
  /** Every broken line, in order. */
  broken: BrokenLine[];
  /** Lines that were empty or blanks only (not broken). */
  blank: number;
  /** Lines of reads answered beside the pipeline (`kind: "read"`), which no call reader is given. */
  reads: number;
}

/** Reads JSON Lines text of audit records with `reader`. */
export function readAuditLines<T, R = never>(text: string, reader: AuditLineReader<T, R>): AuditLines<T, R> {
  const records: T[] = [];
  const readRecords: R[] = [];
  const broken: BrokenLine[] = [];
  let blank = 0;
  let reads = 0;
  text.split("\n").forEach((raw, i) => {
    const line = i + 1;
    const body = raw.trim();
    if (body === "") {
      blank++;
      return;
    }
    let parsed: unknown;
    try {
      parsed = JSON.parse(body);
    } catch (err) {
      broken.push({ line, reason: reader.notJson((err as Error).message) });
      return;
    }
    if (typeof parsed === "object" && parsed !== null && (parsed as { kind?: unknown }).kind === "read") {
      reads++;
      const read = reader.read?.(parsed as Record<string, unknown>, line);
      if (typeof read === "string") broken.push({ line, reason: read });
      else if (read !== undefined) readRecords.push(read);
      return;
    }
    const record = reader.record(parsed, line);
    if (typeof record === "string") broken.push({ line, reason: record });
    else records.push(record);
  });
  return { records, readRecords, broken, blank, reads };
}
