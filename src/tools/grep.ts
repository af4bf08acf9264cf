/**
 * grep_search: ripgrep with `--json` (structured file and
 * line matches without shell quoting hazards). Respects .gitignore (even outside a git
 * repository), skips hidden files, never follows symlinks while walking; results are sorted by
 * path then line, capped per page, with the total and a cursor to continue.
 *
 * ripgrep runs inside bash_execute's envelope (the same user, mounts and limits; the workspace
 * read-only): a symlink swapped in during its walk finds no outside to lead to, and hidden paths
 * (toolgate's state) are empty there, whatever glob or `.ignore` file whitelists them. Its output
 * is read in bounded memory (grep-events.ts); a match on a line longer than `line_bytes` is still
 * reported, its text cut around the match with a marker.
 */
import { accessSync, constants } from "node:fs";
import { delimiter, isAbsolute, join } from "node:path";
import { countTokens } from "../observation/tokens.js";
import { NoEffectError } from "../core/errors.js";
import { toolResult, type ToolContext, type ToolResult } from "../core/tool.js";
import { type JsonValue } from "../core/json.js";
import { checkedLimits, DEFAULT_BASH_LIMITS, envelopePaths, launcherChooser, type CallGate } from "./bash.js";
import { fitCount, textBudget, type BudgetContext } from "./budget.js";
import { RgEventReader, type Match } from "./grep-events.js";
import { createBubblewrap } from "./sandbox/bubblewrap.js";
import type { EnvelopeLimits, SandboxLauncher } from "./sandbox/launcher.js";
import { startInEnvelope } from "./sandbox/run.js";
import { plural } from "./text.js";
import { progressTicker, seconds } from "./progress.js";
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
  /** Matching lines counted before ripgrep is stopped (the total is then a lower bound). Default 20000. */
  max_matches: number;
  /** Bytes of one ripgrep event read whole; a match on a longer line is streamed and shown cut. Default 1 MiB. */
  line_bytes: number;
  /** grep_search calls running at once per catalog (each starts an envelope); one more is refused at once
   * (too_many_calls). Default 4. */
  max_concurrent: number;
}

export const DEFAULT_GREP_LIMITS: GrepLimits = {
  page: 100,
  page_tokens: 3000,
  text_chars: 200,
  binary: "rg",
  max_matches: 20_000,
  line_bytes: 1024 * 1024,
  max_concurrent: 4,
};

/** The grep limits an operator gave, merged over the defaults and checked like the bash limits (an Error naming the
 * field). */
export function grepLimits(given: Partial<GrepLimits> = {}): GrepLimits {
  return checkedLimits(
    "grep",
    DEFAULT_GREP_LIMITS,
    given,
    new Set(["page", "page_tokens", "text_chars", "max_matches", "line_bytes", "max_concurrent"]),
  );
}

/** Where ripgrep runs: the catalog's envelope (chosen once, shared with bash_execute) and its limits. */
export interface GrepEnvelope {
  choose: () => Promise<SandboxLauncher>;
  limits: EnvelopeLimits;
  /** The ripgrep run's time bound. Default 60 s (the tool's own). */
  timeout_ms?: number;
  /** The catalog's cap on grep_search calls at once (limits.grep.max_concurrent); none when absent. */
  gate?: CallGate;
}

let defaultEnvelope: GrepEnvelope | undefined;
/** bubblewrap from PATH, for callers that do not pass the catalog's envelope. */
const envelopeOrDefault = (e?: GrepEnvelope): GrepEnvelope =>
  e ?? (defaultEnvelope ??= { choose: launcherChooser(createBubblewrap(), false), limits: DEFAULT_BASH_LIMITS });

