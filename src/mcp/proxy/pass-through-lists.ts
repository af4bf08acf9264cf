/**
 * The pass-through's lists: each upstream's read once (every page, at most `MAX_LISTED` items of a
 * kind, `MAX_PAGES` pages), checked (`pass-through-items.ts`) and kept as its `Snapshot`; the
 * snapshots merged into what is served (`Served`, config order deciding every collision); and our
 * own lists handed out from it in pages of `PAGE_SIZE` (`page`).
 */
import { passes, publishedName, type ListFilter } from "./aggregate-catalog.js";
import { boundedLog, MAX_URI_CHARS } from "./upstream-bounds.js";
import {
  ANY_PAGE,
  ask,
  invalid,
  isObject,
  shown,
  type Item,
  type Owned,
  type PassThroughSource,
  type PublishedPrompt,
  type Template,
} from "./pass-through-ask.js";
import { checkedPrompt, checkedResource, templateMatcher } from "./pass-through-items.js";

/** Items of one kind (resources, templates, prompts) kept per upstream; the rest are left out, said once. */
export const MAX_LISTED = 1_000;
/** Pages read of one upstream list. */
export const MAX_PAGES = 100;
/** Items per page of our own lists. */
export const PAGE_SIZE = 100;

/** One upstream's listings as served (checked), replaced whole when it says they changed. */
export interface Snapshot {
  source: PassThroughSource;
  resources: Item[];
  templates: Item[];
  /** The prompts served (those its lists let through). */
  prompts: Item[];
  /** Every prompt name it listed, hidden or not (an exact name in its lists must be one of them). */
  promptNames: string[];
}

/** Every page of one upstream list, at most `MAX_LISTED` items (the rest said once). */
async function readList(
  source: PassThroughSource,
  method: string,
  key: string,
  note: (line: string) => void,
): Promise<Item[]> {
  const items: Item[] = [];
  const seen = new Set<string>();
  let cursor: string | undefined;
  for (let page = 0; page < MAX_PAGES; page++) {
    const answer = await ask(source, method, cursor === undefined ? {} : { cursor }, undefined, ANY_PAGE);
    const listed = Array.isArray(answer[key]) ? (answer[key] as unknown[]) : [];
    for (const item of listed) {
      if (items.length >= MAX_LISTED) {
        note(`${method}: more than ${MAX_LISTED} items; the first ${MAX_LISTED} are served, the rest left out`);
        return items;
      }
      if (isObject(item)) items.push(item);
    }
    const next = answer.nextCursor;
    if (typeof next !== "string") return items;
    if (seen.has(next) || next.length > MAX_URI_CHARS) {
      note(`${method}: its pagination loops or its cursor is too long; the ${items.length} items read are served`);
      return items;
    }
    seen.add(next);
    cursor = next;
  }
  note(`${method}: more than ${MAX_PAGES} pages; the ${items.length} items read are served`);
  return items;
}

/** One page of `items` from `cursor` (an offset we handed out, as `<kind>:<offset>`). */
export function page<T>(
  kind: string,
  method: string,
  items: readonly T[],
  cursor: string | undefined,
): { items: T[]; nextCursor?: string } {
  let offset = 0;
  if (cursor !== undefined) {
    const match = new RegExp(`^${kind}:(\\d{1,9})$`).exec(cursor);
    offset = match ? Number(match[1]) : -1;
    if (offset <= 0 || offset >= items.length)
      throw invalid(
        `${method} params.cursor ${shown(cursor)} is not a cursor this server handed out (or its list is shorter now); send the nextCursor of the previous page, or none for the first`,
      );
  }
  const end = Math.min(items.length, offset + PAGE_SIZE);
  return { items: items.slice(offset, end), ...(end < items.length ? { nextCursor: `${kind}:${end}` } : {}) };
}

/** Which upstreams declared resources and prompts, and where a list's lines go. */
export interface ReadContext {
  withResources: readonly PassThroughSource[];
  withPrompts: readonly PassThroughSource[];
  log: (line: string) => void;
}

