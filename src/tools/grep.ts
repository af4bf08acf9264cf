/**
 * grep_search: ripgrep with `--json` (seed 000, Listing 5 "grep_search": structured file and
 * line matches without shell quoting hazards). Respects .gitignore (even outside a git
 * repository), skips hidden files, never follows symlinks while walking; results are sorted by
 * path then line, capped per page, with the total and a cursor to continue.
 */
import { spawn } from "node:child_process";
import { countTokens } from "../observation/tokens.js";
import { NoEffectError } from "../schema/errors.js";
import { toolResult, type JsonValue, type ToolResult } from "../schema/types.js";
import { fitCount, textBudget, type BudgetContext } from "./budget.js";
import { plural } from "./text.js";
import type { Workspace } from "./workspace.js";

export interface GrepArgs {
  pattern: string;
  path: string;
  glob?: string;
  /** Matches to skip (the previous page's next_cursor). */
  cursor?: number;
}

export interface GrepLimits {
  /** Matches per page. Default 100. */
  page: number;
  /** o200k tokens of rendered matches per page; the page ends early (exact next_cursor) past it. Default 3000. */
  page_tokens: number;
  /** Characters of a matching line shown. Default 200. */
  text_chars: number;
  /** ripgrep binary. Default "rg". */
  binary: string;
  /** Matching lines read before ripgrep is stopped (memory bound; the total is then a lower bound). Default 20000. */
  max_matches: number;
}

export const DEFAULT_GREP_LIMITS: GrepLimits = { page: 100, page_tokens: 3000, text_chars: 200, binary: "rg", max_matches: 20_000 };

interface Match {
  path: string;
  line: number;
  column: number;
  text: string;
}

/** `ctx` (from the gateway) bounds the page by the call's observation budget as well. */
export async function grepSearch(
  ws: Workspace,
  args: GrepArgs,
  limits: GrepLimits = DEFAULT_GREP_LIMITS,
  signal?: AbortSignal,
  ctx?: BudgetContext,
): Promise<ToolResult<Record<string, JsonValue>>> {
  const path = await ws.resolve(args.path);
  // --sort path: ripgrep emits files in path order (lines in order within each), so the order
  // is stable across pages and only the page's own events need parsing.
  const rgArgs = ["--json", "--sort", "path", "--no-config", "--no-require-git", ...(args.glob ? ["--glob", args.glob] : []), "-e", args.pattern, "--", path];
  const { lines, stderr, code, stopped } = await runRipgrep(limits.binary, rgArgs, limits.max_matches, signal);
  if (code === 2 && lines.length === 0 && !stopped) {
    // ripgrep explains where the regex (or the glob) broke; the model also needs to know how to fix it.
    const reason = /error parsing glob/i.test(stderr) ? "invalid_glob" : /regex parse error|error parsing/i.test(stderr) ? "invalid_pattern" : "search_failed";
    const advice = reason === "invalid_glob" ? `\n${GLOB_ADVICE}` : reason === "invalid_pattern" ? `\n${PATTERN_ADVICE}` : "";
    throw new NoEffectError(`ripgrep refused the search: ${stderr.trim() || "exit status 2"}${advice}`, reason);
  }
  const total = lines.length;
  const cursor = args.cursor ?? 0;
  // Like file_view's offset past the end: an empty page headed "showing 101-100" would read as
  // "no more matches" when the cursor was simply wrong.
  if (total > 0 && cursor >= total) {
    const reach = stopped ? `; the search stops after ${total} matches, so narrow the pattern, path or glob to reach later ones` : "";
    throw new NoEffectError(`cursor ${cursor} is past the last of the ${total} matches; use a cursor from 0 to ${total - 1} (0 is the first page; each page's next_cursor continues it)${reach}`, "cursor_out_of_range");
  }
  const warnings = code === 2 ? stderr.trim().split("\n").slice(0, 3) : [];
  const header = (shown: number) =>
    total === 0
      ? `No matches for ${JSON.stringify(args.pattern)} under ${path}${args.glob ? ` (glob ${args.glob})` : ""}.`
      : `${stopped ? "More than " : ""}${total} matching lines under ${path}${stopped ? " (search stopped there: narrow the pattern, path or glob)" : ""}; showing ${cursor + 1}-${cursor + shown}:`;
  const footer = (next: number | null) => (next === null ? "" : `\n[${total - next} more: call grep_search again with cursor ${next}]`);
  const warn = warnings.length ? `\n[ripgrep warnings: ${warnings.join("; ")}]` : "";
  const frame = { tool: "grep_search", authority: "A0" as const, next: { arguments: { ...args, path, cursor: total } as Record<string, JsonValue>, hint: `${total} more matches` }, tool_truncated: { omitted: total, unit: "matches" } };
  const maxTokens = textBudget(ctx, frame, limits.page_tokens) - countTokens(header(total) + footer(total) + warn) - 2;
  const page = fitPage(parseMatches(lines.slice(cursor, cursor + limits.page), limits.text_chars), maxTokens);
  const nextCursor = cursor + page.length < total ? cursor + page.length : null;
  const output: Record<string, JsonValue> = {
    matches: page.map((m) => ({ ...m })),
    total,
    total_is_lower_bound: stopped,
    cursor,
    next_cursor: nextCursor,
    ...(warnings.length ? { warnings } : {}),
  };
  const body = page.map(renderMatch).join("\n");
  return toolResult(output, {
    text: `${header(page.length)}${body ? `\n${body}` : ""}${footer(nextCursor)}${warn}`,
    ...(nextCursor === null ? {} : { next: { arguments: { ...args, path, cursor: nextCursor } as Record<string, JsonValue>, hint: plural(total - nextCursor, "more match", "more matches") } }),
    ...(nextCursor === null ? {} : { truncated: { omitted: total - nextCursor, unit: total - nextCursor === 1 ? "match" : "matches" } }),
  });
}

