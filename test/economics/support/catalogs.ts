/** The real catalogs in ../shared/testdata/mcp-catalogs and the seed's Listing 5, as ToolDescriptors. */
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { toToolDescriptors, type ToolDescriptor } from "../../../src/economics/descriptor.js";
import { testdataDir } from "../../support/require.js";

export const mcpCatalogDir = join(testdataDir, "mcp-catalogs");

export function mcpCatalogs(): { id: string; tools: ToolDescriptor[] }[] {
  return readdirSync(mcpCatalogDir)
    .filter((f) => f.endsWith(".json"))
    .sort()
    .map((f) => ({ id: f.replace(/\.json$/, ""), tools: toToolDescriptors((JSON.parse(readFileSync(join(mcpCatalogDir, f), "utf8")) as { tools: unknown[] }).tools) }));
}

export const seedListing5Path = join(dirname(fileURLToPath(import.meta.url)), "..", "fixtures", "seed-listing5.json");

/** Seed 000, Listing 5, as written (`parameters`). */
export function seedListing5(): ToolDescriptor[] {
  return toToolDescriptors((JSON.parse(readFileSync(seedListing5Path, "utf8")) as { tools: unknown[] }).tools);
}
