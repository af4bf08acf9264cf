/**
 * The upstreams' resources, prompts and completions, served beside their tools (`PassThrough` of
 * `mcp/server/pass-through.ts`, which `cli/host` hands to the MCP server). What each upstream lists
 * is read once at start, checked and bounded (`upstream-bounds.ts`; at most `MAX_LISTED` of each
 * kind per upstream, `MAX_PAGES` pages) and served from that snapshot in pages of `PAGE_SIZE`;
 * reads, prompts and completions go to the upstream that owns them (a prompt's messages rebuilt by
 * `prompt-content.ts`), each within the proxy's time
 * limit, with only the fields MCP defines (never the client's `_meta`: its capability stays here).
 *
 * N upstreams: a resource keeps its URI (URIs mean the same everywhere); two upstreams listing one
 * URI (or one template) are resolved for the first in config order, named in a start-up line. A
 * prompt is published under its server's namespace like a tool (`publishedName`). What a source's
 * own include/exclude lists (`PassThroughSource.prompts`, `.resources`, as the tools' lists in
 * `aggregate-catalog.ts`) hide is left out of the snapshot, so lists never show it and a get, read,
 * completion or subscription naming it is refused as for a name nothing serves. A read goes to the
 * upstream that lists the URI, else to the first whose template matches it and whose lists let
 * the URI through; with a single upstream, to it when its lists do.
 */
