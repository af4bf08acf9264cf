/** Scratch files and sequential runs for the command tests that read files (breakeven, cost, export). */
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { cli } from "../../support/cli.js";

/** A fresh temporary folder and a writer of files in it. */
export function scratch(prefix: string): { dir: string; file: (name: string, text: string) => string } {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  const file = (name: string, text: string) => {
    const path = join(dir, name);
    writeFileSync(path, text);
    return path;
  };
  return { dir, file };
}

/** test/cli/fixtures/catalog-module.ts: a user's module of defineTool results for `--catalog`. */
export const catalogModulePath = join(dirname(fileURLToPath(import.meta.url)), "..", "fixtures", "catalog-module.ts");

/** Runs several command lines one after another (the capture spies stdout, so never in parallel). */
export async function each(...argvs: string[][]): Promise<{ code: number; out: string; err: string }[]> {
  const results = [];
  for (const argv of argvs) results.push(await cli(...argv));
  return results;
}
