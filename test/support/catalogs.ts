/** The real catalogs in ../shared/testdata/mcp-catalogs and the reference four-tool listing, as ToolDescriptors. */
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { toToolDescriptors, type ToolDescriptor } from "../../src/schema/descriptor.js";
import { testdataDir } from "./require.js";

export const mcpCatalogDir = join(testdataDir, "mcp-catalogs");

export function mcpCatalogs(): { id: string; tools: ToolDescriptor[] }[] {
  return readdirSync(mcpCatalogDir)
    .filter((f) => f.endsWith(".json"))
    .sort()
    .map((f) => ({
      id: f.replace(/\.json$/, ""),
      tools: toToolDescriptors(
        (JSON.parse(readFileSync(join(mcpCatalogDir, f), "utf8")) as { tools: unknown[] }).tools,
      ),
    }));
}

/** The linter's fixture of the four coding tools as published (test/schema/fixtures), shared so the listing is written
 * once. */
export const seedListing5Path = join(
  dirname(fileURLToPath(import.meta.url)),
  "..",
  "schema",
  "fixtures",
  "seed-listing-5.json",
);

/** That listing as written (`parameters`). */
export function seedListing5(): ToolDescriptor[] {
  return toToolDescriptors((JSON.parse(readFileSync(seedListing5Path, "utf8")) as { tools: unknown[] }).tools);
}
