/**
 * file_view: a bounded window of a text file (docs/envelope.md): numbered lines
 * from 1, the total line count, the exact offset to continue, long lines cut with a marker,
 * binary files refused, invalid UTF-8 shown as U+FFFD, a directory answered with a listing.
 */
import { readdir } from "node:fs/promises";
import { countTokens } from "../observation/tokens.js";
import { fitCount, textBudget, type BudgetContext } from "./budget.js";
import { NoEffectError } from "../core/errors.js";
import { toolResult, type ToolContext, type ToolResult } from "../core/tool.js";
import { type JsonValue } from "../core/json.js";
import { readHeld, specialKind } from "./fs/read.js";
import { at } from "./fs/sys.js";
import { decodeLines, lineStart, lineStats, versionOf } from "./scan.js";
import { binaryMarker, numbered, plural } from "./text.js";
import type { Workspace } from "./workspace.js";

export interface ViewArgs {
  path: string;
  offset: number;
  limit: number;
}

export interface ViewLimits {
  /** Characters shown of one line before it is cut with a marker. Default 1000. */
  line_chars: number;
  /** o200k tokens of numbered text per call; the window ends early (with an exact next offset) past it. Default 5000.
   * */
  window_tokens: number;
  /** Largest file file_view reads, bytes. Default 64 MiB. */
  file_bytes: number;
}

export const DEFAULT_VIEW_LIMITS: ViewLimits = { line_chars: 1000, window_tokens: 5000, file_bytes: 64 * 1024 * 1024 };

// A BOM is not shown (decodeLines drops it, as editors hide it); file_edit keeps it in place.

/**
 * `ctx` (from the gateway) bounds the window by the call's observation budget as well; its
 * signal, once aborted, stops the read between its steps (the file is closed, nothing is decoded).
 */
export async function viewPath(
  ws: Workspace,
  args: ViewArgs,
  limits: ViewLimits = DEFAULT_VIEW_LIMITS,
  ctx?: BudgetContext & Partial<Pick<ToolContext, "signal">>,
): Promise<ToolResult<Record<string, JsonValue>>> {
  const opened = await ws.open(args.path, "read");
  const path = opened.path;
  try {
    if (opened.kind === "missing") {
      throw new NoEffectError(
        `path ${path} does not exist${opened.notDir ? " (a folder on the way is a file)" : ""}; list its directory with file_view or find files with grep_search`,
        "not_found",
      );
    }
    if (opened.stat.isDirectory()) return await listDirectory(path, opened.fd, args, ctx);
    const special = specialKind(opened.stat);
    if (special !== undefined) {
      // Never opened: a FIFO would block the read forever, a device could act on the open itself.
      throw new NoEffectError(
        `path ${path} is ${special}, not a regular file or directory; file_view reads text files and does not open pipes, sockets or devices`,
        "not_a_file",
      );
    }
    const read = await readHeld(opened.fd, opened.stat, limits.file_bytes, path);
    if ("tooLarge" in read) {
      throw new NoEffectError(
        `${path} is ${read.tooLarge} bytes, more than file_view reads (${limits.file_bytes}); search it with grep_search or read a part with bash_execute (e.g. sed -n '1,100p')`,
        "too_large",
      );
    }
    const { bytes } = read;
    ctx?.signal?.throwIfAborted();
    const nul = binaryMarker(bytes);
    if (nul !== -1) {
      throw new NoEffectError(
        `${path} is a binary file (NUL byte at offset ${nul}, ${bytes.length} bytes); file_view shows text only: inspect it with bash_execute, e.g. \`file ${path}\` or \`xxd ${path} | head\``,
        "binary_file",
      );
    }
    return await window(path, bytes, await versionOf(bytes), args, limits, ctx);
  } finally {
    await opened.close();
  }
}

