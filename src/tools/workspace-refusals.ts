/**
 * The refusals of a path the workspace closes (workspace.ts): hidden (toolgate's own state),
 * read-only (what runs on the host), or reached by another name (a folder moved or swapped).
 */
import { basename } from "node:path";
import { NoEffectError } from "../core/errors.js";

/** A path in a hidden place (toolgate's state or keys). */
export function hiddenError(field: string, path: string, resolved: string, place: string, root: string): NoEffectError {
  const what =
    resolved === place
      ? "which toolgate keeps for itself (its state or keys)"
      : `inside ${place}, which holds toolgate's own state`;
  return new NoEffectError(
    `${field} ${JSON.stringify(path)} resolves to ${resolved}, ${what} and is closed to tools; use another path in ${root}/`,
    "protected_path",
  );
}

/** A walk that reached a hidden or read-only place under another name than its own. */
export function guardedError(
  field: string,
  path: string,
  walked: string,
  guard: string,
  isHidden: boolean,
  root: string,
): NoEffectError {
  const reached = `${field} ${JSON.stringify(path)} leads to ${walked}, which is ${guard} under another name (a folder on the way was moved or swapped with it)`;
  return isHidden
    ? new NoEffectError(
        `${reached}; it holds toolgate's own state and is closed to tools; use another path in ${root}/`,
        "protected_path",
      )
    : readOnlyError(field, path, walked, guard, reached);
}

/** A change refused in a read-only place; `lead` replaces the opening, `namedBy` says git's config names it. */
export function readOnlyError(
  field: string,
  path: string,
  resolved: string,
  place: string,
  lead?: string,
  namedBy?: string,
): NoEffectError {
  const where =
    lead ?? `${field} ${JSON.stringify(path)} resolves to ${resolved}${resolved === place ? "" : `, under ${place}`}`;
  const list = namedBy
    ? `; ${namedBy}, so it stays read-only while the config names it`
    : `; the operator sets the list with the catalog's protectedPaths option${basename(place) === ".git" ? " (toolgate serve --git-writable takes the repository's .git out of it, its hooks and config staying read-only)" : ""}`;
  return new NoEffectError(
    `${where}, which is read-only for the agent: git, an editor or a shell runs what it holds on the host, outside the sandbox, the next time a person works in this repository. file_view may read it; file_edit does not change it. A person can edit it outside the agent${list}.`,
    "protected_path",
  );
}
