/**
 * The one observation shape and its text rendering (docs/observations.md: intent → validated
 * action → useful observation). Success: a header, the post-state after a write (no silent
 * writes), the tool output fenced as untrusted data and cut to the budget, and how to continue.
 * Error: the code, a message the model can act on, and any untrusted text fenced.
 */
import type { AuthorityLevel } from "../core/tool.js";
import type { JsonValue } from "../core/json.js";
import type { Observation, ObservationErrorCode, ObservationIssue } from "../core/observation.js";
import { fitText, surelyFits, type LineRange } from "./budget.js";
import { escapeUntrusted } from "./escape.js";
import { fenceMarks } from "./fence.js";
import { boundContent } from "./content.js";
import { countTokens, countTokensUpTo } from "./tokens.js";
import type { Redactor } from "./redact.js";
import type { ContinuationCache } from "./continuations.js";

/** A successful result, normalised from a handler's return (bare output or ToolResult). */
export interface ResultParts {
  tool: string;
  call_id: string;
  authority?: AuthorityLevel;
  output: JsonValue;
  /** The tool's own rendering; when absent the output is rendered (strings as is, else JSON). */
  text?: string;
  state?: Record<string, JsonValue>;
  next?: { arguments: Record<string, JsonValue>; hint: string };
  /** The tool cut its own result. */
  tool_truncated?: { omitted: number; unit: string };
  replay?: boolean;
  /** Images, sounds and links as the tool returned them: checked and bounded here (`content.ts`). */
  content?: unknown;
}

/** Options shared by every rendering. */
export interface RenderOptions {
  budget_tokens: number;
  redactor: Redactor;
  /** When set, the part a cut removes is kept behind a cursor that `tool` (read_more) pages through. */
  continuations?: { cache: ContinuationCache; tool: string };
}

/** Rendered observation plus its token count when it was computed (null = count lazily). */
export interface Rendered {
  observation: Observation;
  tokens: number | null;
}

// Seams between frame and body can merge a token or two; keep them out of the body's share.
const SEAM_TOKENS = 4;

/** Renders a successful result within the budget; output and state are redacted. */
export function renderResult(parts: ResultParts, opts: RenderOptions): Rendered {
  const r = opts.redactor;
  const output = r.json(parts.output);
  const state = parts.state ? r.json(parts.state) : undefined;
  const next = parts.next ? { arguments: r.json(parts.next.arguments), hint: r.text(parts.next.hint) } : undefined;
  const content = boundContent(parts.content, r);
  const body = withContentLines(r.text(parts.text ?? outputText(output)), content.lines);
  // A list we rendered has item i on line i + 1: the marker can name items instead of lines.
  const items = parts.text === undefined && Array.isArray(output) && output.length > 0 ? output.length : null;
  const fence = fenceMarks(body, {
    tool: parts.tool,
    call_id: parts.call_id,
    ...(parts.replay ? { note: "stored result of an earlier execution, replayed" } : {}),
  });

  const { head, tail } = frameLines(parts, state, next);

  const assemble = (content: string) =>
    [...head, fence.open, content.endsWith("\n") ? content.slice(0, -1) : content, fence.close, ...tail].join("\n");
  const more = opts.continuations;
  const cursor = more ? more.cache.reserve() : null;
  const how = cursor
    ? `call ${more!.tool} with {"cursor":"${cursor}"}${next ? "; the tool's own continuation is below (more: …)" : ""}`
    : next
      ? `the tool's continuation is below (more: …); to read the cut part itself, narrow the query`
      : `narrow the query (a smaller window, fewer fields or a more specific filter); this result has no continuation`;
  const marker = (omitted: number, cut: LineRange | null, estimated: boolean) =>
    `${fence.close}\n[toolgate cut ${about(estimated)}${omitted} tokens here${cutRange(cut, items)} to fit the ${opts.budget_tokens}-token budget. To get the rest: ${how}.]\n${fence.reopen}`;

  const frame = assemble("");
  // Bytes bound the frame's tokens: enough when the body surely fits; counted exactly when it may
  // not, so a tool that sized its text with `frameTokens` is never cut (a frame over the budget
  // is counted only as far as the budget: the whole text is cut below).
  const frameBytes = Buffer.byteLength(frame, "utf8");
  const frameCost = surelyFits(body, opts.budget_tokens - frameBytes - SEAM_TOKENS)
    ? frameBytes
    : countTokensUpTo(frame, opts.budget_tokens);
  const fitted = fitText(body, Math.max(0, opts.budget_tokens - frameCost - SEAM_TOKENS), marker);
  let text = assemble(fitted.text);
  let omitted = fitted.omitted_tokens;
  if (cursor && fitted.removed)
    more!.cache.put(cursor, { tool: parts.tool, call_id: parts.call_id, text: fitted.removed });
  let tokens = omitted > 0 || fitted.tokens !== null ? countTokensUpTo(text, opts.budget_tokens) : null;
  if (tokens !== null && tokens > opts.budget_tokens) {
    // The frame alone (a large post-state or continuation) is over the budget: cut the whole text.
    const whole = fitText(
      text,
      opts.budget_tokens,
      (n, _cut, estimated) =>
        `[toolgate cut ${about(estimated)}${n} tokens to fit the ${opts.budget_tokens}-token budget. To get the rest: ${how}.]`,
    );
    text = whole.text;
    omitted += whole.omitted_tokens;
    tokens = whole.tokens ?? countTokens(text);
  }
  const observation: Observation = {
    ok: true,
    tool: parts.tool,
    call_id: parts.call_id,
    ...(parts.authority ? { authority: parts.authority } : {}),
    output,
    ...(omitted > 0 || parts.tool_truncated
      ? {
          truncated: {
            omitted_tokens: omitted,
            hint: omitted > 0 ? `To get the rest: ${how}.` : toolCutHint(parts.tool, parts.tool_truncated!, next),
            ...(cursor && fitted.removed ? { continuation: { tool: more!.tool, arguments: { cursor } } } : {}),
            ...(parts.tool_truncated ? { by_tool: parts.tool_truncated } : {}),
          },
        }
      : {}),
    ...(next ? { next } : {}),
    ...(parts.replay ? { replay: true } : {}),
    ...(state ? { state } : {}),
    ...(content.parts.length > 0 ? { content: content.parts } : {}),
    text,
  };
  return { observation, tokens };
}