/** `ctx` (from the gateway) bounds the page by the call's observation budget as well. */
export async function grepSearch(
  ws: Workspace,
  args: GrepArgs,
  limits: GrepLimits = DEFAULT_GREP_LIMITS,
  signal?: AbortSignal,
  ctx?: BudgetContext & Pick<ToolContext, "progress">,
  envelope?: GrepEnvelope,
): Promise<ToolResult<Record<string, JsonValue>>> {
  const path = await ws.resolve(args.path);
  const binary = findBinary(limits.binary);
  // --sort path: ripgrep emits files in path order (lines in order within each), so the order
  // is stable across pages and only the page's own events need parsing.
  const rgArgs = [
    binary,
    "--json",
    "--sort",
    "path",
    "--no-config",
    "--no-require-git",
    ...(args.glob ? ["--glob", args.glob] : []),
    "-e",
    args.pattern,
    "--",
    path,
  ];
  const cursor = args.cursor ?? 0;
  const {
    matches: lines,
    total: counted,
    stderr,
    code,
    stopped,
  } = await runRipgrep(ws, rgArgs, { ...limits, first: cursor }, envelopeOrDefault(envelope), signal, ctx?.progress);
  if (code === 2 && counted === 0 && !stopped) {
    // ripgrep explains where the regex (or the glob) broke; the model also needs to know how to fix it.
    const reason = /error parsing glob/i.test(stderr)
      ? "invalid_glob"
      : /regex parse error|error parsing/i.test(stderr)
        ? "invalid_pattern"
        : "search_failed";
    const advice =
      reason === "invalid_glob" ? `\n${GLOB_ADVICE}` : reason === "invalid_pattern" ? `\n${PATTERN_ADVICE}` : "";
    throw new NoEffectError(`ripgrep refused the search: ${stderr.trim() || "exit status 2"}${advice}`, reason);
  }
  const total = counted;
  // Like file_view's offset past the end: an empty page headed "showing 101-100" would read as
  // "no more matches" when the cursor was simply wrong.
  if (total > 0 && cursor >= total) {
    const reach = stopped
      ? `; the search stops after ${total} matches, so narrow the pattern, path or glob to reach later ones`
      : "";
    throw new NoEffectError(
      `cursor ${cursor} is past the last of the ${total} matches; use a cursor from 0 to ${total - 1} (0 is the first page; each page's next_cursor continues it)${reach}`,
      "cursor_out_of_range",
    );
  }
  const warnings = code === 2 ? stderr.trim().split("\n").slice(0, 3) : [];
  const header = (shown: number) =>
    total === 0
      ? `No matches for ${JSON.stringify(args.pattern)} under ${path}${args.glob ? ` (glob ${args.glob})` : ""}.`
      : `${stopped ? "More than " : ""}${total} matching lines under ${path}${stopped ? " (search stopped there: narrow the pattern, path or glob)" : ""}; showing ${cursor + 1}-${cursor + shown}:`;
  const footer = (next: number | null) =>
    next === null ? "" : `\n[${total - next} more: call grep_search again with cursor ${next}]`;
  const warn = warnings.length ? `\n[ripgrep warnings: ${warnings.join("; ")}]` : "";
  const frame = {
    tool: "grep_search",
    authority: "A0" as const,
    next: { arguments: { ...args, path, cursor: total } as Record<string, JsonValue>, hint: `${total} more matches` },
    tool_truncated: { omitted: total, unit: "matches" },
  };
  const maxTokens = textBudget(ctx, frame, limits.page_tokens) - countTokens(header(total) + footer(total) + warn) - 2;
  const page = fitPage(lines, maxTokens);
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
    ...(nextCursor === null
      ? {}
      : {
          next: {
            arguments: { ...args, path, cursor: nextCursor } as Record<string, JsonValue>,
            hint: plural(total - nextCursor, "more match", "more matches"),
          },
        }),
    ...(nextCursor === null
      ? {}
      : { truncated: { omitted: total - nextCursor, unit: total - nextCursor === 1 ? "match" : "matches" } }),
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
    if (i > 0 && tokens > maxTokens)
      return page.slice(
        0,
        fitCount(i, (k) => page.slice(0, k).map(renderMatch).join("\n"), maxTokens),
      );
  }
  return page.slice(
    0,
    fitCount(page.length, (k) => page.slice(0, k).map(renderMatch).join("\n"), maxTokens),
  );
}

