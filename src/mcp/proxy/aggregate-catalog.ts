/**
 * How N upstream catalogs become one: which tools of each server are published (include, then
 * exclude), under which name (`<namespace><separator><tool>`, or the tool's own name with an
 * empty namespace), with which effect (what the tool's annotations declare; for a tool that
 * declares none, the operator's per-tool or per-server effect, else MCP's default, destructive).
 * Every mistake that would otherwise surface on a call is refused at start: two tools published
 * under one name (both origins named), an include, exclude or override naming a tool the server
 * does not serve.
 */
import { closest } from "../../core/closest.js";
import { ToolgateError } from "../../core/errors.js";
import type { Effect, ToolAnnotations } from "../../core/tool.js";
import { effectFromAnnotations } from "./proxy-tools.js";
import { identifierProblem, MAX_NAME_CHARS, MAX_URI_CHARS } from "./upstream-bounds.js";

/** What the operator set for one upstream tool. */
export interface ToolSettings {
  effect?: Effect;
  timeout_ms?: number;
  task_timeout_ms?: number;
  budget_tokens?: number;
}

/** What the aggregate needs of one server's settings to shape its catalog. */
export interface CatalogSettings {
  name: string;
  namespace: string;
  include?: readonly string[];
  exclude: readonly string[];
  effect?: Effect;
  tools: Readonly<Record<string, ToolSettings>>;
}

/** The part of an upstream tool these rules read. */
export interface ListedTool {
  name: string;
  annotations?: ToolAnnotations;
}

/**
 * Whether a name (a tool's, a prompt's, a resource's URI) matches an include/exclude pattern, `*`
 * standing for any run of characters. Each literal piece is found once, left to right (the first
 * anchored at the start, the last at the end), so the work is at most the pieces times the name's
 * length whatever the pattern: a regular expression of `*a*a*a*b` backtracked for minutes on a
 * long URI a client chose.
 */
export function matchesPattern(name: string, pattern: string): boolean {
  if (!pattern.includes("*")) return name === pattern;
  const pieces = pattern.split("*");
  const first = pieces[0]!;
  const last = pieces[pieces.length - 1]!;
  if (name.length < first.length + last.length || !name.startsWith(first) || !name.endsWith(last)) return false;
  let at = first.length;
  const end = name.length - last.length;
  for (const piece of pieces.slice(1, -1)) {
    const found = name.indexOf(piece, at);
    if (found < 0 || found + piece.length > end) return false;
    at = found + piece.length;
  }
  return true;
}

/**
 * Which of one upstream's prompts, or resources and resource templates, are served: those an
 * `include` pattern matches (absent: all), less those an `exclude` pattern matches, as for tools.
 * A prompt is matched by its upstream name, a resource by its URI, a template by its uriTemplate,
 * and a read of a URI no listed resource holds by that URI.
 */
export interface ListFilter {
  include?: readonly string[];
  exclude: readonly string[];
  /** Where the operator wrote each list, for messages: `--exclude-prompt`, `mcpServers.gh.toolgate.exclude_prompts`. */
  said: { include: string; exclude: string };
}

/** Whether `filter` lets `name` be served (no filter: everything is). */
export function passes(filter: ListFilter | undefined, name: string): boolean {
  if (!filter) return true;
  return (
    (filter.include === undefined || filter.include.some((p) => matchesPattern(name, p))) &&
    !filter.exclude.some((p) => matchesPattern(name, p))
  );
}

/**
 * Why one include/exclude entry for prompts or resources cannot be used, or null: a prompt's is a
 * name of at most `MAX_NAME_CHARS`, a resource's a URI of at most `MAX_URI_CHARS` without spaces,
 * neither holding control or invisible characters.
 */
export function filterPatternProblem(kind: "prompt" | "resource", pattern: string): string | null {
  const problem = identifierProblem(pattern, kind === "prompt" ? MAX_NAME_CHARS : MAX_URI_CHARS);
  if (problem !== null) return problem === "not a non-empty string" ? "empty" : problem;
  if (kind === "resource" && /\s/.test(pattern)) return "white space, which no URI holds";
  return null;
}

/**
 * Refuses an exact (`*`-free) prompt name in `filter` that `server` does not list, naming the
 * nearest it does: a typo in an exclude would otherwise serve the prompt it meant to hide.
 */
export function checkPromptNames(filter: ListFilter | undefined, server: string, names: readonly string[]): void {
  if (!filter) return;
  const lists: Array<[string, readonly string[]]> = [
    [filter.said.include, filter.include ?? []],
    [filter.said.exclude, filter.exclude],
  ];
  for (const [said, list] of lists)
    for (const name of list)
      if (!name.includes("*") && !names.includes(name)) {
        const near = closest(name, [...names]);
        throw new ToolgateError(
          "invalid_config",
          `${said} names the prompt ${JSON.stringify(name)}, which ${server} does not serve${near ? `; did you mean "${near}"?` : ""}; its prompts are ${names.map((n) => JSON.stringify(n)).join(", ") || "(none)"}`,
        );
      }
}

export function publishedName(namespace: string, separator: string, tool: string): string {
  return namespace === "" ? tool : `${namespace}${separator}${tool}`;
}

/** The tools of one server that are published, in the server's order. Throws for a name it does not serve. */
export function selectTools<T extends ListedTool>(server: CatalogSettings, listed: readonly T[]): T[] {
  const names = listed.map((t) => t.name);
  const exact = (where: string, list: readonly string[]) => {
    for (const name of list)
      if (!name.includes("*") && !names.includes(name)) {
        const near = closest(name, names);
        throw new ToolgateError(
          "invalid_config",
          `mcpServers.${server.name}.toolgate.${where} names ${JSON.stringify(name)}, which ${server.name} does not serve${near ? `; did you mean "${near}"?` : ""}; its tools are ${names.join(", ") || "(none)"}`,
        );
      }
  };
  exact("include", server.include ?? []);
  exact("exclude", server.exclude);
  exact("tools", Object.keys(server.tools));
  return listed.filter(
    (t) =>
      (server.include === undefined || server.include.some((p) => matchesPattern(t.name, p))) &&
      !server.exclude.some((p) => matchesPattern(t.name, p)),
  );
}

const HINTS = ["readOnlyHint", "destructiveHint", "idempotentHint"] as const;

/** The tool's effect: its annotations when they declare one, else the operator's, else destructive. */
export function effectFor(server: CatalogSettings, tool: ListedTool): Effect {
  const a = tool.annotations;
  if (a && HINTS.some((h) => typeof a[h] === "boolean")) return effectFromAnnotations(a);
  return server.tools[tool.name]?.effect ?? server.effect ?? effectFromAnnotations(a);
}

/** Refuses two tools published under one name, naming both origins. */
export function checkCollisions(published: ReadonlyArray<{ name: string; server: string; tool: string }>): void {
  const seen = new Map<string, { server: string; tool: string }>();
  for (const p of published) {
    const first = seen.get(p.name);
    if (first)
      throw new ToolgateError(
        "invalid_config",
        `two tools would be published as ${JSON.stringify(p.name)}: ${first.server}'s ${JSON.stringify(first.tool)} and ${p.server}'s ${JSON.stringify(p.tool)}; give one of the servers a "toolgate": {"namespace": "…"} of its own, or exclude one of the tools`,
      );
    seen.set(p.name, { server: p.server, tool: p.tool });
  }
}