const PATTERN_ADVICE =
  "pattern is a Rust regex: to find any of ( ) [ ] { } . * + ? | ^ $ \\ as plain text, put a backslash before it (foo\\( finds the text foo(), then call grep_search again.";

const GLOB_ADVICE =
  "glob is a gitignore-style file name pattern (*.ts, src/**/*.py, *.{js,ts}): close every { and [, or write a literal { or [ as [{] or [[], then call grep_search again.";

const renderMatch = (m: Match) => `${m.path}:${m.line}:${m.column}: ${m.text}`;

/** The leading matches whose rendering fits `maxTokens` (at least one, so paging never stalls). */
function fitPage(page: Match[], maxTokens: number): Match[] {
  let tokens = 0;
  for (let i = 0; i < page.length; i++) {
    tokens += countTokens(renderMatch(page[i]!)) + 1;
    if (i > 0 && tokens > maxTokens) return page.slice(0, fitCount(i, (k) => page.slice(0, k).map(renderMatch).join("\n"), maxTokens));
  }
  return page.slice(0, fitCount(page.length, (k) => page.slice(0, k).map(renderMatch).join("\n"), maxTokens));
}

function runRipgrep(binary: string, args: string[], maxMatches: number, signal?: AbortSignal): Promise<{ lines: string[]; stderr: string; code: number | null; stopped: boolean }> {
  return new Promise((done, fail) => {
    const child = spawn(binary, args, { stdio: ["ignore", "pipe", "pipe"], signal });
    const lines: string[] = [];
    let rest = "";
    let stderr = "";
    let stopped = false;
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
      if (stopped) return;
      const parts = (rest + chunk).split("\n");
      rest = parts.pop()!;
      // Only match events matter; begin/end/summary events are skipped unparsed.
      for (const p of parts) if (p.startsWith('{"type":"match"')) lines.push(p);
      if (lines.length > maxMatches) {
        stopped = true;
        lines.length = maxMatches;
        rest = "";
        child.kill("SIGKILL");
      }
    });
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
    child.on("error", (err: NodeJS.ErrnoException) =>
      fail(err.code === "ENOENT" ? new NoEffectError(`grep_search needs ripgrep, and ${binary} was not found; install it (apt-get install -y ripgrep)`, "search_unavailable") : err),
    );
    child.on("close", (code) => {
      if (!stopped && rest.startsWith('{"type":"match"')) lines.push(rest);
      done({ lines, stderr, code, stopped });
    });
  });
}

interface RgText {
  text?: string;
  bytes?: string;
}
interface RgMatch {
  data: { path: RgText; lines: RgText; line_number: number; submatches: { start: number }[] };
}

const asText = (t: RgText) => t.text ?? Buffer.from(t.bytes ?? "", "base64").toString("utf8");

function parseMatches(lines: string[], textChars: number): Match[] {
  return lines.map((l) => {
    const { data } = JSON.parse(l) as RgMatch;
    const lineText = asText(data.lines).replace(/\r?\n$/, "");
    const byteStart = data.submatches[0]?.start ?? 0;
    // ripgrep reports byte offsets; the model counts characters.
    const column = Buffer.from(lineText, "utf8").subarray(0, byteStart).toString("utf8").length + 1;
    return { path: asText(data.path), line: data.line_number, column, text: cut(lineText, column, textChars) };
  });
}

/** A long line is cut to a window that starts a little before the match. */
function cut(text: string, column: number, max: number): string {
  if (text.length <= max) return text;
  const start = Math.max(0, Math.min(column - 1 - Math.floor(max / 4), text.length - max));
  return `${start > 0 ? "…" : ""}${text.slice(start, start + max)}${start + max < text.length ? "…" : ""}`;
}
