/**
 * An upstream's tools/call content, read for the gateway: text blocks, and the text of embedded
 * text resources, become the result's text; images, sounds and resource links become content
 * parts (`core/content.ts`), which the gateway checks and bounds like any tool's. An embedded
 * binary resource that is neither image nor sound is passed on as a link to its URI, and a block
 * of a kind toolgate does not know is named in the text, so nothing the upstream sent vanishes
 * unsaid. Every value is the upstream's: each is read by type, never trusted to be well formed.
 */
import type { CallToolResult } from "@modelcontextprotocol/client";
import type { ContentPart } from "../../core/content.js";
import { isPlainObject } from "../../core/json.js";

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