import {
  ProtocolError,
  ProtocolErrorCode,
  type Client,
  type CompleteRequestParams,
  type CompleteResult,
  type GetPromptResult,
  type ListPromptsResult,
  type ListResourcesResult,
  type ListResourceTemplatesResult,
  type Prompt,
  type ReadResourceResult,
  type Resource,
  type ResourceTemplateType,
} from "@modelcontextprotocol/client";
import { z } from "zod";
import { ChangeSignal, type ChangeFeed } from "../../core/changes.js";
import type { ReadAudit } from "../../runtime/types.js";
import { closest } from "../../core/closest.js";
import { escapeUntrusted, shownValue } from "../../observation/escape.js";
import { checkPromptNames, passes, publishedName, type ListFilter } from "./aggregate-catalog.js";
import {
  boundedLog,
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
import { coalesced } from "./list-watch.js";
import { rebuiltMessages } from "./prompt-content.js";

/** Items of one kind (resources, templates, prompts) kept per upstream; the rest are left out, said once. */
export const MAX_LISTED = 1_000;
/** Expressions in one resource template (each read of an unlisted URI tries every template). */
export const MAX_TEMPLATE_EXPRESSIONS = 16;
/** Pages read of one upstream list. */
export const MAX_PAGES = 100;
/** Items per page of our own lists. */
export const PAGE_SIZE = 100;
/** A read's or a prompt's answer as JSON, characters: 2 MiB of media once base64-encoded, or 3 MiB of text. */
export const MAX_ANSWER_CHARS = 3 * 1024 * 1024;
/** Upstream subscriptions toolgate proxy holds at once, across all its clients and upstreams. */
export const MAX_SUBSCRIBED_URIS = 10_000;
/**
 * The least time between two resources/updated told for one URI, ms: the first is told at once,
 * every one that arrives within the gap after it is folded into one told when the gap ends (an
 * update names only its URI, so nothing is lost), and a storm of them costs each subscriber a
 * notification (and a re-read) per gap, not one per upstream message.
 */
export const UPDATE_GAP_MS = 250;
/** A URI's part after its scheme that an include/exclude pattern cannot judge: dot segments, backslashes, encoded separators. */
const UNJUDGEABLE_URI = /(?:^|[/\\])\.\.?(?:[/\\?#]|$)|\\|%2e|%2f|%5c/i;
/** Completion values passed on (MCP's own bound) and each one's length. */
const MAX_VALUES = 100;
const MAX_VALUE_CHARS = 1_024;
/** A prompt's arguments: how many, and each value's length. */
const MAX_ARGUMENTS = 64;
const MAX_ARGUMENT_CHARS = 65_536;

/** What the upstream a pass-through request goes to is: its name, how to reach it, what it declared. */
export interface PassThroughSource {
  /** The server's name in messages (its config key, or the upstream command). */
  server: string;
  /** The live client (reconnecting when the upstream has gone), as tools use it (`UpstreamLink`). */
  link: { get(what: string): Client | Promise<Client>; readonly client: Client | null };
  /** The namespace its prompts are published under ("" for none). */
  namespace: string;
  /** Each request's time limit, ms (the one its tools have). */
  timeoutMs: number;
  /**
   * Marks a request to the upstream in flight until the returned function is called, so a log
   * message it sends meanwhile is nobody's (`UpstreamNotices.enter`): with one tool call beside
   * it, that call's caller (maybe another tenant) would get what the upstream said for this one.
   */
  inFlight?: () => () => void;
  /** Which of its prompts are served (absent: all); a hidden one answers as one it never had. */
  prompts?: ListFilter;
  /** Which of its resources and templates are served, and which URIs read (absent: all); a hidden one answers as absent. */
  resources?: ListFilter;
}

export interface PassThroughOptions {
  separator: string;
  log: (line: string) => void;
}

type Item = Record<string, unknown>;
interface Owned {
  source: PassThroughSource;
  item: Item;
}
interface Template extends Owned {
  matches: (uri: string) => boolean;
}
interface PublishedPrompt extends Owned {
  name: string;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function invalid(message: string): ProtocolError {
  return new ProtocolError(ProtocolErrorCode.InvalidParams, message);
}

function shown(value: string): string {
  return shownValue(value, 120);
}

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
function checkedResource(raw: Item, key: "uri" | "uriTemplate", note: (line: string) => void): Item | null {
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

function checkedPrompt(raw: Item, note: (line: string) => void): Item | null {
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

/** Why an upstream request failed, as a protocol error naming the upstream. */
function relayed(server: string, method: string, err: unknown): ProtocolError {
  const message = escapeUntrusted(String((err as Error)?.message ?? err).slice(0, 1_000));
  if (err instanceof ProtocolError) {
    // A -32002 (resource not found, an earlier revision's code) is the -32602 of this one.
    const code = err.code === -32002 ? ProtocolErrorCode.InvalidParams : err.code;
    return new ProtocolError(code, `${method}: the upstream ${server} answered: ${message}`);
  }
  return new ProtocolError(
    ProtocolErrorCode.InternalError,
    `${method}: the upstream ${server} gave no usable answer (${message}); try again, or ask whoever runs toolgate proxy to check it`,
  );
}

/**
 * A list page as it arrives, any object: each item is rebuilt from its known fields here
 * (`checkedResource`, `checkedPrompt`), so one item's bad value (a priority of 7) costs that
 * value, not the whole list, as the SDK's check of the result would make it.
 */
const ANY_PAGE = z.looseObject({});

/**
 * One request to an upstream within the time limit; a failure is a protocol error naming the
 * upstream. The SDK checks the answer against the method's result schema unless `asIs` is given.
 */
async function ask(
  source: PassThroughSource,
  method: string,
  params: Item,
  signal?: AbortSignal,
  asIs?: typeof ANY_PAGE,
): Promise<Item> {
  const leave = source.inFlight?.() ?? (() => {});
  try {
    const live = source.link.get(method);
    const client = live instanceof Promise ? await live : live;
    const request = client.request as (r: { method: string; params: Item }, ...rest: object[]) => Promise<unknown>;
    const options = { timeout: source.timeoutMs, ...(signal ? { signal } : {}) };
    const answer = await (asIs
      ? request.call(client, { method, params }, asIs, options)
      : request.call(client, { method, params }, options));
    return isObject(answer) ? answer : {};
  } catch (err) {
    throw relayed(source.server, method, err);
  } finally {
    leave();
  }
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
function page<T>(
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

/** Refuses an answer whose JSON is longer than `MAX_ANSWER_CHARS`, naming what and how long. */
function bounded(source: PassThroughSource, method: string, what: string, answer: Item): void {
  const chars = JSON.stringify(answer).length;
  if (chars > MAX_ANSWER_CHARS)
    throw new ProtocolError(
      ProtocolErrorCode.InternalError,
      `${method}: the upstream ${source.server}'s answer for ${what} is ${chars} characters of JSON, over the ${MAX_ANSWER_CHARS} toolgate proxy passes on; nothing of it was passed; read a smaller resource, or ask whoever runs the upstream`,
    );
}

function declared(source: PassThroughSource, capability: "resources" | "prompts" | "completions"): boolean {
  return source.link.client?.getServerCapabilities()?.[capability] !== undefined;
}

/** Who hears an update of a URI it subscribed to (the MCP server's connection or listen streams). */
export interface ResourceSubscriber {
  updated(uri: string): void;
}

/** Subscriptions counted per URI across subscribers (the shape of the server's `ResourceSubscriptions`). */
export interface ResourceSubscriptions {
  subscribe(uri: string, subscriber: ResourceSubscriber, request: Routed): Promise<void>;
  unsubscribe(uri: string, subscriber: ResourceSubscriber): void;
}

/** What the MCP server serves from the upstreams (the shape `McpServerOptions.passThrough` takes). */
export interface UpstreamPassThrough {
  /** Emits after an upstream's resources or templates were read again (it said they changed); absent when none declares `listChanged`. */
  resourcesChanged?: ChangeFeed;
  /** Emits after an upstream's prompts were read again; absent when none declares `listChanged`. */
  promptsChanged?: ChangeFeed;
  /**
   * Hears `source`'s list_changed notifications on `client` (call it for each client the upstream's
   * link connects): only that upstream is read again, one re-read in flight per kind, a storm folded
   * into one more.
   */
  watch(source: PassThroughSource, client: Client): void;
  resources?: {
    list(cursor: string | undefined): Promise<ListResourcesResult>;
    templates(cursor: string | undefined): Promise<ListResourceTemplatesResult>;
    read(uri: string, request: Routed): Promise<ReadResourceResult>;
    subscriptions?: ResourceSubscriptions;
  };
  prompts?: {
    list(cursor: string | undefined): Promise<ListPromptsResult>;
    get(name: string, args: Record<string, string>, request: Routed): Promise<GetPromptResult>;
  };
  complete?(params: CompleteRequestParams, request: Routed): Promise<CompleteResult>;
  /** Where each read's audit line goes (the server's `PassThrough.audit`): set to the gateway's `recordRead` once it is built. */
  audit?: (read: ReadAudit) => void;
}

/** A read as the server hands it over: its signal, and whom to tell which upstream it goes to (its audit line names it). */
interface Routed {
  signal: AbortSignal;
  routed?(server: string): void;
}

/** One upstream's listings as served (checked), replaced whole when it says they changed. */
interface Snapshot {
  source: PassThroughSource;
  resources: Item[];
  templates: Item[];
  /** The prompts served (those its lists let through). */
  prompts: Item[];
  /** Every prompt name it listed, hidden or not (an exact name in its lists must be one of them). */
  promptNames: string[];
}

/** What an upstream declared it tells of: `listChanged` for resources, prompts. */
function tellsChanges(source: PassThroughSource, capability: "resources" | "prompts"): boolean {
  const declared = source.link.client?.getServerCapabilities()?.[capability] as { listChanged?: unknown } | undefined;
  return declared?.listChanged === true;
}

/** The snapshot of every upstream's listings, and the methods that serve and route from it. */
export async function openPassThrough(
  sources: readonly PassThroughSource[],
  options: PassThroughOptions,
): Promise<UpstreamPassThrough> {
  const withResources = sources.filter((s) => declared(s, "resources"));
  const withPrompts = sources.filter((s) => declared(s, "prompts"));
  const withCompletions = sources.filter((s) => declared(s, "completions"));

  /** Reads `source`'s lists of the kinds asked (the others left as `before` has them), checked and bounded. */
  async function readSource(
    source: PassThroughSource,
    kinds: { resources: boolean; prompts: boolean },
    before?: Snapshot,
  ): Promise<Snapshot> {
    const log = boundedLog(options.log, `toolgate proxy: ${source.server}: `);
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

  const snapshots = await Promise.all(sources.map((s) => readSource(s, { resources: true, prompts: true })));
  for (const snapshot of snapshots)
    checkPromptNames(snapshot.source.prompts, snapshot.source.server, snapshot.promptNames);

  // What is served, rebuilt from the snapshots whenever one is replaced.
  let byUri = new Map<string, Owned>();
  let templates: Template[] = [];
  let prompts = new Map<string, PublishedPrompt>();
  let resourceList: Item[] = [];
  let templateList: Item[] = [];
  let promptList: Item[] = [];
  /** Merges the snapshots; config order decides every collision: the first server's item is served, the later one named. */
  function merge(): void {
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
    byUri = nextByUri;
    templates = nextTemplates;
    prompts = nextPrompts;
    resourceList = [...byUri.values()].map((o) => o.item);
    templateList = templates.map((t) => t.item);
    promptList = [...prompts.values()].map((p) => p.item);
  }
  merge();
  if (sources.length > 0 && (withResources.length > 0 || withPrompts.length > 0))
    options.log(
      `toolgate proxy: passing through ${resourceList.length} resources, ${templateList.length} resource templates, ${promptList.length} prompts${withCompletions.length > 0 ? " and completions" : ""}`,
    );

  // Told to the MCP server only when an upstream declares it tells of changes.
  const resourcesChanged = withResources.some((s) => tellsChanges(s, "resources")) ? new ChangeSignal() : undefined;
  const promptsChanged = withPrompts.some((s) => tellsChanges(s, "prompts")) ? new ChangeSignal() : undefined;
  /** Re-reads one kind of `source`'s lists (coalesced per upstream and kind), then tells the clients. */
  function rereader(source: PassThroughSource, kind: "resources" | "prompts", signal: ChangeSignal): () => void {
    const index = sources.indexOf(source);
    return coalesced(async () => {
      snapshots[index] = await readSource(
        source,
        { resources: kind === "resources", prompts: kind === "prompts" },
        snapshots[index],
      );
      merge();
      signal.emit();
    });
  }
  const rereads = new Map(
    sources.map((s) => [
      s,
      {
        resources: resourcesChanged && withResources.includes(s) ? rereader(s, "resources", resourcesChanged) : null,
        prompts: promptsChanged && withPrompts.includes(s) ? rereader(s, "prompts", promptsChanged) : null,
      },
    ]),
  );

  // Subscriptions: per URI, the upstream subscribed at and who hears its updates (counted across our clients).
  const withSubscribe = withResources.filter((s) => {
    const r = s.link.client?.getServerCapabilities()?.resources as { subscribe?: unknown } | undefined;
    return r?.subscribe === true;
  });
  const subscribed = new Map<
    string,
    { source: PassThroughSource; subscribers: Set<ResourceSubscriber>; tell: () => void }
  >();
  const subscriptions: ResourceSubscriptions = {
    async subscribe(uri, subscriber, request) {
      const problem = identifierProblem(uri, MAX_URI_CHARS);
      if (problem !== null)
        throw invalid(
          `resources/subscribe params.uri must be a resource's URI (at most ${MAX_URI_CHARS} characters); received ${problem}`,
        );
      const held = subscribed.get(uri);
      if (held) {
        // Held at that upstream already: its audit line names it, though nothing more is asked of it.
        request.routed?.(held.source.server);
        held.subscribers.add(subscriber);
        return;
      }
      const owner = ownerOf(uri, "resources/subscribe");
      if (!owner || !withSubscribe.includes(owner))
        throw invalid(
          `resources/subscribe params.uri ${shown(uri)} is ${owner ? `served by ${owner.server}, which offers no subscriptions` : "not a resource any upstream lists, and matches none of their templates"}; call resources/list for the resources served`,
        );
      if (subscribed.size >= MAX_SUBSCRIBED_URIS)
        throw new ProtocolError(
          ProtocolErrorCode.InternalError,
          `resources/subscribe: toolgate proxy already holds ${MAX_SUBSCRIBED_URIS} upstream subscriptions, the most it keeps; try again once others are given up`,
        );
      const subscribers = new Set([subscriber]);
      const tell = coalesced(
        async () => {
          for (const s of [...subscribers]) s.updated(uri);
        },
        { gapMs: UPDATE_GAP_MS },
      );
      const entry = { source: owner, subscribers, tell };
      subscribed.set(uri, entry);
      request.routed?.(owner.server);
      try {
        await ask(owner, "resources/subscribe", { uri }, request.signal);
      } catch (err) {
        if (subscribed.get(uri) === entry) subscribed.delete(uri);
        throw err;
      }
    },
    unsubscribe(uri, subscriber) {
      const held = subscribed.get(uri);
      if (!held || !held.subscribers.delete(subscriber) || held.subscribers.size > 0) return;
      subscribed.delete(uri);
      void ask(held.source, "resources/unsubscribe", { uri }).catch(() => {});
    },
  };

  /**
   * Who serves `uri`: the upstream listing it, else the first whose template matches it, else the
   * only one; each only when its lists let `uri` through. A URI no upstream lists, with dot
   * segments or percent-encoded separators, is refused where resource lists are set: the upstream
   * may resolve `file:///work/../etc/passwd` to what `include_resources: ["file:///work/*"]` keeps out.
   */
  function ownerOf(uri: string, method: string): PassThroughSource | undefined {
    const listed = byUri.get(uri)?.source;
    if (listed) return listed;
    if (
      withResources.some((s) => s.resources !== undefined) &&
      UNJUDGEABLE_URI.test(uri.replace(/^[a-z][a-z0-9+.-]*:/i, ""))
    )
      throw invalid(
        `${method} params.uri ${shown(uri)} has a "." or ".." path segment, a backslash or a percent-encoded ".", "/" or "\\", which the proxy's resource include/exclude lists cannot judge (the upstream may resolve it elsewhere); send the URI in its normal form (e.g. file:///work/a.txt, not file:///work/x/../a.txt)`,
      );
    const only = withResources.length === 1 ? withResources[0]! : undefined;
    return (
      templates.find((t) => t.matches(uri) && passes(t.source.resources, uri))?.source ??
      (only && passes(only.resources, uri) ? only : undefined)
    );
  }

  function promptOf(method: string, field: string, name: string): PublishedPrompt {
    const found = prompts.get(name);
    if (found) return found;
    const near = closest(name, [...prompts.keys()]);
    throw invalid(
      `${method} ${field} ${shown(name)} is not a prompt this server serves${near ? `; did you mean ${shown(near)}?` : ""}; call prompts/list for the names`,
    );
  }

  return {
    ...(resourcesChanged ? { resourcesChanged } : {}),
    ...(promptsChanged ? { promptsChanged } : {}),
    watch(source: PassThroughSource, client: Client) {
      const r = rereads.get(source);
      if (r?.resources) client.setNotificationHandler("notifications/resources/list_changed", r.resources);
      if (r?.prompts) client.setNotificationHandler("notifications/prompts/list_changed", r.prompts);
      if (!withSubscribe.includes(source)) return;
      // An update is told only to the subscribers of its URI at the upstream that holds it, at most
      // once per UPDATE_GAP_MS (`tell`); any other is dropped.
      client.setNotificationHandler("notifications/resources/updated", (note) => {
        const uri = (note.params as { uri?: unknown } | undefined)?.uri;
        const held = typeof uri === "string" ? subscribed.get(uri) : undefined;
        if (!held || held.source !== source) return;
        held.tell();
      });
      // A restarted upstream knows nothing of what the last one was asked: subscribe again.
      for (const [uri, held] of subscribed)
        if (held.source === source) void client.subscribeResource({ uri }).catch(() => {});
    },
    resources:
      withResources.length === 0
        ? undefined
        : {
            async list(cursor: string | undefined) {
              const p = page("resources", "resources/list", resourceList, cursor);
              return { resources: p.items as Resource[], ...(p.nextCursor ? { nextCursor: p.nextCursor } : {}) };
            },
            async templates(cursor: string | undefined) {
              const p = page("templates", "resources/templates/list", templateList, cursor);
              return {
                resourceTemplates: p.items as ResourceTemplateType[],
                ...(p.nextCursor ? { nextCursor: p.nextCursor } : {}),
              };
            },
            async read(uri: string, request: Routed) {
              const problem = identifierProblem(uri, MAX_URI_CHARS);
              if (problem !== null)
                throw invalid(
                  `resources/read params.uri must be a resource's URI (at most ${MAX_URI_CHARS} characters); received ${problem}`,
                );
              const owner = ownerOf(uri, "resources/read");
              if (!owner) {
                const near = closest(uri, [...byUri.keys()]);
                throw invalid(
                  `resources/read params.uri ${shown(uri)} is not a resource any upstream lists, and matches none of their templates${near ? `; did you mean ${shown(near)}?` : ""}; call resources/list or resources/templates/list`,
                );
              }
              request.routed?.(owner.server);
              const answer = await ask(owner, "resources/read", { uri }, request.signal);
              bounded(owner, "resources/read", shown(uri), answer);
              const contents = Array.isArray(answer.contents) ? answer.contents.filter(isObject) : [];
              return {
                contents: contents.map((c) => ({
                  // The upstream's own URI for a content only when it is a URI a client can be shown.
                  uri: identifierProblem(c.uri, MAX_URI_CHARS) === null ? (c.uri as string) : uri,
                  ...(boundedMime(c.mimeType) !== undefined ? { mimeType: boundedMime(c.mimeType) } : {}),
                  ...(typeof c.blob === "string"
                    ? { blob: c.blob }
                    : { text: typeof c.text === "string" ? c.text : "" }),
                })),
              };
            },
            ...(withSubscribe.length > 0 ? { subscriptions } : {}),
          },
    prompts:
      withPrompts.length === 0
        ? undefined
        : {
            async list(cursor: string | undefined) {
              const p = page("prompts", "prompts/list", promptList, cursor);
              return { prompts: p.items as Prompt[], ...(p.nextCursor ? { nextCursor: p.nextCursor } : {}) };
            },
            async get(name: string, args: Record<string, string>, request: Routed) {
              const prompt = promptOf("prompts/get", "params.name", name);
              const entries = Object.entries(args);
              if (entries.length > MAX_ARGUMENTS || entries.some(([, v]) => v.length > MAX_ARGUMENT_CHARS))
                throw invalid(
                  `prompts/get params.arguments: at most ${MAX_ARGUMENTS} arguments of at most ${MAX_ARGUMENT_CHARS} characters each; received ${entries.length}`,
                );
              request.routed?.(prompt.source.server);
              const answer = await ask(
                prompt.source,
                "prompts/get",
                { name: prompt.name, arguments: args },
                request.signal,
              );
              bounded(prompt.source, "prompts/get", shown(name), answer);
              const description = boundedText(answer.description, MAX_DESCRIPTION_CHARS);
              const notes = boundedLog(
                options.log,
                `toolgate proxy: ${prompt.source.server}: prompts/get ${shown(name)}: `,
                5,
              );
              const messages = rebuiltMessages(answer.messages, notes.note) as GetPromptResult["messages"];
              notes.end();
              return { ...(description !== undefined ? { description } : {}), messages };
            },
          },
    complete:
      withCompletions.length === 0
        ? undefined
        : async (params, request) => {
            const ref = params.ref as { type: string; name?: string; uri?: string };
            let owner: PassThroughSource;
            let upstreamRef: Item;
            if (ref.type === "ref/prompt") {
              const prompt = promptOf("completion/complete", "params.ref.name", String(ref.name));
              owner = prompt.source;
              upstreamRef = { type: "ref/prompt", name: prompt.name };
            } else {
              const uri = String(ref.uri);
              const found = templates.find((t) => t.item.uriTemplate === uri)?.source ?? byUri.get(uri)?.source;
              if (!found)
                throw invalid(
                  `completion/complete params.ref.uri ${shown(uri)} is not a resource template this server serves; call resources/templates/list for them`,
                );
              owner = found;
              upstreamRef = { type: "ref/resource", uri };
            }
            if (!withCompletions.includes(owner)) return { completion: { values: [], hasMore: false } };
            request.routed?.(owner.server);
            const answer = await ask(
              owner,
              "completion/complete",
              {
                ref: upstreamRef,
                argument: params.argument,
                ...(params.context !== undefined ? { context: params.context } : {}),
              },
              request.signal,
            );
            const c = isObject(answer.completion) ? answer.completion : {};
            const values = (Array.isArray(c.values) ? c.values : [])
              .filter((v): v is string => typeof v === "string" && v.length <= MAX_VALUE_CHARS)
              .slice(0, MAX_VALUES);
            return {
              completion: {
                values,
                ...(typeof c.total === "number" && Number.isSafeInteger(c.total) && c.total >= 0
                  ? { total: c.total }
                  : {}),
                ...(typeof c.hasMore === "boolean" ? { hasMore: c.hasMore } : {}),
              },
            };
          },
  };
}
