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

/** What the operator set for one upstream tool. */
export interface ToolSettings {
  effect?: Effect;
  timeout_ms?: number;
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

/** Whether a tool name matches an include/exclude pattern (`*`: any run of characters). */
export function matchesPattern(name: string, pattern: string): boolean {
  if (!pattern.includes("*")) return name === pattern;
  const parts = pattern.split("*").map((s) => s.replace(/[.\\^$+?()[\]{}|-]/g, "\\$&"));
  return new RegExp(`^${parts.join(".*")}$`).test(name);
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
