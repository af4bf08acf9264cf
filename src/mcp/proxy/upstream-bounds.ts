/**
 * The bounds on what an upstream lists beside its tools' schemas: icons (https: or data: URIs of an
 * image type, a few of bounded size; anything else left out with a line for the operator), names,
 * titles, descriptions and URIs. Every upstream byte is the upstream's choice: nothing it lists
 * reaches a client unchecked.
 */
import type { McpIcon } from "../../core/tool.js";
import { unsafeIdReason } from "../../observation/escape.js";

/** Control, bidi or invisible characters, which a name, URI or type has no use for. */
const unsafe = (value: string): boolean => unsafeIdReason(value) !== null;

/** Icons kept per tool, prompt or resource. */
export const MAX_ICONS = 8;
/** An https: icon URI's length, characters. */
export const MAX_ICON_URL_CHARS = 2_048;
/** A data: icon URI's length, characters (about 48 KiB of image). */
export const MAX_ICON_DATA_CHARS = 65_536;
/** A resource URI or template's length, characters. */
export const MAX_URI_CHARS = 2_048;
/** A name's length (a resource's, a prompt's, an argument's), characters. */
export const MAX_NAME_CHARS = 256;
/** A title's, characters. */
export const MAX_TITLE_CHARS = 256;
/** A description's, characters; a longer one is cut, marked. */
export const MAX_DESCRIPTION_CHARS = 4_096;
/** A MIME type's, characters. */
export const MAX_MIME_CHARS = 200;

const IMAGE_MIME = /^image\/[A-Za-z0-9][A-Za-z0-9.+-]{0,99}$/;
const SIZES = /^(any|\d{1,5}x\d{1,5})$/;

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** Why one listed icon is left out, or null when it passes. */
function iconProblem(icon: unknown): string | null {
  if (!isObject(icon) || typeof icon.src !== "string") return "not an object with a string src";
  const src = icon.src;
  const scheme = /^([A-Za-z][A-Za-z0-9+.-]*):/.exec(src)?.[1]?.toLowerCase();
  if (scheme === "https") {
    if (src.length > MAX_ICON_URL_CHARS) return `an https: URI of ${src.length} characters, over ${MAX_ICON_URL_CHARS}`;
    try {
      new URL(src);
    } catch {
      return "an https: URI that does not parse";
    }
  } else if (scheme === "data") {
    if (src.length > MAX_ICON_DATA_CHARS) return `a data: URI of ${src.length} characters, over ${MAX_ICON_DATA_CHARS}`;
    const mime = /^data:([^;,]*)/i.exec(src)?.[1] ?? "";
    if (!IMAGE_MIME.test(mime)) return `a data: URI of type ${JSON.stringify(mime.slice(0, 40))}, not image/*`;
  } else
    return `a ${scheme === undefined ? "relative" : `${JSON.stringify(scheme.slice(0, 20))}:`} URI; only https: or data: pass`;
  if (unsafe(src)) return "a URI holding control or invisible characters";
  if (icon.mimeType !== undefined && (typeof icon.mimeType !== "string" || !IMAGE_MIME.test(icon.mimeType)))
    return "a mimeType that is not image/*";
  if (
    icon.sizes !== undefined &&
    (!Array.isArray(icon.sizes) ||
      icon.sizes.length > MAX_ICONS ||
      !icon.sizes.every((s) => typeof s === "string" && SIZES.test(s)))
  )
    return 'sizes that are not a few "WxH" or "any"';
  if (icon.theme !== undefined && icon.theme !== "light" && icon.theme !== "dark")
    return 'a theme not "light" or "dark"';
  return null;
}

/**
 * The icons of one listed item that pass (at most `MAX_ICONS`, each rebuilt from its known
 * fields), and a line for each one left out, through `drop`. Undefined when none pass.
 */