/** The tool's text, then a line for each content part (kept or left out), inside the fence: their strings are the tool's. */
function withContentLines(body: string, lines: string[]): string {
  if (lines.length === 0) return body;
  if (body === "") return lines.join("\n");
  return `${body.endsWith("\n") ? body : body + "\n"}${lines.join("\n")}`;
}

/** The lines around the fenced output: header and post-state above, the tool's own cut and continuation below. */
function frameLines(
  parts: Omit<ResultParts, "output">,
  state: Record<string, JsonValue> | undefined,
  next: ResultParts["next"],
): { head: string[]; tail: string[] } {
  const head = [
    parts.replay
      ? `ok: ${parts.tool} (call ${parts.call_id}) — replayed: this call already ran; the stored result is shown and nothing was executed again.`
      : `ok: ${parts.tool} (call ${parts.call_id})`,
  ];
  // Only a write has a post-state (docs/observations.md, "No silent writes"); a read's state is what it read.
  if (state) head.push(`${parts.authority === "A0" ? "state" : "state after the write"}: ${JSON.stringify(state)}`);
  const tail: string[] = [];
  // Without a continuation, how to see what the tool left out belongs in the text, not only in `truncated.hint`.
  if (parts.tool_truncated)
    tail.push(
      next
        ? `the tool left out ${parts.tool_truncated.omitted} ${parts.tool_truncated.unit}.`
        : toolCutHint(parts.tool, parts.tool_truncated, next),
    );
  if (next) tail.push(`more: call ${parts.tool} with ${JSON.stringify(next.arguments)} — ${next.hint}`);
  return { head, tail };
}

// A fence tag's tokens vary with its hex digits; a redacted value may render longer than it was.
const FRAME_SLACK_TOKENS = 16;

/**
 * Tokens the gateway adds around a tool's text (header, post-state, fence lines, the tool's own
 * cut and continuation lines), with a margin: a tool that bounds its own output (a window, a
 * page) keeps its text within `ctx.budget_tokens` minus this, so the gateway never cuts it and
 * the tool's continuation stays exact. Pass `next` and `tool_truncated` with their largest numbers.
 */
export function frameTokens(parts: Omit<ResultParts, "output" | "text">): number {
  const { head, tail } = frameLines(parts, parts.state, parts.next);
  const fence = fenceMarks("", {
    tool: parts.tool,
    call_id: parts.call_id,
    ...(parts.replay ? { note: "stored result of an earlier execution, replayed" } : {}),
  });
  return countTokens([...head, fence.open, fence.close, ...tail].join("\n")) + SEAM_TOKENS + FRAME_SLACK_TOKENS;
}

