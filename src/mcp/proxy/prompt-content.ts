/**
 * An upstream's prompts/get messages, rebuilt field by field from what MCP defines (a role and
 * one content block: text, image, audio, resource_link or an embedded resource), so nothing the
 * upstream adds (unknown fields, `_meta`, nested junk) reaches the client. Text is escaped as tool
 * output text is (control, bidi and invisible characters shown, line breaks and tabs kept) and
 * bounded; a block of the wrong shape is replaced by a text saying it was left out.
 */
import { escapeUntrusted } from "../../observation/escape.js";
import { boundedMime, boundedText, identifierProblem, MAX_NAME_CHARS, MAX_URI_CHARS } from "./upstream-bounds.js";

/** Messages kept of one prompt; the rest are left out, said in a last message. */
export const MAX_PROMPT_MESSAGES = 1_000;
/** One text block's characters (the whole answer is bounded too, `MAX_ANSWER_CHARS`). */
export const MAX_PROMPT_TEXT_CHARS = 1024 * 1024;

type Item = Record<string, unknown>;
const isObject = (v: unknown): v is Item => typeof v === "object" && v !== null && !Array.isArray(v);
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

function text(value: string): Item {
  const cut = value.length > MAX_PROMPT_TEXT_CHARS ? `${value.slice(0, MAX_PROMPT_TEXT_CHARS - 1)}…` : value;
  return { type: "text", text: escapeUntrusted(cut, { newlines: true, tabs: true }) };
}

const leftOut = (why: string): Item => text(`[toolgate left out a content block: ${why}]`);

function media(b: Item, kind: "image" | "audio"): Item {
  const mimeType = boundedMime(b.mimeType);
  if (mimeType === undefined || !mimeType.toLowerCase().startsWith(`${kind}/`))
    return leftOut(`an ${kind} without an ${kind}/ MIME type`);
  if (typeof b.data !== "string" || !BASE64.test(b.data)) return leftOut(`an ${kind} whose data is not base64`);
  return { type: kind, mimeType, data: b.data };
}

function resourceLink(b: Item): Item {
  if (identifierProblem(b.uri, MAX_URI_CHARS) !== null || identifierProblem(b.name, MAX_NAME_CHARS) !== null)
    return leftOut("a resource link without a usable uri and name");
  const mimeType = boundedMime(b.mimeType);
  const title = boundedText(b.title, 256);
  const description = boundedText(b.description, 4_096);
  return {
    type: "resource_link",
    uri: b.uri,
    name: b.name,
    ...(title !== undefined ? { title: escapeUntrusted(title) } : {}),
    ...(description !== undefined ? { description: escapeUntrusted(description, { newlines: true }) } : {}),
    ...(mimeType !== undefined ? { mimeType } : {}),
  };
}

function embedded(b: Item): Item {
  const r = isObject(b.resource) ? b.resource : {};
  if (identifierProblem(r.uri, MAX_URI_CHARS) !== null) return leftOut("an embedded resource without a usable uri");
  const mimeType = boundedMime(r.mimeType);
  const base = { uri: r.uri, ...(mimeType !== undefined ? { mimeType } : {}) };
  if (typeof r.text === "string") return { type: "resource", resource: { ...base, text: text(r.text).text } };
  if (typeof r.blob === "string" && BASE64.test(r.blob))
    return { type: "resource", resource: { ...base, blob: r.blob } };
  return leftOut("an embedded resource with neither text nor base64 blob");
}

function block(raw: unknown): Item {
  const b = isObject(raw) ? raw : {};
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

/** The upstream's `messages`, rebuilt: each a role ("user" or "assistant") and its one content block. */
export function rebuiltMessages(raw: unknown): Item[] {
  const list = Array.isArray(raw) ? raw : [];
  const out = list.slice(0, MAX_PROMPT_MESSAGES).map((m) => {
    const msg = isObject(m) ? m : {};
    return { role: msg.role === "assistant" ? "assistant" : "user", content: block(msg.content) };
  });
  if (list.length > MAX_PROMPT_MESSAGES)
    out.push({
      role: "user",
      content: text(`[toolgate left out ${list.length - MAX_PROMPT_MESSAGES} further messages of this prompt]`),
    });
  return out;
}
