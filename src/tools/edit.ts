/**
 * file_edit: exact replacement of a block (docs/schemas.md, TG008). old_str must match exactly one
 * block unless allow_multiple; otherwise the file is left unchanged and the error names the
 * match count (and, for 0, the closest near-match; for several, the line of each). The write is
 * atomic and keeps the mode, the CRLF line endings and the final newline as they were.
 */
import type { Stats } from "node:fs";
import { NoEffectError } from "../core/errors.js";
import { toolResult, type ProbeOutcome, type ToolResult } from "../core/tool.js";
import { type JsonValue } from "../core/json.js";
import { writeAtomically, type HeldName } from "./atomic.js";
import { readHeld, specialKind } from "./fs/read.js";
import { nearestMatch } from "./nearmatch.js";
import { lineNumbers, lineStart, lineStats, occurrences, versionOf, yieldLoop } from "./scan.js";
import { binaryMarker, linesFromOffset, numbered } from "./text.js";
import type { Workspace } from "./workspace.js";

export interface EditArgs {
  path: string;
  old_str: string;
  new_str: string;
  allow_multiple?: boolean;
  expected_version?: string;
}

export interface EditLimits {
  /** Largest file file_edit reads and rewrites, bytes. Default 16 MiB. */
  file_bytes: number;
}

export const DEFAULT_EDIT_LIMITS: EditLimits = { file_bytes: 16 * 1024 * 1024 };

const strict = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });
const SNIPPET_CONTEXT = 3;
const SNIPPET_MAX_LINES = 12;
const LISTED_MATCHES = 20;
/** Pieces joined at once when many blocks are replaced. */
const REPLACE_GROUP = 20_000;

/**
 * `signal`, once aborted, stops the edit before it writes (the rename is the one step that
 * changes the file, so a cancelled edit leaves the file whole, old or new, as a crash would).
 */
export async function editFile(
  ws: Workspace,
  args: EditArgs,
  limits: EditLimits = DEFAULT_EDIT_LIMITS,
  signal?: AbortSignal,
): Promise<ToolResult<Record<string, JsonValue>>> {
  const opened = await ws.open(args.path, "write");
  try {
    const { bytes, stat, at } = await readRegular(opened, limits);
    return await edit(opened.path, bytes, stat, at, args, signal);
  } finally {
    await opened.close();
  }
}

async function edit(
  path: string,
  bytes: Buffer,
  stat: Stats,
  held: HeldName,
  args: EditArgs,
  signal?: AbortSignal,
): Promise<ToolResult<Record<string, JsonValue>>> {
  const version = await versionOf(bytes);
  if (args.expected_version && args.expected_version !== version) {
    throw new NoEffectError(
      `expected_version ${args.expected_version} does not match ${path}, which is now at version ${version}: the file changed since it was viewed; view it again with file_view and retry with the new version`,
      "version_mismatch",
    );
  }
  if (binaryMarker(bytes) !== -1)
    throw new NoEffectError(`${path} is a binary file; file_edit edits text only`, "binary_file");
  let raw: string;
  try {
    raw = strict.decode(bytes);
  } catch {
    throw new NoEffectError(
      `${path} is not valid UTF-8, so replacing text could corrupt it; edit it with bash_execute (e.g. sed) instead`,
      "not_utf8",
    );
  }
  // A CRLF file is edited in LF form (file_view shows lines without "\r") and written back as CRLF.
  const crlf = (await lineStats(raw)).endings === "CRLF";
  const text = crlf ? raw.replaceAll("\r\n", "\n") : raw;
  const oldStr = crlf ? args.old_str.replaceAll("\r\n", "\n") : args.old_str;
  const newStr = crlf ? args.new_str.replaceAll("\r\n", "\n") : args.new_str;

  const starts = await occurrences(text, oldStr);
  if (starts.length === 0) throw new NoEffectError(await noMatchMessage(path, text, oldStr), "no_match");
  if (starts.length > 1 && !args.allow_multiple) {
    const lines = await lineNumbers(text, starts.slice(0, LISTED_MATCHES));
    const more = starts.length > LISTED_MATCHES ? ` and ${starts.length - LISTED_MATCHES} more` : "";
    throw new NoEffectError(
      `old_str matches ${starts.length} blocks in ${path} (starting at lines ${lines.join(", ")}${more}); the file is unchanged. Include more surrounding lines in old_str so it matches exactly one block, or set allow_multiple to true to replace all ${starts.length}`,
      "multiple_matches",
    );
  }

  let edited = await replaceAt(text, starts, oldStr.length, newStr);
  // The final newline stays as it was: an edit that swallowed it gets it back.
  if (/\n$/.test(text) && edited.length > 0 && !edited.endsWith("\n")) edited += "\n";
  const out = crlf ? edited.replaceAll("\n", "\r\n") : edited;
  const outBytes = Buffer.from(out, "utf8");
  signal?.throwIfAborted();
  await writeAtomically(held, path, outBytes, stat);

  const newVersion = await versionOf(outBytes);
  // Where the change landed in the new text: shift each start by the growth of earlier replacements.
  const delta = newStr.length - oldStr.length;
  const lastStart = starts[starts.length - 1]! + delta * (starts.length - 1);
  const [firstLine, lastAt] = (await lineNumbers(edited, [starts[0]!, lastStart + Math.max(newStr.length - 1, 0)])) as [
    number,
    number,
  ];
  const lastLine = Math.max(firstLine, lastAt);
  const snippet = await snippetAround(edited, firstLine, Math.min(lastLine, firstLine + SNIPPET_MAX_LINES - 1));
  const total = (await lineStats(edited)).count;
  const output = {
    path,
    version: newVersion,
    previous_version: version,
    replacements: starts.length,
    changed_lines: { start: firstLine, end: lastLine },
    total_lines: total,
    snippet,
  };
  return toolResult(output, {
    text: `Edited ${path}: ${starts.length} replacement${starts.length === 1 ? "" : "s"}, lines ${firstLine}-${lastLine} changed, now ${total} lines · version ${newVersion}\n${snippet}`,
    state: { path, version: newVersion },
  });
}