/** How to get what the tool itself left out: its continuation, or a narrower call. */
function toolCutHint(tool: string, cut: { omitted: number; unit: string }, next: ResultParts["next"]): string {
  const what = `the tool left out ${cut.omitted} ${cut.unit}`;
  return next
    ? `${what}; to get the rest call ${tool} with ${JSON.stringify(next.arguments)}.`
    : `${what}; to see them, narrow the call (e.g. a more specific query, or pipe output through head, tail or grep).`;
}

/** An error observation: refusals and failures alike (docs/observations.md). */
export interface ErrorParts {
  tool: string;
  call_id: string;
  authority?: AuthorityLevel;
  code: ObservationErrorCode;
  message: string;
  issues?: ObservationIssue[];
  detail?: Record<string, JsonValue>;
  /** Text that came from the tool (a thrown message): fenced as untrusted, cut to the budget. */
  untrusted?: string;
}

/**
 * Renders an error observation within the budget; every string is redacted. This is where every
 * refusal's text is made, so it is also where names, ids and paths quoted in it (a proposed tool
 * name, a target path named after an attacker's file, a thrown message) lose their control, bidi
 * and invisible characters (`escapeUntrusted`): the sentences may be shown to a person as they are.
 */
export function renderError(parts: ErrorParts, opts: RenderOptions): Rendered {
  const r = opts.redactor;
  // A library caller may propose a non-string tool or call id (refused as invalid_proposal): shown as text.
  const tool = escapeUntrusted(String(parts.tool));
  const call_id = escapeUntrusted(String(parts.call_id));
  const message = escapeUntrusted(r.text(parts.message), { newlines: true });
  const lines = [`error ${parts.code}: ${tool} (call ${call_id})`, message];
  let text = lines.join("\n");
  if (parts.untrusted !== undefined) {
    // A thrown message may quote file text (a near-match to copy): its lines and tabs stay.
    const body = escapeUntrusted(r.text(parts.untrusted), { newlines: true, tabs: true });
    const fence = fenceMarks(body, { tool, call_id, what: "message thrown by" });
    const marker = (omitted: number, _cut: LineRange | null, estimated: boolean) =>
      `[toolgate cut ${about(estimated)}${omitted} tokens of this message to fit the ${opts.budget_tokens}-token budget]`;
    const fitted = fitText(
      body,
      Math.max(0, opts.budget_tokens - countTokensUpTo(text, opts.budget_tokens) - 40),
      marker,
    );
    text = [text, fence.open, fitted.text, fence.close].join("\n");
  } else {
    const fitted = fitText(
      text,
      opts.budget_tokens,
      (omitted, _cut, estimated) =>
        `[toolgate cut ${about(estimated)}${omitted} tokens of this error to fit the ${opts.budget_tokens}-token budget]`,
    );
    text = fitted.text;
  }
  const observation: Observation = {
    ok: false,
    tool,
    call_id,
    ...(parts.authority ? { authority: parts.authority } : {}),
    error: {
      code: parts.code,
      message,
      ...(parts.issues ? { issues: parts.issues } : {}),
      ...(parts.detail ? { detail: r.json(parts.detail) } : {}),
    },
    text,
  };
  return { observation, tokens: null };
}

/**
 * Strings are shown as they are; a list as one compact JSON item per line (a row costs its
 * content, not its indentation, and a cut falls between items); anything else as indented JSON.
 */
export function outputText(output: JsonValue | undefined): string {
  if (output === undefined || output === null) return "(no output)";
  if (typeof output === "string") return output;
  if (Array.isArray(output))
    return output.length === 0 ? "[]" : `[\n${output.map((v) => JSON.stringify(v)).join(",\n")}\n]`;
  return JSON.stringify(output, null, 2);
}

/** A cut of a text too long to encode whole gives an estimated count (see `ends.ts`). */
const about = (estimated: boolean) => (estimated ? "about " : "");

function cutRange(cut: LineRange | null, items: number | null): string {
  if (!cut) return "";
  if (items !== null && cut.first >= 2 && cut.last <= items + 1)
    return ` (items ${cut.first - 1}–${cut.last - 1} of ${items})`;
  return ` (lines ${cut.first}–${cut.last} of ${cut.total})`;
}
