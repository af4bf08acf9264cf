/**
 * An upstream's listed resources, resource templates and prompts, each rebuilt from the fields MCP
 * defines and bounded (`upstream-bounds.ts`), or left out with a line saying why; and a resource
 * template as a test of whether a URI is one of its expansions (`templateMatcher`).
 */
import {
  boundedMime,
  boundedText,
  checkedAnnotations,
  checkedIcons,
  identifierProblem,
  MAX_DESCRIPTION_CHARS,
  MAX_NAME_CHARS,
  MAX_TITLE_CHARS,
  MAX_URI_CHARS,
} from "./upstream-bounds.js";
import { isObject, shown, type Item } from "./pass-through-ask.js";

/** Expressions in one resource template (each read of an unlisted URI tries every template). */
export const MAX_TEMPLATE_EXPRESSIONS = 16;
/** A prompt's arguments: how many, and each value's length (`MAX_ARGUMENT_CHARS`, `pass-through-prompts.ts`). */
export const MAX_ARGUMENTS = 64;

/** One part of a template: literal text, or what one expression's expansion may be. */
type TemplatePart = { literal: string } | { expands: "segment" | "anything" | "query" };

/**
 * RFC 6570 template → a test of whether a URI is one of its expansions: a simple `{x}` one path
 * segment (no `/`, `?`, `#`), `{+x}`/`{#x}` anything, `{?x}`/`{&x}` nothing or a query. The test
 * walks the URI once per part, keeping the set of positions reached (never backtracking), so a
 * template of many expressions costs at most its parts times the URI's length: a regular
 * expression built from `x{a}{a}{a}{a}{a}{a}{a}{a}y` took seconds on 40 characters, stalling
 * every client of the proxy.
 */
export function templateMatcher(template: string): (uri: string) => boolean {
  const parts: TemplatePart[] = [];
  let rest = template;
  while (rest.length > 0) {
    const open = rest.indexOf("{");
    const close = open < 0 ? -1 : rest.indexOf("}", open);
    if (open < 0 || close < 0) {
      parts.push({ literal: rest });
      break;
    }
    if (open > 0) parts.push({ literal: rest.slice(0, open) });
    const op = rest[open + 1];
    parts.push({ expands: op === "+" || op === "#" ? "anything" : op === "?" || op === "&" ? "query" : "segment" });
    rest = rest.slice(close + 1);
  }
  return (uri) => {
    const n = uri.length;
    let reached = new Uint8Array(n + 1);
    reached[0] = 1;
    for (const part of parts) {
      const next = new Uint8Array(n + 1);
      const first = reached.indexOf(1);
      if (first < 0) return false;
      if ("literal" in part) {
        const len = part.literal.length;
        for (let at = uri.indexOf(part.literal, first); at >= 0; at = uri.indexOf(part.literal, at + 1))
          if (reached[at] === 1) next[at + len] = 1;
      } else if (part.expands === "anything") next.fill(1, first);
      else if (part.expands === "segment") {
        for (let at = first; at <= n; at++)
          next[at] = reached[at] === 1 || (at > first && next[at - 1] === 1 && !"/?#".includes(uri[at - 1]!)) ? 1 : 0;
      } else {
        next.set(reached);
        for (let at = first; at < n; at++)
          if (reached[at] === 1 && (uri[at] === "?" || uri[at] === "&")) {
            next.fill(1, at + 1);
            break;
          }
      }
      reached = next;
    }
    return reached[n] === 1;
  };
}

/** The common fields of a listed item, checked: name, title, description, icons. */
function commonFields(raw: Item, note: (line: string) => void, what: string): Item | null {
  const nameProblem = identifierProblem(raw.name, MAX_NAME_CHARS);
  if (nameProblem !== null) {
    note(`${what} left out: its name is ${nameProblem}`);
    return null;
  }
  const title = boundedText(raw.title, MAX_TITLE_CHARS);
  const description = boundedText(raw.description, MAX_DESCRIPTION_CHARS);
  const icons = checkedIcons(raw.icons, (why) => note(`${what} ${shown(raw.name as string)}: ${why}`));
  return {
    name: raw.name,
    ...(title !== undefined ? { title } : {}),
    ...(description !== undefined ? { description } : {}),
    ...(icons ? { icons } : {}),
  };
}

/** A resource (uri) or a template (uriTemplate) as it is served, or null when it is left out. */
export function checkedResource(raw: Item, key: "uri" | "uriTemplate", note: (line: string) => void): Item | null {
  const what = key === "uri" ? "a resource" : "a resource template";
  const uriProblem = identifierProblem(raw[key], MAX_URI_CHARS);
  if (uriProblem !== null) {
    note(`${what} left out: its ${key} is ${uriProblem}`);
    return null;
  }
  const expressions = key === "uriTemplate" ? (raw[key] as string).split("{").length - 1 : 0;
  if (expressions > MAX_TEMPLATE_EXPRESSIONS) {
    note(
      `${what} left out: its uriTemplate ${shown(raw[key] as string)} has ${expressions} expressions, over ${MAX_TEMPLATE_EXPRESSIONS}`,
    );
    return null;
  }
  const common = commonFields(raw, note, `${what} (${shown(raw[key] as string)})`);
  if (!common) return null;
  const mimeType = boundedMime(raw.mimeType);
  const annotations = checkedAnnotations(raw.annotations, (why) =>
    note(`${what} ${shown(raw[key] as string)}: ${why}`),
  );
  const size = typeof raw.size === "number" && Number.isSafeInteger(raw.size) && raw.size >= 0 ? raw.size : undefined;
  return {
    [key]: raw[key],
    ...common,
    ...(mimeType !== undefined ? { mimeType } : {}),
    ...(annotations ? { annotations } : {}),
    ...(size !== undefined && key === "uri" ? { size } : {}),
  };
}

export function checkedPrompt(raw: Item, note: (line: string) => void): Item | null {
  const common = commonFields(raw, note, "a prompt");
  if (!common) return null;
  if (raw.arguments === undefined) return common;
  const args = Array.isArray(raw.arguments) ? raw.arguments : [];
  const kept: Item[] = [];
  for (const a of args.slice(0, MAX_ARGUMENTS)) {
    if (!isObject(a) || identifierProblem(a.name, MAX_NAME_CHARS) !== null) {
      note(`prompt ${shown(common.name as string)} left out: an argument's name is not a short string`);
      return null;
    }
    const title = boundedText(a.title, MAX_TITLE_CHARS);
    const description = boundedText(a.description, MAX_DESCRIPTION_CHARS);
    kept.push({
      name: a.name,
      ...(title !== undefined ? { title } : {}),
      ...(description !== undefined ? { description } : {}),
      ...(typeof a.required === "boolean" ? { required: a.required } : {}),
    });
  }
  if (args.length > MAX_ARGUMENTS) {
    note(`prompt ${shown(common.name as string)} left out: ${args.length} arguments, over ${MAX_ARGUMENTS}`);
    return null;
  }
  return { ...common, arguments: kept };
}
