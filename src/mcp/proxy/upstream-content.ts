/**
 * An upstream's tools/call content, read for the gateway: text blocks, and the text of embedded
 * text resources, become the result's text; images, sounds and resource links become content
 * parts (`core/content.ts`), which the gateway checks and bounds like any tool's. An embedded
 * binary resource that is neither image nor sound is passed on as a link to its URI, and a block
 * of a kind toolgate does not know is named in the text, so nothing the upstream sent vanishes
 * unsaid. Every value is the upstream's: each is read by type, never trusted to be well formed.
 */
import type { CallToolResult, StandardSchemaV1 } from "@modelcontextprotocol/client";
import type { ContentPart } from "../../core/content.js";
import { isPlainObject, nestedDeeper } from "../../core/json.js";
import { shownValue } from "../../observation/escape.js";

export interface UpstreamContent {
  text: string;
  parts: ContentPart[];
}

const str = (v: unknown): string | undefined => (typeof v === "string" ? v : undefined);

/** A resource link's fields as `LinkContent` names them; the gateway checks each. */
function link(block: Record<string, unknown>): ContentPart {
  return {
    type: "link",
    uri: String(block.uri),
    name: String(block.name),
    ...(str(block.title) !== undefined ? { title: str(block.title)! } : {}),
    ...(str(block.description) !== undefined ? { description: str(block.description)! } : {}),
    ...(str(block.mimeType) !== undefined ? { mime_type: str(block.mimeType)! } : {}),
    ...(typeof block.size === "number" ? { size: block.size } : {}),
  };
}

