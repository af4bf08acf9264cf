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
 *
 * This file opens the pass-through and wires its parts: `pass-through-ask.ts` (one request to an
 * upstream, the shared shapes), `pass-through-items.ts` (a listed item checked), `pass-through-lists.ts`
 * (the lists read, merged and paged), `pass-through-uri.ts` (which upstream a URI goes to),
 * `pass-through-reads.ts` (resources), `pass-through-subscriptions.ts`, `pass-through-prompts.ts`
 * and `pass-through-complete.ts`.
 */
import type { Client, CompleteRequestParams, CompleteResult } from "@modelcontextprotocol/client";
import { ChangeSignal, type ChangeFeed } from "../../core/changes.js";
import type { ReadAudit } from "../../runtime/types.js";
import { checkPromptNames } from "./aggregate-catalog.js";
import { coalesced } from "./list-watch.js";
import {
  declared,
  tellsChanges,
  type PassThroughOptions,
  type PassThroughSource,
  type Routed,
} from "./pass-through-ask.js";
import { emptyServed, merge, readSource, type ReadContext } from "./pass-through-lists.js";
import { passThroughCompletions } from "./pass-through-complete.js";
import { passThroughPrompts, type PassThroughPrompts } from "./pass-through-prompts.js";
import { passThroughResources, type PassThroughResources } from "./pass-through-reads.js";
import { openSubscriptions } from "./pass-through-subscriptions.js";
import { ownerOf } from "./pass-through-uri.js";

// The names this module has always exported, kept importable from here.
export { MAX_ANSWER_CHARS, type PassThroughOptions, type PassThroughSource } from "./pass-through-ask.js";
export { MAX_TEMPLATE_EXPRESSIONS, templateMatcher } from "./pass-through-items.js";
export { MAX_LISTED, MAX_PAGES, PAGE_SIZE } from "./pass-through-lists.js";
export {
  MAX_SUBSCRIBED_URIS,
  UPDATE_GAP_MS,
  type ResourceSubscriber,
  type ResourceSubscriptions,
} from "./pass-through-subscriptions.js";

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
  resources?: PassThroughResources;
  prompts?: PassThroughPrompts;
  complete?(params: CompleteRequestParams, request: Routed): Promise<CompleteResult>;
  /** Where each read's audit line goes (the server's `PassThrough.audit`): set to the gateway's `recordRead` once it is built. */
  audit?: (read: ReadAudit) => void;
}

/** The snapshot of every upstream's listings, and the methods that serve and route from it. */
export async function openPassThrough(
  sources: readonly PassThroughSource[],
  options: PassThroughOptions,
): Promise<UpstreamPassThrough> {
  const withResources = sources.filter((s) => declared(s, "resources"));
  const withPrompts = sources.filter((s) => declared(s, "prompts"));
  const withCompletions = sources.filter((s) => declared(s, "completions"));
  const context: ReadContext = { withResources, withPrompts, log: options.log };

  const snapshots = await Promise.all(sources.map((s) => readSource(context, s, { resources: true, prompts: true })));
  for (const snapshot of snapshots)
    checkPromptNames(snapshot.source.prompts, snapshot.source.server, snapshot.promptNames);

  // What is served, rebuilt from the snapshots whenever one is replaced.
  const served = emptyServed();
  merge(served, snapshots, options);
  if (sources.length > 0 && (withResources.length > 0 || withPrompts.length > 0))
    options.log(
      `toolgate proxy: passing through ${served.resourceList.length} resources, ${served.templateList.length} resource templates, ${served.promptList.length} prompts${withCompletions.length > 0 ? " and completions" : ""}`,
    );

  // Told to the MCP server only when an upstream declares it tells of changes.
  const resourcesChanged = withResources.some((s) => tellsChanges(s, "resources")) ? new ChangeSignal() : undefined;
  const promptsChanged = withPrompts.some((s) => tellsChanges(s, "prompts")) ? new ChangeSignal() : undefined;
  /** Re-reads one kind of `source`'s lists (coalesced per upstream and kind), then tells the clients. */
  function rereader(source: PassThroughSource, kind: "resources" | "prompts", signal: ChangeSignal): () => void {
    const index = sources.indexOf(source);
    return coalesced(async () => {
      snapshots[index] = await readSource(
        context,
        source,
        { resources: kind === "resources", prompts: kind === "prompts" },
        snapshots[index],
      );
      merge(served, snapshots, options);
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
  const subs = openSubscriptions(withResources, (uri, method) => ownerOf(served, withResources, uri, method));

  return {
    ...(resourcesChanged ? { resourcesChanged } : {}),
    ...(promptsChanged ? { promptsChanged } : {}),
    watch(source: PassThroughSource, client: Client) {
      const r = rereads.get(source);
      if (r?.resources) client.setNotificationHandler("notifications/resources/list_changed", r.resources);
      if (r?.prompts) client.setNotificationHandler("notifications/prompts/list_changed", r.prompts);
      subs.watch(source, client);
    },
    resources:
      withResources.length === 0
        ? undefined
        : passThroughResources(served, withResources, subs.withSubscribe.length > 0 ? subs.subscriptions : undefined),
    prompts: withPrompts.length === 0 ? undefined : passThroughPrompts(served, options.log),
    complete: withCompletions.length === 0 ? undefined : passThroughCompletions(served, withCompletions),
  };
}