/** The binary as found on PATH (or as given, when absolute), or a refusal saying what to install. */
function findBinary(binary: string): string {
  const candidates = isAbsolute(binary)
    ? [binary]
    : (process.env.PATH ?? "/usr/bin:/bin")
        .split(delimiter)
        .filter(Boolean)
        .map((d) => join(d, binary));
  for (const c of candidates) {
    try {
      accessSync(c, constants.X_OK);
      return c;
    } catch {
      // next
    }
  }
  throw new NoEffectError(
    `grep_search needs ripgrep, and ${binary} was not found; install it (apt-get install -y ripgrep)`,
    "search_unavailable",
  );
}

interface RipgrepRun {
  /** The matches of the page asked for. */
  matches: Match[];
  /** Matching lines counted (at most max_matches). */
  total: number;
  stderr: string;
  code: number | null;
  stopped: boolean;
}

/** Bytes of ripgrep's stderr kept (its warnings; the first three are shown). */
const STDERR_BYTES = 64 * 1024;

async function runRipgrep(
  ws: Workspace,
  argv: string[],
  o: GrepLimits & { first: number },
  envelope: GrepEnvelope,
  signal?: AbortSignal,
  progress?: ToolContext["progress"],
): Promise<RipgrepRun> {
  const leave = envelope.gate?.enter() ?? (() => {});
  try {
    return await ripgrepIn(ws, argv, o, envelope, signal, progress);
  } finally {
    leave();
  }
}

async function ripgrepIn(
  ws: Workspace,
  argv: string[],
  o: GrepLimits & { first: number },
  envelope: GrepEnvelope,
  signal?: AbortSignal,
  progress?: ToolContext["progress"],
): Promise<RipgrepRun> {
  const launcher = await envelope.choose();
  const { root, hidden } = envelopePaths(ws);
  const reader = new RgEventReader({
    first: o.first,
    count: o.page,
    maxMatches: o.max_matches,
    lineBytes: o.line_bytes,
    textChars: o.text_chars,
  });
  const proc = await startInEnvelope(
    launcher,
    { command: "", argv, workspace: root, readOnlyWorkspace: true, hidden, limits: envelope.limits },
    { timeout_ms: envelope.timeout_ms ?? 60_000, ...(signal ? { signal } : {}) },
  );
  let stderr = "";
  proc.stderr.on("data", (chunk: Buffer) => {
    if (stderr.length < STDERR_BYTES) stderr += chunk.subarray(0, STDERR_BYTES - stderr.length).toString("utf8");
  });
  proc.stdout.on("data", (chunk: Buffer) => {
    if (reader.stopped) return;
    reader.push(chunk);
    if (reader.stopped) proc.kill();
  });
  const stopTicker = progressTicker(progress, (elapsed) => ({
    message: `searching for ${seconds(elapsed)}; ${plural(reader.matches, "match", "matches")} in ${plural(reader.files, "file")} so far`,
    counts: { files: reader.files, matches: reader.matches },
  }));
  const exit = await proc.done.finally(stopTicker);
  if (!reader.stopped) reader.end();
  if (exit.aborted)
    throw new NoEffectError(
      "grep_search was stopped by the caller before ripgrep finished; nothing was changed",
      "search_aborted",
    );
  if (exit.timed_out)
    throw new NoEffectError(
      `ripgrep did not finish within ${envelope.timeout_ms ?? 60_000} ms; narrow the path or glob, then call grep_search again`,
      "search_timeout",
    );
  // bwrap (or setpriv, or the cgroup join) failing to set up is told apart from ripgrep's own exit.
  const setup =
    exit.report.setup_error ??
    (!reader.stopped && exit.code !== 0 && exit.code !== 2 && /^(bwrap|setpriv|toolgate-sandbox)\b/m.test(stderr)
      ? stderr.trim()
      : null);
  if (setup !== null)
    throw new NoEffectError(
      `grep_search's sandbox could not start ripgrep: ${setup}; nothing was searched`,
      "sandbox_unavailable",
    );
  return { matches: reader.kept, total: reader.matches, stderr, code: exit.code, stopped: reader.stopped };
}
