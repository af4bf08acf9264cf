/**
 * Shared CLI plumbing: commands parse and print around functions that return data
 * (ARCHITECTURE.md, cli/). Usage and input errors exit 2 with one clear line, never a stack trace.
 */
import { readFileSync, readSync } from "node:fs";
import { join } from "node:path";
import { ToolgateError } from "../core/errors.js";
import { escapeUntrusted, jsonForDisplay } from "../observation/escape.js";

/** Exit codes shared by every command. */
export const EXIT = { ok: 0, findings: 1, usage: 2 } as const;

/** Thrown inside a command to stop with a message and an exit code (default 2, usage/input). */
export class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode: number = EXIT.usage,
  ) {
    super(message);
    this.name = "CliError";
  }
}

/**
 * Everything readable from `fd` up to end of file. Standard input may be a non-blocking pipe
 * (Node makes it one once anything touches process.stdin, as the ESM facade of node:process
 * does), where readFileSync fails with EAGAIN as soon as the writer is slower than the reader
 * (`curl … | toolgate lint -`); this waits for the data instead.
 */
export function readAllSync(fd: number): string {
  const chunks: Buffer[] = [];
  const buf = Buffer.alloc(1 << 16);
  const pause = new Int32Array(new SharedArrayBuffer(4));
  for (;;) {
    let n: number;
    try {
      n = readSync(fd, buf, 0, buf.length, null);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "EAGAIN") throw err;
      Atomics.wait(pause, 0, 0, 5);
      continue;
    }
    if (n === 0) return Buffer.concat(chunks).toString("utf8");
    chunks.push(Buffer.from(buf.subarray(0, n)));
  }
}

/** Reads a file argument; `-` reads standard input. */
export function readInput(file: string): string {
  try {
    return file === "-" ? readAllSync(0) : readFileSync(file, "utf8");
  } catch (err) {
    const e = err as NodeJS.ErrnoException;
    const why =
      e.code === "ENOENT"
        ? "no such file"
        : e.code === "EISDIR"
          ? `it is a directory; pass a file (e.g. ${join(file, "catalog.json")}) or - for standard input`
          : e.message;
    throw new CliError(`cannot read ${file === "-" ? "standard input" : file}: ${why}`);
  }
}

/** Parses JSON with an error that names the file and position. */
export function parseJson(text: string, source: string): unknown {
  try {
    return JSON.parse(text);
  } catch (err) {
    throw new CliError(`${source} is not valid JSON: ${(err as Error).message}`);
  }
}

/** Prints `value` as JSON; control, bidi and invisible characters in its strings are `\uXXXX` escapes (the same JSON
 * value). */
export function printJson(value: unknown): void {
  process.stdout.write(jsonForDisplay(value, 2) + "\n");
}

/** An error message may quote an id or name from the store or the input: printed escaped. */
const shown = (message: string) => escapeUntrusted(message, { newlines: true });

/** Turns any error thrown by a command into one stderr line and an exit code. */
export function reportError(err: unknown): number {
  if (err instanceof CliError) {
    process.stderr.write(`toolgate: ${shown(err.message)}\n`);
    return err.exitCode;
  }
  if (err instanceof ToolgateError) {
    process.stderr.write(`toolgate: ${shown(err.message)} [${err.code}]\n`);
    return EXIT.usage;
  }
  const e = err as Error;
  process.stderr.write(`toolgate: unexpected error: ${shown(e?.message ?? String(err))}\n`);
  if (process.env.TOOLGATE_DEBUG) process.stderr.write(`${e?.stack ?? ""}\n`);
  return 70;
}
