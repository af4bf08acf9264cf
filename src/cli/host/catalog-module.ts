/**
 * `toolgate serve --catalog MODULE`: loads a user's tools from a module that exports `defineTool`
 * results — a default export array, a default export of one tool, or named exports that are
 * tools. TypeScript modules (.ts, .mts, .cts) load without a build step through tsx's
 * `tsImport`, which compiles them in memory for this one import.
 */
import { existsSync } from "node:fs";
import { extname, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { ToolgateError } from "../../core/errors.js";
import type { Effect, ToolSpec } from "../../core/tool.js";

const EFFECTS: ReadonlySet<string> = new Set<Effect>(["read", "idempotent", "write", "destructive"]);

/** True for a value shaped like a ToolSpec (what `defineTool` returns). */
export function isToolSpec(value: unknown): value is ToolSpec {
  if (typeof value !== "object" || value === null) return false;
  const v = value as Partial<ToolSpec>;
  return (
    typeof v.name === "string" &&
    typeof v.handler === "function" &&
    typeof v.inputSchema === "object" &&
    v.inputSchema !== null &&
    typeof v.effect === "string" &&
    EFFECTS.has(v.effect)
  );
}

async function importModule(file: string): Promise<Record<string, unknown>> {
  const url = pathToFileURL(file).href;
  if ([".ts", ".mts", ".cts", ".tsx"].includes(extname(file))) {
    const { tsImport } = await import("tsx/esm/api");
    return (await tsImport(url, import.meta.url)) as Record<string, unknown>;
  }
  return (await import(url)) as Record<string, unknown>;
}

/** The tools a module exports, in export order; duplicates and empty modules are errors. */
export function toolsFromModule(mod: Record<string, unknown>, source: string): ToolSpec[] {
  const found: ToolSpec[] = [];
  const def = mod.default;
  if (Array.isArray(def)) {
    def.forEach((t, i) => {
      if (!isToolSpec(t))
        throw new ToolgateError(
          "catalog_invalid",
          `${source}: default export [${i}] is not a tool; expected the result of defineTool(...) (name, inputSchema, effect, handler)`,
        );
      found.push(t);
    });
  } else if (isToolSpec(def)) {
    found.push(def);
  }
  for (const [key, value] of Object.entries(mod)) if (key !== "default" && isToolSpec(value)) found.push(value);
  // The same tool may be both in the default array and a named export; two tools may not share a name.
  const byName = new Map<string, ToolSpec>();
  for (const t of found) {
    const other = byName.get(t.name);
    if (other && other !== t)
      throw new ToolgateError(
        "catalog_invalid",
        `${source} exports two different tools named ${t.name}; tool names must be unique`,
      );
    byName.set(t.name, t);
  }
  const tools = [...byName.values()];
  if (tools.length === 0) {
    throw new ToolgateError(
      "catalog_empty",
      `${source} exports no tools; expected \`export default [defineTool(...), ...]\` or named exports of defineTool results`,
    );
  }
  return tools;
}

/** Loads `specifier` (a path, relative to `cwd`) and returns its tools. */
export async function loadCatalogModule(specifier: string, cwd: string = process.cwd()): Promise<ToolSpec[]> {
  const file = resolve(cwd, specifier);
  if (!existsSync(file))
    throw new ToolgateError("catalog_not_found", `catalog module ${specifier} not found (resolved to ${file})`);
  let mod: Record<string, unknown>;
  try {
    mod = await importModule(file);
  } catch (err) {
    throw new ToolgateError(
      "catalog_load_failed",
      `cannot load catalog module ${specifier}: ${(err as Error).message}`,
      { cause: err },
    );
  }
  return toolsFromModule(mod, specifier);
}
