/**
 * TG011 tool poisoning — docs/schemas.md ("A description is read as instructions"): a tool's
 * description, title and every description in its schemas reach the model as context, and a
 * server that wants the model to do something the user did not ask for writes it there, where
 * the user rarely looks. These are the marks of published attacks: instructions aimed at the
 * model rather than describing the tool (override the instructions it has, keep something from
 * the user), tags that imitate system text (`<IMPORTANT>`), characters a person does not see
 * (zero-width, bidi controls, Unicode tag characters), padding that pushes text off screen, a
 * description long enough to bury anything, and references to other programs' credentials
 * (SSH keys, MCP client configs). Each finding quotes what it found and where.
 */
import type { LintContext, ToolRule } from "../finding.js";
import { isPlainObject } from "../../../core/json.js";
import { join } from "../../../core/pointer.js";
import { escapeUntrusted } from "../../../observation/escape.js";
import { short } from "../../../core/describe.js";

/** Longer than this, a description is past what anyone reviews (TG010 warns earlier, on cost). */
export const MAX_REVIEWABLE_CHARS = 10_000;
/** A run of spaces or tabs this long on one line only pushes what follows out of sight. */
const PADDING = /[ \t\u00a0]{80,}|(?:\r?\n[ \t]*){30,}/;

/** Instructions that address the model about its instructions or the user, not the tool. */
const INSTRUCTIONS: ReadonlyArray<{ pattern: RegExp; what: string }> = [
  {
    pattern:
      /\b(?:ignore|disregard|forget|override)\s+(?:all\s+|any\s+)?(?:the\s+|your\s+)?(?:previous|prior|above|earlier|other|system)\s+(?:instructions|prompts?|rules|messages)\b/i,
    what: "tells the model to set aside its instructions",
  },
  {
    pattern:
      /\b(?:do\s+not|don'?t|never)\s+(?:tell|mention|inform|notify|reveal|show|disclose|say)\b[^.!?\n]{0,60}?\b(?:user|human|anyone)\b/i,
    what: "tells the model to keep something from the user",
  },
  {
    pattern: /\b(?:do\s+not|don'?t|never)\s+mention\s+(?:this|that|it)\b/i,
    what: "tells the model to keep something from the user",
  },
  {
    pattern: /\bwithout\s+(?:telling|informing|notifying|alerting|asking)\s+(?:the\s+)?user\b/i,
    what: "tells the model to act without the user knowing",
  },
  {
    pattern: /\b(?:hide|conceal)\s+(?:this|it|that)\s+from\s+(?:the\s+)?user\b/i,
    what: "tells the model to hide something from the user",
  },
  {
    pattern: /\bwhen\s+this\s+tool\s+is\s+(?:available|present|loaded|installed)\b/i,
    what: "gives the model rules for other tools while this one is loaded (tool shadowing)",
  },
  {
    pattern: /\bbefore\s+using\s+this\s+tool,?\s+(?:you\s+must\s+)?(?:first\s+)?read\b/i,
    what: "tells the model to read something before the call that the call does not need",
  },
];

/** Tags that imitate system or priority text; published poisoning wraps its payload in them. */
const TAG =
  /<\s*\/?\s*(?:important|system|instructions?|secret|hidden|admin|critical|assistant|override|sys|context)\b[^>]{0,40}>|\[\s*(?:system|instructions?|hidden|important)\s*[:\]]|<!--/i;

/** Characters a person does not see but a model reads: zero-width, bidi controls, the BOM, Unicode tags. */
const INVISIBLE = /[\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff\u{e0000}-\u{e007f}]/u;

/** Paths and names of secrets that belong to other programs: keys, cloud credentials, MCP client configs. */
const CREDENTIALS =
  /~\/\.ssh\b|\bid_(?:rsa|ecdsa|ed25519|dsa)\b|\.aws\/credentials\b|\.netrc\b|\.npmrc\b|\.pgpass\b|\.docker\/config\.json\b|\bmcp\.json\b|claude_desktop_config\.json\b|\/etc\/(?:shadow|passwd)\b|\.config\/gh\/hosts\.yml\b|\.git-credentials\b/i;

/** Bounds on the walk of a schema found in the wild. */
const MAX_NODES = 10_000;
const MAX_DEPTH = 64;

export const toolPoisoning: ToolRule = (tool, ctx) => {
  const texts: Array<{ pointer: string; text: string }> = [];
  const body = tool.body;
  for (const key of ["description", "title"] as const)
    if (typeof body[key] === "string") texts.push({ pointer: `/${key}`, text: body[key] as string });
  if (tool.schemaPointer !== null) collect(tool.schema, tool.schemaPointer, texts);
  collect(body.outputSchema, "/outputSchema", texts);
  for (const { pointer, text } of texts) inspect(text, pointer, ctx);
};

function collect(schema: unknown, pointer: string, out: Array<{ pointer: string; text: string }>): void {
  const stack: Array<{ node: unknown; pointer: string; depth: number }> = [{ node: schema, pointer, depth: 0 }];
  let seen = 0;
  while (stack.length > 0 && seen++ < MAX_NODES) {
    const { node, pointer: at, depth } = stack.pop()!;
    if (depth > MAX_DEPTH) continue;
    if (Array.isArray(node)) {
      node.forEach((v, i) => stack.push({ node: v, pointer: join(at, i), depth: depth + 1 }));
      continue;
    }
    if (!isPlainObject(node)) continue;
    for (const [key, value] of Object.entries(node)) {
      if ((key === "description" || key === "title") && typeof value === "string")
        out.push({ pointer: join(at, key), text: value });
      else if (typeof value === "object" && value !== null)
        stack.push({ node: value, pointer: join(at, key), depth: depth + 1 });
    }
  }
}

function inspect(text: string, pointer: string, ctx: LintContext): void {
  const report = (message: string, fix: string, severity: "error" | "warning" = "error") =>
    ctx.report({ rule: "TG011", severity, pointer, message, fix });
  const quote = (m: RegExpExecArray) => JSON.stringify(short(escapeUntrusted(m[0]), 80));
  const review = "if this server is not yours, do not expose it until its author explains the text";
  for (const { pattern, what } of INSTRUCTIONS) {
    const m = pattern.exec(text);
    if (m) {
      report(
        `the text ${what}: ${quote(m)}`,
        `a description says what the tool does, not what the model must do or hide; ${review}`,
      );
      break;
    }
  }
  const tag = TAG.exec(text);
  if (tag)
    report(
      `the text holds ${quote(tag)}, a tag that imitates system or priority instructions`,
      `describe the tool in plain sentences without tags or comments; ${review}`,
    );
  const hidden = INVISIBLE.exec(text);
  if (hidden)
    report(
      `the text holds an invisible character (${escapeUntrusted(hidden[0])} at offset ${hidden.index}): a person reviewing it does not see what the model reads`,
      `remove zero-width, bidi-control and Unicode tag characters; ${review}`,
    );
  const pad = PADDING.exec(text);
  if (pad)
    report(
      `the text holds a run of ${pad[0].length} blank characters at offset ${pad.index}, which pushes what follows out of sight`,
      `remove the padding; ${review}`,
    );
  const cred = CREDENTIALS.exec(text);
  if (cred)
    report(
      `the text names another program's credentials or configuration: ${quote(cred)}`,
      `a tool's description has no reason to mention other programs' keys or configs; ${review}`,
    );
  if (text.length > MAX_REVIEWABLE_CHARS)
    report(
      `the text is ${text.length} characters, more than anyone reviews, so instructions can hide in it`,
      `cut it below ${MAX_REVIEWABLE_CHARS} characters and review what is left`,
      "warning",
    );
}