/** Reads `source`'s lists of the kinds asked (the others left as `before` has them), checked and bounded. */
export async function readSource(
  context: ReadContext,
  source: PassThroughSource,
  kinds: { resources: boolean; prompts: boolean },
  before?: Snapshot,
): Promise<Snapshot> {
  const { withResources, withPrompts } = context;
  const log = boundedLog(context.log, `toolgate proxy: ${source.server}: `);
  const safely = async (method: string, key: string, on: boolean): Promise<Item[]> => {
    if (!on) return [];
    try {
      return await readList(source, method, key, log.note);
    } catch (err) {
      log.note(`${(err as Error).message}; none of it is served`);
      return [];
    }
  };
  const hasResources = kinds.resources && withResources.includes(source);
  const hasPrompts = kinds.prompts && withPrompts.includes(source);
  const [resources, templates, prompts] = await Promise.all([
    safely("resources/list", "resources", hasResources),
    safely("resources/templates/list", "resourceTemplates", hasResources),
    safely("prompts/list", "prompts", hasPrompts),
  ]);
  const shownOf = (items: Item[], key: string, filter: ListFilter | undefined) =>
    items.filter((item) => passes(filter, item[key] as string));
  const out: Snapshot = {
    source,
    resources:
      before && !kinds.resources
        ? before.resources
        : shownOf(
            resources.map((r) => checkedResource(r, "uri", log.note)).filter((r) => r !== null),
            "uri",
            source.resources,
          ),
    templates:
      before && !kinds.resources
        ? before.templates
        : shownOf(
            templates.map((t) => checkedResource(t, "uriTemplate", log.note)).filter((t) => t !== null),
            "uriTemplate",
            source.resources,
          ),
    prompts:
      before && !kinds.prompts
        ? before.prompts
        : shownOf(
            prompts.map((p) => checkedPrompt(p, log.note)).filter((p) => p !== null),
            "name",
            source.prompts,
          ),
    promptNames: before && !kinds.prompts ? before.promptNames : prompts.map((p) => String(p.name)),
  };
  log.end();
  return out;
}

/** What is served, rebuilt from the snapshots whenever one is replaced (`merge`). */
export interface Served {
  byUri: Map<string, Owned>;
  templates: Template[];
  prompts: Map<string, PublishedPrompt>;
  resourceList: Item[];
  templateList: Item[];
  promptList: Item[];
}

/** Nothing served yet. */
export function emptyServed(): Served {
  return { byUri: new Map(), templates: [], prompts: new Map(), resourceList: [], templateList: [], promptList: [] };
}

/** Merges the snapshots; config order decides every collision: the first server's item is served, the later one named. */
export function merge(
  served: Served,
  snapshots: readonly Snapshot[],
  options: { separator: string; log: (line: string) => void },
): void {
  const nextByUri = new Map<string, Owned>();
  const nextTemplates: Template[] = [];
  const nextPrompts = new Map<string, PublishedPrompt>();
  const collisions = boundedLog(options.log, "toolgate proxy: ");
  for (const r of snapshots) {
    for (const item of r.resources) {
      const uri = item.uri as string;
      const first = nextByUri.get(uri);
      if (first)
        collisions.note(
          `the resource ${shown(uri)} is listed by ${first.source.server} and ${r.source.server}; ${first.source.server}'s is served (first in config order)`,
        );
      else nextByUri.set(uri, { source: r.source, item });
    }
    for (const item of r.templates) {
      const t = item.uriTemplate as string;
      const first = nextTemplates.find((x) => x.item.uriTemplate === t);
      if (first)
        collisions.note(
          `the resource template ${shown(t)} is listed by ${first.source.server} and ${r.source.server}; ${first.source.server}'s is served (first in config order)`,
        );
      else nextTemplates.push({ source: r.source, item, matches: templateMatcher(t) });
    }
    for (const item of r.prompts) {
      const name = publishedName(r.source.namespace, options.separator, item.name as string);
      const first = nextPrompts.get(name);
      if (first)
        collisions.note(
          `two prompts would be published as ${shown(name)}: ${first.source.server}'s and ${r.source.server}'s; ${first.source.server}'s is served (first in config order); give one of the servers a namespace of its own`,
        );
      else nextPrompts.set(name, { source: r.source, item: { ...item, name }, name: item.name as string });
    }
  }
  collisions.end();
  served.byUri = nextByUri;
  served.templates = nextTemplates;
  served.prompts = nextPrompts;
  served.resourceList = [...served.byUri.values()].map((o) => o.item);
  served.templateList = served.templates.map((t) => t.item);
  served.promptList = [...served.prompts.values()].map((p) => p.item);
}
