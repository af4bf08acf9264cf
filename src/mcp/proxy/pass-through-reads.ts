/**
 * The pass-through's resources: their lists and template lists paged from what is served, and a
 * read routed to the upstream that owns the URI (`pass-through-uri.ts`), its answer bounded and
 * rebuilt from the fields MCP defines.
 */
import type {
  ListResourcesResult,
  ListResourceTemplatesResult,
  ReadResourceResult,
  Resource,
  ResourceTemplateType,
} from "@modelcontextprotocol/client";
import { closest } from "../../core/closest.js";
import { boundedMime, identifierProblem, MAX_URI_CHARS } from "./upstream-bounds.js";
import { ask, bounded, invalid, isObject, shown, type PassThroughSource, type Routed } from "./pass-through-ask.js";
import { page, type Served } from "./pass-through-lists.js";
import type { ResourceSubscriptions } from "./pass-through-subscriptions.js";
import { ownerOf } from "./pass-through-uri.js";

/** What a client may ask of the upstreams' resources (`UpstreamPassThrough.resources`). */
export interface PassThroughResources {
  list(cursor: string | undefined): Promise<ListResourcesResult>;
  templates(cursor: string | undefined): Promise<ListResourceTemplatesResult>;
  read(uri: string, request: Routed): Promise<ReadResourceResult>;
  subscriptions?: ResourceSubscriptions;
}

/** The resources served from `served`, read at `withResources`; `subscriptions` offered when given. */
export function passThroughResources(
  served: Served,
  withResources: readonly PassThroughSource[],
  subscriptions: ResourceSubscriptions | undefined,
): PassThroughResources {
  return {
    async list(cursor: string | undefined) {
      const p = page("resources", "resources/list", served.resourceList, cursor);
      return { resources: p.items as Resource[], ...(p.nextCursor ? { nextCursor: p.nextCursor } : {}) };
    },
    async templates(cursor: string | undefined) {
      const p = page("templates", "resources/templates/list", served.templateList, cursor);
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
      const owner = ownerOf(served, withResources, uri, "resources/read");
      if (!owner) {
        const near = closest(uri, [...served.byUri.keys()]);
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
          ...(typeof c.blob === "string" ? { blob: c.blob } : { text: typeof c.text === "string" ? c.text : "" }),
        })),
      };
    },
    ...(subscriptions ? { subscriptions } : {}),
  };
}
