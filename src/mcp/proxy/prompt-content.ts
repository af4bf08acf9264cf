/**
 * An upstream's prompts/get messages, rebuilt field by field from what MCP defines (a role and
 * one content block: text, image, audio, resource_link or an embedded resource), so nothing the
 * upstream adds (unknown fields, `_meta`, nested junk) reaches the client. Text is escaped as tool
 * output text is (control, bidi and invisible characters shown, line breaks and tabs kept) and
 * bounded; images, sounds and resource links are checked by the readers of a tool's media and
 * links (`observation/content.ts`); a block of the wrong shape is replaced by a text saying why
 * it was left out. A kept block keeps MCP's annotations (audience, priority, lastModified), each
 * checked by `checkedAnnotations`; a bad one is left out and said through the caller's `note`.
 */
import { isBase64, readLink, readMedia } from "../../observation/content.js";
import { escapeUntrusted } from "../../observation/escape.js";
import { createRedactor } from "../../observation/redact.js";
import { boundedMime, boundedText, checkedAnnotations, identifierProblem, MAX_URI_CHARS } from "./upstream-bounds.js";

/** Messages kept of one prompt; the rest are left out, said in a last message. */
export const MAX_PROMPT_MESSAGES = 1_000;
/** One text block's characters (the whole answer is bounded too, `MAX_ANSWER_CHARS`). */
export const MAX_PROMPT_TEXT_CHARS = 1024 * 1024;

type Item = Record<string, unknown>;
const isObject = (v: unknown): v is Item => typeof v === "object" && v !== null && !Array.isArray(v);
// The proxy holds no secret of the upstream's to hide; the link reader wants a redactor.
const NO_SECRETS = createRedactor([]);

function text(value: string): Item {
  const cut = boundedText(value, MAX_PROMPT_TEXT_CHARS)!;
  return { type: "text", text: escapeUntrusted(cut, { newlines: true, tabs: true }) };
}

/** The texts that stand for a block left out (they carry none of its annotations). */
const standIns = new WeakSet<Item>();
function leftOut(why: string): Item {
  const said = text(`[toolgate left out a content block: ${why}]`);
  standIns.add(said);
  return said;
}

/** An image or a sound, checked as a tool's media are (`observation/content.ts`). */
function media(b: Item, kind: "image" | "audio"): Item {
  const part = readMedia({ mime_type: b.mimeType, data: b.data }, kind);
  return typeof part === "string"
    ? leftOut(`the ${kind} ${part}`)
    : { type: kind, mimeType: part.mime_type, data: part.data };
}

/** A resource link, checked as a tool's links are (`observation/content.ts`): a bad field leaves the link out. */
function resourceLink(b: Item): Item {
  const given = { uri: b.uri, name: b.name, title: b.title, description: b.description, size: b.size };
  const part = readLink({ ...given, mime_type: b.mimeType }, NO_SECRETS);
  if (typeof part === "string") return leftOut(`the resource link ${part}`);
  const { type: _link, mime_type: mimeType, ...fields } = part;
  return { type: "resource_link", ...fields, ...(mimeType !== undefined ? { mimeType } : {}) };
}

function embedded(b: Item): Item {
  const r = isObject(b.resource) ? b.resource : {};
  if (identifierProblem(r.uri, MAX_URI_CHARS) !== null) return leftOut("an embedded resource without a usable uri");
  const mimeType = boundedMime(r.mimeType);
  const base = { uri: r.uri, ...(mimeType !== undefined ? { mimeType } : {}) };
  if (typeof r.text === "string") return { type: "resource", resource: { ...base, text: text(r.text).text } };
  if (typeof r.blob === "string" && isBase64(r.blob)) return { type: "resource", resource: { ...base, blob: r.blob } };
  return leftOut("an embedded resource with neither text nor base64 blob");
}

/** One block rebuilt, with its annotations when it is kept and they pass. */
function block(raw: unknown, note: (why: string) => void): Item {
  const b = isObject(raw) ? raw : {};
  const kept = rebuilt(b);
  if (standIns.has(kept)) return kept;
  const annotations = checkedAnnotations(b.annotations, (why) => note(`a ${String(b.type)} block's ${why}`));
  return annotations ? { ...kept, annotations } : kept;
}

function rebuilt(b: Item): Item {
  switch (b.type) {
    case "text":
      return typeof b.text === "string" ? text(b.text) : leftOut("a text block whose text is not a string");
    case "image":
    case "audio":
      return media(b, b.type);
    case "resource_link":
      return resourceLink(b);
    case "resource":
      return embedded(b);
    default:
      return leftOut("of a kind toolgate does not pass on");
  }
}

/**
 * The upstream's `messages`, rebuilt: each a role ("user" or "assistant") and its one content
 * block; `note` hears each annotation value left out.
 */
export function rebuiltMessages(raw: unknown, note: (why: string) => void = () => {}): Item[] {
  const list = Array.isArray(raw) ? raw : [];
  const out = list.slice(0, MAX_PROMPT_MESSAGES).map((m) => {
    const msg = isObject(m) ? m : {};
    return { role: msg.role === "assistant" ? "assistant" : "user", content: block(msg.content, note) };
  });
  if (list.length > MAX_PROMPT_MESSAGES)
    out.push({
      role: "user",
      content: text(`[toolgate left out ${list.length - MAX_PROMPT_MESSAGES} further messages of this prompt]`),
    });
  return out;
}
