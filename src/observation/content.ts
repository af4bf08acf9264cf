/**
 * The media and links of a result (`core/content.ts`), checked and bounded before they leave the
 * boundary: a tool — or the upstream server a proxy calls — chooses every byte, so each part is
 * read as untrusted. A part that is malformed, or does not fit the bounds, is left out and a line
 * of the result's text says which and why; every part kept is named in the text too, so a model
 * that reads only text knows it is there. Link strings pass the redactor; media bytes cannot be
 * redacted and are passed as they came.
 */
import type { ContentPart, LinkContent, MediaContent } from "../core/content.js";
import { isPlainObject } from "../core/json.js";
import type { Redactor } from "./redact.js";
import { firstUnsafe } from "./escape.js";

/** Parts a result passes on at most. */
export const MAX_CONTENT_PARTS = 16;
/** Media bytes (decoded) a result passes on at most, all parts together: 2 MiB. */
export const MAX_MEDIA_BYTES = 2 * 1024 * 1024;
/** Longest URI of a link. */
export const MAX_URI_CHARS = 2048;
/** Longest name, title or media type of a link; longest description is MAX_LINK_DESCRIPTION_CHARS. */
export const MAX_LINK_NAME_CHARS = 256;
export const MAX_LINK_DESCRIPTION_CHARS = 1024;

// A media type as RFC 6838 names it: type/subtype, each 1–127 of its restricted characters.
const MIME = /^[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]{0,126}\/[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]{0,126}$/;
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;
const URI_SCHEME = /^[A-Za-z][A-Za-z0-9+.-]*:/;

export interface BoundedContent {
  /** The parts passed on, in the order the tool gave them. */
  parts: ContentPart[];
  /** One line per part given: what it is and whether it was passed on. */
  lines: string[];
}

const bytes = (n: number) => `${n.toLocaleString("en-US")} bytes`;

/** Decoded size of base64 text of valid form. */
function decodedBytes(data: string): number {
  const padding = data.endsWith("==") ? 2 : data.endsWith("=") ? 1 : 0;
  return (data.length / 4) * 3 - padding;
}

/** A media part, or why it is not one. */
export function readMedia(part: Record<string, unknown>, type: "image" | "audio"): MediaContent | string {
  const mime = part.mime_type;
  if (typeof mime !== "string" || !MIME.test(mime) || !mime.toLowerCase().startsWith(`${type}/`)) {
    return `has a mime_type that is not an ${type}/… media type`;
  }
  const data = part.data;
  if (typeof data !== "string" || data.length === 0) return "has no base64 data";
  // Bounded before it is scanned: a part over the whole bound is refused unread.
  if (data.length > Math.ceil(MAX_MEDIA_BYTES / 3) * 4)
    return `is over the ${bytes(MAX_MEDIA_BYTES)} of media a result passes on`;
  if (!isBase64(data)) return "has data that is not base64 (RFC 4648, padded)";
  return { type, mime_type: mime, data };
}

/** A string field of a link: absent, or a string of at most `max` characters without control characters. */
function linkString(part: Record<string, unknown>, key: string, max: number): string | undefined | null {
  const v = part[key];
  if (v === undefined) return undefined;
  // A control, format or invisible character would let a link break the line that names it, or hide in it.
  return typeof v === "string" && v.length <= max && firstUnsafe(v) === null ? v : null;
}

/** A link part, or why it is not one. */
export function readLink(part: Record<string, unknown>, redactor: Redactor): LinkContent | string {
  const uri = linkString(part, "uri", MAX_URI_CHARS);
  if (typeof uri !== "string" || !URI_SCHEME.test(uri) || /\s/.test(uri)) {
    return `has a uri that is not an absolute URI of at most ${MAX_URI_CHARS} characters`;
  }
  const name = linkString(part, "name", MAX_LINK_NAME_CHARS);
  if (typeof name !== "string" || name === "")
    return `has a name that is not 1–${MAX_LINK_NAME_CHARS} printable characters`;
  const link: LinkContent = { type: "link", uri: redactor.text(uri), name: redactor.text(name) };
  for (const [key, max] of [
    ["title", MAX_LINK_NAME_CHARS],
    ["description", MAX_LINK_DESCRIPTION_CHARS],
    ["mime_type", MAX_LINK_NAME_CHARS],
  ] as const) {
    const v = linkString(part, key, max);
    if (v === null) return `has a ${key} that is not a string of at most ${max} printable characters`;
    if (v !== undefined) link[key] = redactor.text(v);
  }
  if (link.mime_type !== undefined && !MIME.test(link.mime_type)) return "has a mime_type that is not type/subtype";
  const size = part.size;
  if (size !== undefined) {
    if (typeof size !== "number" || !Number.isSafeInteger(size) || size < 0)
      return "has a size that is not a whole number of bytes";
    link.size = size;
  }
  return link;
}

/** Whether `data` is base64 as RFC 4648 writes it, padded. */
export function isBase64(data: string): boolean {
  return data.length % 4 === 0 && BASE64.test(data);
}

/** How a kept part is named in the text. */
function describe(part: ContentPart): string {
  if (part.type !== "link") return `[${part.type} ${part.mime_type}, ${bytes(decodedBytes(part.data))}, attached]`;
  const extra = [part.mime_type, part.size !== undefined ? bytes(part.size) : undefined].filter((x) => x !== undefined);
  return `[link ${JSON.stringify(part.name)}: ${part.uri}${extra.length ? ` (${extra.join(", ")})` : ""}]`;
}

/** The parts of `given` that pass, in order, and a line for each part given. Never throws. */
export function boundContent(given: unknown, redactor: Redactor): BoundedContent {
  if (given === undefined) return { parts: [], lines: [] };
  if (!Array.isArray(given)) {
    return { parts: [], lines: ["[toolgate left out the result's content: it was not a list of parts]"] };
  }
  const parts: ContentPart[] = [];
  const lines: string[] = [];
  let media = 0;
  given.forEach((raw, i) => {
    const leftOut = (why: string) => lines.push(`[toolgate left out content part ${i + 1}: ${why}]`);
    if (i >= MAX_CONTENT_PARTS) {
      if (i === MAX_CONTENT_PARTS) {
        lines.push(
          `[toolgate left out content parts ${i + 1}–${given.length}: a result passes on at most ${MAX_CONTENT_PARTS}]`,
        );
      }
      return;
    }
    let part: ContentPart | string;
    try {
      const type = isPlainObject(raw) ? raw.type : undefined;
      if (!isPlainObject(raw) || (type !== "image" && type !== "audio" && type !== "link")) {
        return leftOut("it is not an image, audio or link part");
      }
      const read = type === "link" ? readLink(raw, redactor) : readMedia(raw, type);
      part = typeof read === "string" ? `the ${type} ${read}` : read;
    } catch {
      // A getter that throws (an embedder's object; JSON from a wire has none).
      part = "reading it threw";
    }
    if (typeof part === "string") return leftOut(part);
    if (part.type !== "link") {
      const size = decodedBytes(part.data);
      if (media + size > MAX_MEDIA_BYTES) {
        return leftOut(
          `the ${part.type} (${part.mime_type}, ${bytes(size)}) would take the result's media past ${bytes(MAX_MEDIA_BYTES)}`,
        );
      }
      media += size;
    }
    parts.push(part);
    lines.push(describe(part));
  });
  return { parts, lines };
}