async function readRegular(
  opened: Awaited<ReturnType<Workspace["open"]>>,
  limits: EditLimits,
): Promise<{ bytes: Buffer; stat: Stats; at: HeldName }> {
  const path = opened.path;
  if (opened.kind === "missing") {
    const why = opened.notDir ? " (a folder on the way is a file)" : "";
    throw new NoEffectError(
      `path ${path} does not exist${why}; file_edit changes existing files (create one with bash_execute, e.g. printf '...' > ${path})`,
      "not_found",
    );
  }
  if (!opened.stat.isFile() || opened.parent === null) {
    const what = opened.stat.isDirectory() ? "a directory" : (specialKind(opened.stat) ?? "not a regular file");
    throw new NoEffectError(`path ${path} is ${what}, not a regular file; file_edit edits text files`, "not_a_file");
  }
  const read = await readHeld(opened.fd, opened.stat, limits.file_bytes, path);
  if ("tooLarge" in read) {
    throw new NoEffectError(
      `${path} is ${read.tooLarge} bytes, more than file_edit rewrites (${limits.file_bytes}); change it with bash_execute (e.g. sed -i), or ask the operator to raise limits.edit.file_bytes`,
      "too_large",
    );
  }
  return { bytes: read.bytes, stat: opened.stat, at: opened.parent };
}

/** `text` with the `length` characters at each of `starts` (ascending, non-overlapping) replaced by `replacement`. */
async function replaceAt(text: string, starts: number[], length: number, replacement: string): Promise<string> {
  // Joined a group at a time: one join of millions of pieces would hold the event loop.
  const groups: string[] = [];
  let parts: string[] = [];
  let from = 0;
  for (const s of starts) {
    parts.push(text.slice(from, s), replacement);
    from = s + length;
    if (parts.length >= REPLACE_GROUP) {
      groups.push(parts.join(""));
      parts = [];
      await yieldLoop();
    }
  }
  parts.push(text.slice(from));
  groups.push(parts.join(""));
  return groups.join("");
}

async function noMatchMessage(path: string, text: string, oldStr: string): Promise<string> {
  const base = `old_str matches 0 blocks in ${path}; the file is unchanged.`;
  const near = await nearestMatch(text, oldStr);
  if (near !== null && "skipped" in near) {
    return `${base} No near-match is named: ${near.skipped}. Find the exact text with grep_search or file_view and copy it, including indentation.`;
  }
  if (near === null)
    return `${base} No similar block was found; view the file with file_view and copy the exact text, including indentation.`;
  const how =
    near.differs === "content"
      ? `a similar block (similarity ${near.similarity})`
      : `the same text with different ${near.differs}`;
  const shown = await snippetAround(text, near.line, near.line + Math.min(near.lines, 5) - 1, 0);
  return `${base} Closest near-match: ${how} at line ${near.line}:\n${shown}\nCopy the exact text from the file (file_view shows it) and retry.`;
}

/** Numbered lines from..to with `context` lines either side. */
async function snippetAround(text: string, from: number, to: number, context = SNIPPET_CONTEXT): Promise<string> {
  const first = Math.max(1, from - context);
  const lines = linesFromOffset(text, await lineStart(text, first), to + context - first + 1);
  return lines.length === 0 ? "(file is now empty)" : numbered(lines, first);
}

/**
 * Settles an IN_DOUBT edit by reading the file (docs/idempotency.md: a reconciliation
 * probe). The edit ran only if old_str matched, so: old_str gone → applied; old_str still there
 * and a non-empty new_str absent → not applied; anything else (new_str contains old_str, or an
 * empty new_str with old_str present) cannot be told apart → unknown, for a person to settle.
 */
export async function probeEdit(
  ws: Workspace,
  args: EditArgs,
  limits: EditLimits = DEFAULT_EDIT_LIMITS,
): Promise<ProbeOutcome> {
  const opened = await ws.open(args.path, "read");
  const path = opened.path;
  let text: string;
  let version: string;
  try {
    const { bytes } = await readRegular(opened, limits);
    text = strict.decode(bytes).replaceAll("\r\n", "\n");
    version = await versionOf(bytes);
  } catch (err) {
    return { outcome: "unknown", detail: `could not read ${path}: ${(err as Error).message}` };
  } finally {
    await opened.close();
  }
  const oldStr = args.old_str.replaceAll("\r\n", "\n");
  const newStr = args.new_str.replaceAll("\r\n", "\n");
  if (!text.includes(oldStr)) return { outcome: "applied", result: { path, version, probed: true } };
  if (newStr.length > 0 && !newStr.includes(oldStr) && !text.includes(newStr)) return { outcome: "not_applied" };
  return { outcome: "unknown", detail: `old_str is still in ${path} and new_str cannot tell whether the edit ran` };
}
