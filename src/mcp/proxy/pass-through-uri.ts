/**
 * The pass-through's URI policy: which upstream a URI goes to (`ownerOf`), and which URIs are
 * refused before any upstream is asked because the include/exclude lists cannot judge them.
 */
import { passes } from "./aggregate-catalog.js";
import { invalid, shown, type PassThroughSource } from "./pass-through-ask.js";
import type { Served } from "./pass-through-lists.js";

/** A URI's part after its scheme that an include/exclude pattern cannot judge: dot segments, backslashes, encoded separators. */
const UNJUDGEABLE_URI = /(?:^|[/\\])\.\.?(?:[/\\?#]|$)|\\|%2e|%2f|%5c/i;

/**
 * Who serves `uri`: the upstream listing it, else the first whose template matches it, else the
 * only one; each only when its lists let `uri` through. A URI no upstream lists, with dot
 * segments or percent-encoded separators, is refused where resource lists are set: the upstream
 * may resolve `file:///work/../etc/passwd` to what `include_resources: ["file:///work/*"]` keeps out.
 */
export function ownerOf(
  served: Served,
  withResources: readonly PassThroughSource[],
  uri: string,
  method: string,
): PassThroughSource | undefined {
  const listed = served.byUri.get(uri)?.source;
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
    served.templates.find((t) => t.matches(uri) && passes(t.source.resources, uri))?.source ??
    (only && passes(only.resources, uri) ? only : undefined)
  );
}