export function checkedIcons(icons: unknown, drop: (why: string) => void): McpIcon[] | undefined {
  if (icons === undefined) return undefined;
  if (!Array.isArray(icons)) {
    drop("icons is not an array");
    return undefined;
  }
  const kept: McpIcon[] = [];
  icons.forEach((icon, i) => {
    const problem = kept.length >= MAX_ICONS ? `past the first ${MAX_ICONS}` : iconProblem(icon);
    if (problem !== null) {
      drop(`icon ${i + 1} left out (${problem})`);
      return;
    }
    const ok = icon as McpIcon;
    kept.push({
      src: ok.src,
      ...(ok.mimeType !== undefined ? { mimeType: ok.mimeType } : {}),
      ...(ok.sizes !== undefined ? { sizes: [...ok.sizes] } : {}),
      ...(ok.theme !== undefined ? { theme: ok.theme } : {}),
    });
  });
  return kept.length > 0 ? kept : undefined;
}

/** An identifier (name, URI) the upstream lists: a non-empty string within `max`, without unsafe characters. */
export function identifierProblem(value: unknown, max: number): string | null {
  if (typeof value !== "string" || value === "") return "not a non-empty string";
  if (value.length > max) return `${value.length} characters, over ${max}`;
  if (unsafe(value)) return "control or invisible characters";
  return null;
}

/** An optional display string: kept within `max` (cut and marked past it), dropped when it is not a string. */
export function boundedText(value: unknown, max: number): string | undefined {
  if (typeof value !== "string") return undefined;
  return value.length <= max ? value : `${value.slice(0, max - 1)}…`;
}

/** An optional MIME type, kept when it is a short string. */
export function boundedMime(value: unknown): string | undefined {
  return typeof value === "string" && value.length <= MAX_MIME_CHARS && !unsafe(value) ? value : undefined;
}

/**
 * A log that says at most `limit` lines about one upstream's listings and then how many more it
 * left unsaid, so 10,000 bad items cost the operator a screen, not a scroll.
 */
export function boundedLog(
  log: (line: string) => void,
  prefix: string,
  limit = 20,
): { note(line: string): void; end(): void } {
  let said = 0;
  let unsaid = 0;
  return {
    note(line) {
      if (said < limit) {
        said++;
        log(`${prefix}${line}`);
      } else unsaid++;
    },
    end() {
      if (unsaid > 0) log(`${prefix}and ${unsaid} more such notes, not shown`);
      said = 0;
      unsaid = 0;
    },
  };
}

/** MCP's annotations of a resource, a template or a content block: who it is for, how much it matters, when it changed. */
export interface CheckedAnnotations {
  audience?: Array<"user" | "assistant">;
  priority?: number;
  lastModified?: string;
}

/** A `lastModified` as MCP defines it: an ISO 8601 date-time, e.g. 2025-01-12T15:00:58Z (a fraction and an offset allowed). */
const ISO_DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?(Z|[+-]\d{2}:\d{2})$/;

/**
 * An upstream's annotations rebuilt from the three MCP defines, each checked: `audience` an array
 * of "user" and "assistant" only (each once), `priority` a number from 0 to 1, `lastModified` an
 * ISO 8601 date-time (the form above, which `Date` can read). A value that fails is left out with a line through
 * `drop`; keys MCP does not define are left out unsaid (they are the upstream's own, and nothing
 * reads them). Undefined when nothing passes.
 */
export function checkedAnnotations(value: unknown, drop: (why: string) => void): CheckedAnnotations | undefined {
  if (value === undefined) return undefined;
  if (!isObject(value)) {
    drop("annotations left out (not an object)");
    return undefined;
  }
  const out: CheckedAnnotations = {};
  const { audience, priority, lastModified } = value;
  if (audience !== undefined) {
    if (
      Array.isArray(audience) &&
      audience.length > 0 &&
      audience.length <= 2 &&
      audience.every((a) => a === "user" || a === "assistant") &&
      new Set(audience).size === audience.length
    )
      out.audience = [...(audience as Array<"user" | "assistant">)];
    else drop('annotations.audience left out (not a list of "user" and "assistant", each at most once)');
  }
  if (priority !== undefined) {
    if (typeof priority === "number" && priority >= 0 && priority <= 1) out.priority = priority;
    else drop("annotations.priority left out (not a number from 0 to 1)");
  }
  if (lastModified !== undefined) {
    if (typeof lastModified === "string" && ISO_DATE_TIME.test(lastModified) && !Number.isNaN(Date.parse(lastModified)))
      out.lastModified = lastModified;
    else drop("annotations.lastModified left out (not an ISO 8601 date-time such as 2025-01-12T15:00:58Z)");
  }
  return Object.keys(out).length > 0 ? out : undefined;
}
