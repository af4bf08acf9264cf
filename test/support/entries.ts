/**
 * The package's entry points as package.json "exports" lists them: the subpath, the name a user
 * imports (`toolgate`, `toolgate/stores`, …) and the source file it is built from.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { projectRoot } from "./require.js";

export interface EntryPoint {
  subpath: string;
  name: string;
  source: string;
}

export const packageJson = JSON.parse(readFileSync(join(projectRoot, "package.json"), "utf8")) as {
  name: string;
  exports: Record<string, unknown>;
  engines: { node: string };
  files: string[];
};

export const entryPoints: EntryPoint[] = Object.keys(packageJson.exports)
  .filter((k) => k !== "./package.json")
  .map((k) => ({
    subpath: k,
    name: k === "." ? packageJson.name : `${packageJson.name}/${k.slice(2)}`,
    source: k === "." ? "src/index.ts" : `src/entries/${k.slice(2)}.ts`,
  }));