/** An embedded resource: its text, or its bytes as media, or a link to it. */
function embedded(resource: unknown, lines: string[], parts: ContentPart[]): void {
  const r = isPlainObject(resource) ? resource : {};
  const mime = str(r.mimeType);
  if (typeof r.text === "string") lines.push(r.text);
  else if (typeof r.blob === "string" && mime !== undefined && /^(image|audio)\//i.test(mime))
    parts.push({ type: mime.toLowerCase().startsWith("image/") ? "image" : "audio", mime_type: mime, data: r.blob });
  else parts.push({ type: "link", uri: String(r.uri), name: String(r.uri), ...(mime ? { mime_type: mime } : {}) });
}

/** The text and the parts of an upstream result, in the order the upstream gave them. */
export function readUpstreamContent(result: CallToolResult): UpstreamContent {
  const lines: string[] = [];
  const parts: ContentPart[] = [];
  for (const block of Array.isArray(result.content) ? (result.content as unknown[]) : []) {
    const b = isPlainObject(block) ? block : {};
    switch (b.type) {
      case "text":
        lines.push(String(b.text));
        break;
      case "image":
      case "audio":
        parts.push({ type: b.type, mime_type: String(b.mimeType), data: String(b.data) });
        break;
      case "resource_link":
        parts.push(link(b));
        break;
      case "resource":
        embedded(b.resource, lines, parts);
        break;
      default:
        lines.push("[toolgate left out a content block of a kind it does not pass on]");
    }
  }
  return { text: lines.join("\n"), parts };
}

/** Fields of another result family: a result carrying one is not a tools/call result without its content. */
const FOREIGN_KEYS = ["task", "inputRequests", "requestState"];

/** What is wrong with one content block's fields as `readUpstreamContent` reads them, or null. */
function blockProblem(block: unknown): string | null {
  if (!isPlainObject(block)) return ` must be a content block (an object); received ${shownValue(block)}`;
  const field = (name: string, want: "string" | "number", optional: boolean, of = block): string | null => {
    const v = of[name];
    if ((optional && v === undefined) || typeof v === want) return null;
    return `.${name} must be a ${want}; received ${shownValue(v)}`;
  };
  switch (block.type) {
    case "text":
      return field("text", "string", false);
    case "image":
    case "audio":
      // The data's base64 form and size are judged where every tool's media is (observation/content.ts readMedia).
      return field("data", "string", false) ?? field("mimeType", "string", false);
    case "resource_link":
      return (
        field("uri", "string", false) ??
        field("name", "string", false) ??
        field("title", "string", true) ??
        field("description", "string", true) ??
        field("mimeType", "string", true) ??
        field("size", "number", true)
      );
    case "resource": {
      const r = block.resource;
      if (!isPlainObject(r)) return `.resource must be an object; received ${shownValue(r)}`;
      const inner = field("uri", "string", false, r) ?? field("mimeType", "string", true, r);
      if (inner !== null) return `.resource${inner}`;
      if (typeof r.text === "string" || typeof r.blob === "string") return null;
      return `.resource must carry text or blob (a string); received ${shownValue(r)}`;
    }
    default:
      return `.type must be one of text, image, audio, resource_link, resource; received ${shownValue(block.type)}`;
  }
}

/**
 * Levels an upstream's structuredContent may nest: one nested some thousands deep could not be
 * serialised (JSON.stringify runs out of stack), so the call's answer was never sent and its client
 * waited out its own timeout. Deeper than any output schema toolgate reads (`schema/close.ts`).
 */
export const MAX_STRUCTURED_DEPTH = 64;

/**
 * What is wrong with an upstream's tools/call result, in the fields the proxy reads (the content
 * blocks `readUpstreamContent` reads, `structuredContent`, `isError`, `_meta`), or null: the
 * shapes the SDK's CallToolResult schema refuses, and a structuredContent nested deeper than
 * `MAX_STRUCTURED_DEPTH`. A 2025-11-25 result's structuredContent is an
 * object; a 2026-07-28 one may be any value (`modern`). A result without content reads as one
 * with none, unless it carries another result family's fields.
 */
export function upstreamResultProblem(raw: unknown, modern: boolean): string | null {
  if (!isPlainObject(raw)) return `the result must be an object; received ${shownValue(raw)}`;
  if (raw.content === undefined) {
    const foreign = FOREIGN_KEYS.find((key) => key in raw);
    if (foreign !== undefined) return `content is required when the result carries ${foreign}`;
  } else if (!Array.isArray(raw.content)) {
    return `content must be an array of content blocks; received ${shownValue(raw.content)}`;
  } else {
    for (let i = 0; i < raw.content.length; i++) {
      const problem = blockProblem(raw.content[i]);
      if (problem !== null) return `content[${i}]${problem}`;
    }
  }
  if (!modern && raw.structuredContent !== undefined && !isPlainObject(raw.structuredContent))
    return `structuredContent must be an object; received ${shownValue(raw.structuredContent)}`;
  if (raw.structuredContent !== undefined && nestedDeeper(raw.structuredContent, MAX_STRUCTURED_DEPTH))
    return `structuredContent must nest at most ${MAX_STRUCTURED_DEPTH} levels of objects and arrays; received deeper (the upstream MCP server needs fixing)`;
  if (raw.isError !== undefined && typeof raw.isError !== "boolean")
    return `isError must be a boolean; received ${shownValue(raw.isError)}`;
  if (raw._meta !== undefined && !isPlainObject(raw._meta))
    return `_meta must be an object; received ${shownValue(raw._meta)}`;
  return null;
}

/**
 * `upstreamResultProblem` as the result schema of the SDK client's `request` (a Standard Schema):
 * the proxy's tools/call checks each result once, with these checks, instead of the SDK's zod
 * parse of every block (the bounds of what is passed on stay the gateway's: content.ts, the budget).
 */
export function upstreamResultSchema(modern: boolean): StandardSchemaV1<unknown, CallToolResult> {
  return modern ? MODERN : LEGACY;
}

const schemaOf = (modern: boolean): StandardSchemaV1<unknown, CallToolResult> => ({
  "~standard": {
    version: 1,
    vendor: "toolgate",
    validate(value) {
      const problem = upstreamResultProblem(value, modern);
      return problem === null ? { value: value as CallToolResult } : { issues: [{ message: problem }] };
    },
  },
});
const MODERN = schemaOf(true);
const LEGACY = schemaOf(false);