async function window(
  path: string,
  bytes: Buffer,
  version: string,
  args: ViewArgs,
  limits: ViewLimits,
  ctx: BudgetContext | undefined,
) {
  // A 64 MiB file holds millions of lines: counting them and finding the offset work on the
  // bytes and yield as they go, and only the window's lines are decoded.
  const { count: total, endings } = await lineStats(bytes);
  if (total === 0 ? args.offset > 1 : args.offset > total) {
    throw new NoEffectError(
      `offset ${args.offset} is past the end of ${path}, which has ${total} lines; use an offset from 1 to ${Math.max(total, 1)}`,
      "offset_out_of_range",
    );
  }
  const header = (last: number) =>
    total === 0
      ? `${path} is empty (0 lines)`
      : `${path} · lines ${args.offset}-${last} of ${total}${endings === "none" ? "" : ` · ${endings} line endings`}`;
  const footer = (last: number) =>
    last >= total
      ? total === 0
        ? ""
        : "\n[end of file]"
      : `\n[${plural(total - last, "more line")}: call file_view with offset ${last + 1}]`;
  // The version is not repeated in the text: the gateway shows it on the state line.
  const frame = {
    tool: "file_view",
    authority: "A0" as const,
    state: { path, version },
    next: { arguments: { path, offset: total, limit: args.limit }, hint: plural(total, "more line") },
  };
  const maxTokens = textBudget(ctx, frame, limits.window_tokens) - countTokens(header(total) + footer(1)) - 2;
  const shown: string[] = [];
  let tokens = 0;
  let cutLines = 0;
  for (let line of decodeLines(bytes, await lineStart(bytes, args.offset), args.limit)) {
    if (line.length > limits.line_chars) {
      line = `${line.slice(0, limits.line_chars)}… [line cut: ${plural(line.length - limits.line_chars, "more character")}]`;
      cutLines++;
    }
    // The window ends on its token bound, so the gateway never cuts it in the middle; at least
    // one line is always shown, so a continuation never stalls.
    const cost = countTokens(line) + 2; // + the number and the tab
    if (shown.length > 0 && tokens + cost > maxTokens) break;
    shown.push(line);
    tokens += cost;
  }
  shown.length = fitCount(shown.length, (k) => numbered(shown.slice(0, k), args.offset), maxTokens);
  const last = args.offset + shown.length - 1;
  const nextOffset = last < total ? last + 1 : null;
  const content = numbered(shown, args.offset);
  const output = {
    path,
    kind: "file",
    version,
    total_lines: total,
    first_line: args.offset,
    last_line: last,
    next_offset: nextOffset,
    line_endings: endings,
    lines_cut: cutLines,
    content,
  };
  return toolResult(output, {
    text: `${header(last)}\n${content}${footer(last)}`,
    state: { path, version },
    ...(nextOffset === null
      ? {}
      : {
          next: { arguments: { path, offset: nextOffset, limit: args.limit }, hint: plural(total - last, "more line") },
        }),
  });
}

async function listDirectory(path: string, fd: number, args: ViewArgs, ctx: BudgetContext | undefined) {
  // Lists the directory the walk holds, not whatever its path names by now.
  const dirents = await readdir(at(fd), { withFileTypes: true });
  const entries = dirents
    .map((d) => d.name + (d.isDirectory() ? "/" : d.isSymbolicLink() ? "@" : ""))
    .sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  if (entries.length > 0 && args.offset > entries.length) {
    throw new NoEffectError(
      `offset ${args.offset} is past the end of the listing of ${path}, which has ${entries.length} entries; use an offset from 1 to ${entries.length}`,
      "offset_out_of_range",
    );
  }
  const header = (last: number) =>
    `${path} is a directory with ${entries.length} entries (/ marks a directory, @ a symlink)${last >= args.offset ? `; entries ${args.offset}-${last}` : ""}:`;
  const footer = (last: number) =>
    last >= entries.length
      ? ""
      : `\n[${plural(entries.length - last, "more entry", "more entries")}: call file_view with offset ${last + 1}]`;
  const frame = {
    tool: "file_view",
    authority: "A0" as const,
    next: {
      arguments: { path, offset: entries.length, limit: args.limit },
      hint: plural(entries.length, "more entry", "more entries"),
    },
  };
  const maxTokens = textBudget(ctx, frame, Infinity) - countTokens(header(entries.length) + footer(1)) - 2;
  const shown: string[] = [];
  let tokens = 0;
  for (const entry of entries.slice(args.offset - 1, args.offset - 1 + args.limit)) {
    // Like a file window: ends on the budget, at least one entry, exact next offset.
    tokens += countTokens(entry) + 1;
    if (shown.length > 0 && tokens > maxTokens) break;
    shown.push(entry);
  }
  shown.length = fitCount(shown.length, (k) => shown.slice(0, k).join("\n"), maxTokens);
  const last = args.offset + shown.length - 1;
  const nextOffset = last < entries.length ? last + 1 : null;
  return toolResult(
    {
      path,
      kind: "directory",
      total_entries: entries.length,
      first_entry: args.offset,
      next_offset: nextOffset,
      entries: shown,
    },
    {
      text: `${header(last)}\n${shown.join("\n")}${footer(last)}`,
      ...(nextOffset === null
        ? {}
        : {
            next: {
              arguments: { path, offset: nextOffset, limit: args.limit },
              hint: plural(entries.length - last, "more entry", "more entries"),
            },
          }),
    },
  );
}
